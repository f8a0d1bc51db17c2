// suites/verdict/bound.hpp — the error-bound model: the gate every case is judged against.
//
// Each error source is a term with a growth law (DESIGN.md, "Bound model"):
//   input storage rounding of A and B: u_s each (0 when the inputs are representable), ~sqrt(K);
//   product rounding: u_p (0 for exact products), ~sqrt(K);
//   accumulation: u_acc ~sqrt(K) (round-to-nearest) or ~K (truncation: its errors do not cancel);
//     with promotion every N products, u_low over N and the promoted format's u over K/N;
//   output rounding u_out, once (when the output is narrower than the accumulator).
// Variants:
//   independent   rtol = max(floor, 4 * (sqrt(K)*(u_sA + u_sB + u_p) + acc) + u_out), floor = 2^-frac(out),
//                 atol = rtol * max|ref|; pass iff |c - ref| <= atol + rtol * |ref|. With fp16
//                 storage this is the reference course's gate, rtol = 4 * eps * sqrt(K): 0.0625,
//                 0.125, 0.177 at K = 256, 1024, 2048. 4 is the slack for any valid summation order.
//   componentwise |c - ref| <= rtol * (|A||B|)_ij + u_out |ref|, same rtol without the floor: stays
//                 meaningful under cancellation, where |ref| << (|A||B|)_ij.
//   worstcase     |c - ref| <= [(1+u_sA)(1+u_sB)(1+u_p)(1+gamma_acc) - 1] (|A||B|)_ij + u_out |ref|,
// Every variant adds the underflow terms (eta_s/2) sum_k |b_kj| + (eta_s/2) sum_k |a_ik| for
// inputs that round into a storage format's subnormals, and K eta_acc/2 + eta_out/2 for roundings
// in the accumulator's and output's subnormal range (fl(x) = x(1 + d) + e, |e| <= eta/2; Higham §2.1).
//                 gamma_K = K u / (1 - K u) (Higham, Accuracy and Stability, 2nd ed., Lemma 3.1 and
//                 eq. 3.5): rigorous for recursive summation in any order; vacuous when K u >= 1.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/kernel.hpp"
#include "results/results.hpp"

namespace fpcert {


struct BoundInputs {
  const KernelTraits* traits = nullptr;
  std::int64_t k = 0;
  bool a_exact = false;   ///< every A input is exactly representable in A's storage: no storage term
  bool b_exact = false;
  double ref_max_abs = 0;
  double slack = 4;       ///< the constant in front of the probabilistic terms
};

Bound make_bound(BoundVariant v, const BoundInputs& in);

/// The error allowed for one element with reference magnitude |ref|, (|A||B|)_ij = abs_sum,
/// sum_k |a_ik| = row_abs_a and sum_k |b_kj| = col_abs_b (the last two for the underflow terms).
inline double allowed_error(const Bound& b, double ref_abs, double abs_sum, double row_abs_a = 0, double col_abs_b = 0) {
  if (b.vacuous) return INFINITY;  // no rigorous bound exists: nothing to exceed
  const double eta = b.eta_a * col_abs_b + b.eta_b * row_abs_a + b.eta_abs;
  if (b.variant == BoundVariant::Independent) return b.atol + b.rtol * ref_abs + eta;
  return b.rtol * abs_sum + b.out_term * ref_abs + eta;
}

/// "2^-11" for powers of two, else a short decimal.
std::string pow2_text(double v);
/// The narrowest precision a value passes through on its way in: min over input and operand format.
const Format& storage_format(const Format& input, const Format& operand);

/// Why the alpha/beta graders (suites/ops/gemm/alpha_beta.hpp) cannot take this kernel's D = alpha AB + beta C (empty:
/// they can): the kernel does not declare it, its operands are block-scaled, or a format is wider than 26 bits (alpha a
/// and beta c must be exact in double). The runner declines such cases; the mutation catalogue's faults of beta read it.
std::string alpha_beta_unsupported(const KernelTraits& t);

}  // namespace fpcert
