// generators/softmax_bwd/softmax_bwd.hpp — how a softmax backward problem sits in a Problem (family `softmax_bwd`,
// generators/softmax_bwd/softmax_bwd.cpp; docs/backward.md, "Softmax and log-softmax backward"): A holds the rows x cols saved forward
// output y (the correctly rounded softmax or log-softmax of generated logits in the source format: a real forward
// output), B the incoming gradient dy transposed (cols x rows, exact in the source format), so the Problem keeps a GEMM's
// shapes; the function in achieved["softmax_bwd_log"] (0 softmax, 1 log-softmax), the forward's scale (an fp32 value) in
// achieved["softmax_bwd_scale"].
#pragma once

#include <cstdint>

#include "generators/problem.hpp"
#include "oracle/softmax/softmax_ref.hpp"

namespace fpcert {

/// True for a problem of the `softmax_bwd` family.
bool is_softmax_bwd_problem(const Problem& p);
/// Its rows and columns (std::invalid_argument for any other problem).
std::int64_t softmax_bwd_rows(const Problem& p);
std::int64_t softmax_bwd_cols(const Problem& p);
/// Softmax or log-softmax (what y is the output of).
SoftmaxFn softmax_bwd_fn(const Problem& p);
/// The forward's scale s (an fp32 value): dx is the gradient with respect to x of softmax(s x + mask).
double softmax_bwd_scale(const Problem& p);
/// y (r, j) and dy (r, j).
inline double softmax_bwd_y(const Problem& p, std::int64_t r, std::int64_t j) { return p.a(r, j); }
inline double softmax_bwd_dy(const Problem& p, std::int64_t r, std::int64_t j) { return p.b(j, r); }

}  // namespace fpcert
