// generators/norm/norm_bwd.hpp — how a LayerNorm / RMSNorm backward problem sits in a Problem (family `norm_bwd`,
// generators/norm/norm_bwd.cpp; docs/backward.md, "LayerNorm and RMSNorm backward"): A holds x in rows 0 .. rows-1 and
// dy in rows rows .. 2 rows-1 (cols entries each, exact in the source format), B (cols x 1) gamma (1 when absent); eps
// (an fp32 value) in achieved["norm_eps"]. The statistics a forward saves are not stored: the runner computes them
// from x as a forward would save them (norm_saved_stats: the correctly rounded fp32 mean and rstd, oracle/norm/norm_bwd_ref.hpp).
#pragma once

#include <cstdint>

#include "generators/problem.hpp"

namespace fpcert {

bool is_norm_bwd_problem(const Problem& p);
std::int64_t norm_bwd_rows(const Problem& p);  ///< std::invalid_argument for another problem
std::int64_t norm_bwd_cols(const Problem& p);
double norm_bwd_eps(const Problem& p);
bool norm_bwd_has_gamma(const Problem& p);
inline double norm_bwd_x(const Problem& p, std::int64_t r, std::int64_t j) { return p.a(r, j); }
inline double norm_bwd_dy(const Problem& p, std::int64_t r, std::int64_t j) { return p.a(p.a.rows / 2 + r, j); }
inline double norm_bwd_gamma(const Problem& p, std::int64_t j) { return p.b(j, 0); }

}  // namespace fpcert
