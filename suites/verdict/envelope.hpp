// suites/verdict/envelope.hpp — the envelope verdict tier: a rigorous per-element error bound from the declared
// formats, the declared order class and the case's actual data (docs/bound_model.md, "The envelope").
//
// For element (i, j), with ref' the exact product of the inputs as the kernel receives them (the case's
// values rounded into its input formats) and abs' = sum_k |a'_ik b'_kj|:
//   |c_ij - ref'_ij| <= allowed_ij = E_ij + u_out (|ref'_ij| + E_ij) + eta_out
//   E_ij = coef abs'_ij + eta terms            coef = (1 + u_op)^2 (1 + u_A)(1 + u_B) (1 + u_p) (1 + s g_order) - 1
// The storage error (ref' - ref, fpcert's rounding of the case into the input formats) is measured
// exactly by the oracle, so it is a shift of the envelope's centre, not an allowance. u_A, u_B: the kernel's
// own narrowing into operand formats; u_op, s: split operands; g_order the accumulator's growth for the
// actual K and the declared order class (gamma_d(u) = d u / (1 - d u) with d the roundings a product
// passes through; tensor-core blocks with alignment truncation; unknown orders: the worst valid order,
// tensor-core blocks included), eta the underflow terms (each rounding into a format f may add eta_f / 2,
// eta_f when directed, eta_f f's smallest positive value). A case is vacuous when every element's
// allowance covers |ref'_ij| (an all-zeros output would pass): it is no evidence.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/results.hpp"

