// generators/norm/norm.hpp — how a LayerNorm / RMSNorm problem sits in a Problem (family `norm`, generators/norm/norm.cpp;
// docs/generators.md, "Normalisation"; docs/normalization.md): A holds the rows x cols inputs (exact in the source
// format), B (cols x 2) gamma in column 0 and beta in column 1 (exact in the source format); eps (an fp32 value) in
// achieved["norm_eps"], whether gamma and beta are given in achieved["norm_gamma"], achieved["norm_beta"].
#pragma once

#include <cstdint>

#include "generators/problem.hpp"

namespace fpcert {

bool is_norm_problem(const Problem& p);
std::int64_t norm_rows(const Problem& p);  ///< std::invalid_argument for another problem
std::int64_t norm_cols(const Problem& p);
double norm_eps(const Problem& p);
bool norm_has_gamma(const Problem& p);
bool norm_has_beta(const Problem& p);
inline double norm_x(const Problem& p, std::int64_t r, std::int64_t j) { return p.a(r, j); }
inline double norm_gamma(const Problem& p, std::int64_t j) { return p.b(j, 0); }
inline double norm_beta(const Problem& p, std::int64_t j) { return p.b(j, 1); }

}  // namespace fpcert
