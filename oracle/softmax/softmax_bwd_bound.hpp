// oracle/softmax/softmax_bwd_bound.hpp — the per-element error bound of a softmax or log-softmax backward kernel from its
// declared arithmetic (docs/backward.md, "Softmax and log-softmax backward", "Bound"): the row's dot D = sum dy_k y_k
// (log-softmax: G = sum dy_k) accumulated in any order the declaration admits, gamma_h times sum |dy_k y_k| (Higham
// 2002, Lemma 3.1 and section 3.1: h the most roundings a term passes, the product's own rounding included unless it is
// fused), the rounding of dy_j - D, the product by y_j and by the scale s (log-softmax: e^{y_j} with its documented
// error as Blanchard, Higham and Higham 2021 carry exp's error, its product by G, the difference and the scale), each
// rounding u |result| plus half the least subnormal where the result can be subnormal, and the output rounding once.
// The bound is the exact sum of those contributions (no first-order truncation); its terms are printed beside it.
#pragma once

#include <cstddef>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/softmax/softmax_bound.hpp"

namespace fpcert {

/// The declared arithmetic of a softmax backward kernel (what the bound reads; kernels/softmax/
/// softmax_backward_kernel.hpp's SoftmaxBwdTraits carries it).
struct SoftmaxBwdArith {
  SoftmaxFn fn = SoftmaxFn::Softmax;
  const Format* compute = &f32;  ///< every operation but D's accumulation, nearest even
  const Format* dot_acc = &f32;  ///< D's (G's) accumulator, nearest even
  ReduceOrder dot_order = ReduceOrder::unknown();
  bool fma = false;              ///< softmax: D's products fused into the sum
  ElemFnError exp;               ///< log-softmax: e^{y_j} in the compute format
  const Format* out = &f32;
  bool expanded = false;         ///< softmax: fl(fl(dy_j y_j) - fl(y_j D)) (the second product may be fused) for y_j (dy_j - D)
  const Format* prod = nullptr;  ///< expanded: the format dy_j y_j is rounded into first (D sums those); null: compute
};

/// The bound on |computed - exact| of every element of one row of y and dy (values of the kernel's input formats) under
/// scale s: +Inf where it does not apply (a row with NaN or Inf, judged as special values), 0 for the special entries
/// whose value is exact (softmax y_j = 0, masked log-softmax entries).
void softmax_bwd_row_bound(const SoftmaxBwdArith& a, const double* y, const double* dy, std::size_t n, double scale, double* bound);

/// The same bound for element i, term by term, with the total last.
std::vector<SoftmaxBoundTerm> softmax_bwd_bound_terms(const SoftmaxBwdArith& a, const double* y, const double* dy, std::size_t n,
                                                      double scale, std::size_t i);

}  // namespace fpcert