namespace fpcert {

struct GradeInput;         // suites/verdict/grade.hpp
struct OrderFreeElements;  // suites/verdict/order_free.hpp

struct EnvelopeModel {
  double coef = 0;        ///< of abs'_ij: operands, products and accumulation together
  double eta_arith = 0;   ///< absolute: underflow of the products, the accumulation and the promotion
  double out_unit = 0;    ///< unit roundoff of the output rounding (0: the output is the final format)
  double eta_out = 0;     ///< absolute: underflow of the output rounding
  double depth = 0;       ///< roundings a product passes through in the accumulation (the d of gamma_d)
  double step_unit = 0;   ///< the unit roundoff of one of those roundings
  double u_oa = 0;        ///< the kernel's narrowing of A into its operand format (tf32, an fp16 cast): unit
  double u_ob = 0;        ///< likewise for B
  double eta_a = 0;       ///< absolute error per A operand below the operand (or slice) format's normal range, times sum_k |b_kj|
  double eta_b = 0;       ///< likewise, times sum_k |a_ik|
  bool exists = true;     ///< false: gamma_d does not exist (d u >= 1); every output is allowed
  /// An upper bound on |s| / sum |a'_k b'_k| for every partial sum s (and the result) that a valid order of the
  /// declared arithmetic forms: each rounding grows a magnitude by at most (1 + its unit), so the product of
  /// (1 + unit) over every rounding a product passes through. Always finite (unlike gamma_d): it decides whether
  /// a partial sum can overflow (docs/suites.md, "values.special").
  double growth = 1;
  Bound bound;            ///< the same, printable (variant "envelope")
  /// Exact sums (docs/bound_model.md, "Exact sums"): w > 0 when every rounding of the declared arithmetic keeps w
  /// significant bits at least (the accumulator's precision, the promotion format's, a tensor-core card's alignment
  /// bits and block result), products exact and operands not narrowed. Then for products on a grid 2^q (q >=
  /// exact_min_exp) with sum_k |a'_k b'_k| < 2^(q + w) and below exact_limit, every partial sum any valid order forms
  /// is a multiple of 2^q of magnitude below 2^(q + w): representable, no rounding, no alignment loss; the
  /// accumulation is exact and E_ij = 0. 0: the rule does not apply (an unusable card, split or block-scaled operands).
  int exact_bits = 0;
  int exact_min_exp = 0;    ///< the smallest grid exponent the accumulator and promotion formats hold (their subnormals')
  double exact_limit = 0;   ///< their smallest largest-finite value
};

/// The exponent of the lowest set bit of a finite nonzero double (v = odd integer x 2^result).
int lsb_exponent(double v);
/// The grid exponent of each line of an m x k (A, rows) or k x n (B, columns; by_columns) row-major matrix: the
/// smallest lsb_exponent of its nonzero entries (INT_MAX when none; INT_MIN when a non-finite value is there).
std::vector<int> line_grid_exponents(const std::vector<double>& v, std::int64_t rows, std::int64_t cols, bool by_columns);
/// Whether the element's accumulation is exact under the model's exact-sum rule: abs_op = sum_k |a'_k b'_k|, q the
/// grid exponent of its products (the row's plus the column's).
bool exact_accumulation(const EnvelopeModel& e, double abs_op, long q);

/// The model of a kernel's declared arithmetic at depth K.
EnvelopeModel make_envelope(const KernelTraits& t, std::int64_t k);

/// allowed_ij (of |c - ref'|) from the model and the element's data (|ref'|, abs', and sum_k |a_ik|, sum_k
/// |b_kj| for the operands' absolute terms). Rounded upward enough to cover the double arithmetic.
double envelope_allowed(const EnvelopeModel& e, double ref_op_abs, double abs_op, double row_abs_a = 0, double col_abs_b = 0);
/// Beyond the range of an output format without Inf (e4m3), NVIDIA's FP8 conversions overflow to NaN or saturate to the
/// largest finite value of the exact result's sign (__NV_SATFINITE; cuBLASLt's FP8 D): both are round to nearest's
/// overflow there. True for the saturated case (`got` finite), which the GEMM and epilogue graders do not grade further.
bool saturated_overflow(const Format& out, double exact, double got);

/// |c - exact| measured from below: |(got - hi) - lo| in double (two roundings, within 2^-52 of it) and the reference's
/// tail (hi + lo is within 2^-53 |lo| of the exact value): shrunk by 2^-50 relative and |lo| 2^-52 it never exceeds the
/// truth, so a bound it exceeds is exceeded.
inline double error_from_below(double got, const RefValue& r) {
  return std::max(0.0, std::fabs((got - r.hi) - r.lo) * (1 - 0x1p-50) - std::fabs(r.lo) * 0x1p-52);
}

/// Sums of magnitudes beyond double's range (docs/fp64.md, "Sums beyond double's range"). With fp64 inputs near their
/// largest finite values, sum_k |a_ik b_kj| reaches K 2^2048 and sum_k |a_ik| K 2^1024: in double they are +Inf, and an
/// allowance built on them would admit any finite output. For every element whose exact result is finite while one of
/// its sums overflows double, WideSums holds its sums again scaled by 2^-shift, the element's own power of two that
/// brings the largest of them near 2^1000 (each an upper bound: the K scaled products and sums each within a relative
/// 2^-53 or an absolute 2^-1075, covered), and wide_fraction grades it in that scale. Empty (one pass over the inputs)
/// where no sum can overflow.
struct WideSums {
  struct Sums {
    int shift = 0;         ///< the element's scale: every value below is times 2^-shift
    double abs_sum = 0;    ///< sum_k |a_ik b_kj|, upper bound
    double row_abs_a = 0;  ///< sum_k |a_ik|, upper bound
    double col_abs_b = 0;  ///< sum_k |b_kj|, upper bound
  };
  std::vector<std::int64_t> index;  ///< the elements (i n + j), ascending
  std::vector<Sums> sums;
  const Sums* find(std::int64_t x) const {
    const auto it = std::lower_bound(index.begin(), index.end(), x);
    return it != index.end() && *it == x ? &sums[static_cast<std::size_t>(it - index.begin())] : nullptr;
  }
  bool empty() const { return index.empty(); }
};
/// The elements of C = A B (a: m x k, b: k x n, row-major; ref their exact product) whose reference is finite while
/// sum_k |a_ik b_kj|, sum_k |a_ik| or sum_k |b_kj| overflows double.
WideSums wide_sums(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmRef& ref);
/// One element of a WideSums graded in its scale: frac = |got - ref| / allowed, `allowed` the tier's allowance there.
struct WideGrade {
  double frac = 0;
  double allowed = 0;  ///< times 2^-shift
};
/// wide_allowed: the tier's allowance in the scale 2^-shift. `allowed(ref_abs, abs_sum, row_abs_a, col_abs_b)` is the
/// tier's allowance: every allowance fpcert grades with is non-negative constants (the underflow terms; c =
/// allowed(0, 0, 0, 0)) plus terms linear in those four, so in the scale 2^-shift it is allowed(scaled) - c + c 2^-shift
/// (the difference rounded up). wide_fraction measures the error from below as error_from_below, less 2^-1072 for the
/// scaled reference's bits lost below double's range (2^(shift - 1072) unscaled, with shift at most about 1030 where
/// sum |a b| is near K 2^2048), and calls `allowed` twice as wide_allowed does.
template <class Allowed>
double wide_allowed(const RefValue& r, const WideSums::Sums& w, Allowed&& allowed) {
  const double c = allowed(0.0, 0.0, 0.0, 0.0);
  if (std::isinf(c)) return c;
  return std::max(0.0, allowed(std::fabs(std::ldexp(r.hi, -w.shift)), w.abs_sum, w.row_abs_a, w.col_abs_b) - c) * (1 + 0x1p-50) +
         std::ldexp(c, -w.shift);
}
template <class Allowed>
WideGrade wide_fraction(double got, const RefValue& r, const WideSums::Sums& w, Allowed&& allowed) {
  const int s = -w.shift;
  const RefValue rs{std::ldexp(r.hi, s), std::ldexp(r.lo, s), r.tail};
  WideGrade g;
  g.allowed = wide_allowed(r, w, allowed);
  const double err = std::max(0.0, error_from_below(std::ldexp(got, s), rs) - 0x1p-1072);
  g.frac = err == 0 ? 0 : g.allowed > 0 ? err / g.allowed : INFINITY;
  return g;
}

/// The envelope over a case: each finite element of the output (codes of `out`, row-major m x n) against
/// allowed_ij around ref'_ij (ref_op: the exact product of the kernel's inputs; row_abs_a, col_abs_b: sum_k
/// |a_ik| per row, sum_k |b_kj| per column of them). Elements whose output or reference is not finite are
/// left to the special-value checks.
struct EnvelopeVerdict {
  double worst = 0;              ///< max |c - ref'| / allowed
  std::int64_t worst_index = -1;
  std::int64_t exceed = 0;       ///< elements beyond their allowance
  std::int64_t graded = 0;       ///< elements judged
  std::int64_t admit_zero = 0;   ///< elements whose allowance covers |ref'| (an output of 0 would pass)
  bool vacuous() const { return graded > 0 && admit_zero == graded; }
};
/// With `fracs`, it also receives every element's |c - ref'| / allowed (row-major m x n): NaN where the element is not
/// graded (a non-finite reference, or a non-finite output where the reference overflows the output format), +inf for
/// a non-finite output where the reference is finite in the output format. With `wide` (wide_sums of the same inputs),
/// its elements are graded in its scale (their sums in ref_op, row_abs_a and col_abs_b overflow double).
EnvelopeVerdict evaluate_envelope(const EnvelopeModel& e, const Format& out, std::int64_t m, std::int64_t n, const GemmRef& ref_op,
                                  const std::vector<std::uint64_t>& codes, const std::vector<double>& row_abs_a,
                                  const std::vector<double>& col_abs_b, std::vector<double>* fracs = nullptr,
                                  const WideSums* wide = nullptr);

/// The smallest largest-finite value among the formats a kernel's sums pass through (accumulator, rounded products,
/// promotion, output): a partial sum or result below it in magnitude cannot overflow.
double overflow_limit(const KernelTraits& t);

/// Equal bit for bit (a NaN equals a NaN of the same bits, unlike ==): whether the inputs a kernel received are the
/// case's own values (then the case's reference is ref').
bool same_bits(const std::vector<double>& x, const std::vector<double>& y);

/// Whether a partial sum of element x = i n + j can overflow toward +Inf (pos) and toward -Inf (neg) in some valid
/// order of the declared arithmetic: the positive (negative) finite products of the kernel's inputs a (m x k) and
/// b (k x n), summed in magnitude and times the envelope's growth, reach the overflow limit (docs/suites.md,
/// "values.special"). Infinite and NaN products are left out: they decide the result by IEEE's rules, not by overflow.
struct OverflowReach {
  bool pos = false, neg = false;
  /// Whether a non-finite output of a finite exact result is one a valid order may give: the infinity of a sign some
  /// partial sum can reach, or NaN where both can.
  bool explains(bool nan, bool negative) const { return nan ? pos && neg : negative ? neg : pos; }
};
OverflowReach overflow_reach(const std::vector<double>& a, const std::vector<double>& b, std::int64_t n, std::int64_t k, std::int64_t x,
                             double growth, double limit);

/// The kernel's own error sources (not fpcert's rounding of the inputs into their formats): operand
/// narrowing of A / B, split operands, product rounding, accumulation, promotion, output rounding.
std::vector<std::string> error_sources(const KernelTraits& t);

/// What two runs of a kernel declaring run-to-run nondeterminism may differ by, per element (docs/bound_model.md,
/// "Nondeterministic kernels"): for split-K with an atomic combine into the output format, 2 gamma_{S-1}(u_acc)
/// (growth abs'_ij + eta_arith) (the partials are the same in every run, only their arrival order changes); for any
/// other order family (unknown), twice the envelope's allowance (each run lies within it of ref').
struct SpreadModel {
  EnvelopeModel env;
  bool atomic = false;  ///< the split-K atomic bound applies
  double coef = 0;      ///< 2 gamma_{S-1}(u)
  std::string text;     ///< the derivation, printed with the figures
};
SpreadModel make_spread_model(const KernelTraits& t, std::int64_t k);
double spread_allowed(const SpreadModel& s, double ref_op_abs, double abs_op, double row_abs_a = 0, double col_abs_b = 0);

/// What grade derived for the checked run that the later runs are judged with too: the inputs as the kernel
/// received them, ref' their exact product, sum_k |a'_ik| per row and sum_k |b'_kj| per column (where the envelope
/// has operand terms; zeros otherwise), the order-free elements (none where the strongest tier asked for is weaker), the
/// elements whose sums overflow double.
struct CheckedRunBasis {
  const std::vector<double>& a_in;
  const std::vector<double>& b_in;
  const GemmRef& rop;
  const std::vector<double>& row_in;
  const std::vector<double>& col_in;
  const OrderFreeElements& free;
  const WideSums& wide;  ///< wide_sums of a_in, b_in and rop
};

/// The later runs of a kernel declaring run-to-run nondeterminism (in.later, in.runs, in.differing_runs), judged by
/// grade after the checked run (in.codes, in.traits with the installed cards): each distinct later output judged on
/// its own by the envelope (a check of kind envelope), its order-free elements held to their one value, and its
/// difference from the checked run to what two admissible orders of the declared arithmetic allow (the check of kind
/// spread). Fills out.spread; grade decides the case's status from its checks afterwards.
void envelope_later_runs(const GradeInput& in, const CheckedRunBasis& basis, CaseResult& out);

}  // namespace fpcert
