// oracle/reduce/reduce_bound.hpp — rigorous per-element error bounds of a reduction computed in a declared
// order (or in any order), returned term by term so that a verdict can print them (docs/reductions.md,
// "Bounds", derives each term and names its source).
//
// The model: the terms t_i (x_i, x_i y_i or x_i^2), every rounding into the accumulator with relative
// error at most u (2^-p for the nearest modes, 2^(1-p) for the directed and stochastic ones) or, where a
// rounding can land in the subnormal range, an absolute error of at most eta; h the most roundings any
// term passes on its way to the result (its product's rounding included). Then (Higham 2002, Lemma 3.1
// and §4.2) |s_acc - s| <= gamma_h sum|t_i| + (roundings that can underflow) eta (1 + gamma_h), with
// gamma_h = h u / (1 - h u); the output rounding adds u_out (|s| + that) + eta_out. nrm2 carries the
// sum of squares' error through the square root. Inputs are values of the accumulator format (the
// runner's storage terms cover a conversion into it), and no partial result overflows (`overflow_free`
// says whether the data guarantee that; if not, the bound does not apply: the unscaled nrm2 trap).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/reduce/reduce_order.hpp"
#include "oracle/reduce/reduce_ref.hpp"

namespace fpcert {

/// One error source: its contribution to the bound on |computed - exact|, in the result's units.
struct ReduceBoundTerm {
  std::string name;    ///< "accumulation (f32, rn)", "underflow (f32)", "output rounding (f16, rn)", ...
  double value = 0;    ///< absolute contribution
  std::string law;     ///< the growth law with its numbers: "gamma_h sum|t_i|, h = n - 1 = 1023: 6.1e-05 * 3.2 = ..."
  std::string source;  ///< where the inequality comes from
};

struct ReduceBound {
  std::vector<ReduceBoundTerm> terms;
  double total = 0;          ///< sum of the terms' values: |computed - exact| <= total (when applicable)
  int depth = 0;             ///< h: the most roundings a term passes
  double u = 0;              ///< the accumulator's unit roundoff under its rounding mode
  double gamma = 0;          ///< gamma_h (+Inf when h u >= 1)
  /// False when the bound says nothing: a non-finite input or reference, or h u >= 1 (gamma undefined).
  bool applicable = true;
  /// The data keep every partial result and the output finite: (1 + gamma_h) sum|t_i| within the
  /// accumulator's largest finite value (and the result within the output's). False: an overflow is possible
  /// and the bound does not cover it (unscaled nrm2 on data whose squares pass the accumulator's range).
  bool overflow_free = true;
  std::string assumption;    ///< the conditions, with their numbers
};

/// Unit roundoff of a format under a rounding mode: 2^-p (NearestEven, NearestAway), 2^(1-p) otherwise.
double unit_roundoff(const Format& f, Rounding r);
/// The largest absolute error of one rounding into f's subnormal range: half the smallest subnormal
/// (nearest modes), the smallest subnormal (otherwise).
double underflow_eta(const Format& f, Rounding r);
/// gamma_h = h u / (1 - h u); +Inf when h u >= 1.
double gamma_of(int h, double u);
/// Every value of `inner` is a value of `outer` (then rounding from inner into outer is exact).
bool format_holds(const Format& outer, const Format& inner);

/// h for n terms in `order` (docs/reductions.md, "Bounds", the table): sequential and unknown n - 1, pairwise
/// ceil(log2 n), blocked (min(B, n) - 1) + (ceil(n/B) - 1), warp tree (ceil(n/L) - 1) + log2 L; plus one for
/// an exact product rounded alone (a dot's or nrm2's chain start or pairwise leaf) and one for a rounded
/// product. n = 0 gives 0.
int rounding_depth(ReduceKind kind, std::size_t n, const ReduceOrder& order, ProductRounding products);
/// The same, as the formula with its numbers ("h = (B - 1) + (ceil(n/B) - 1) = 255 + 3 = 258").
std::string depth_formula(ReduceKind kind, std::size_t n, const ReduceOrder& order, ProductRounding products);

/// The bound on |R_out(computed) - exact| for a reduction of n terms whose exact reference is `ref`
/// (its abs_sum is sum|t_i|, rounded upward), computed in `order` with `arith`, then rounded into `out`
/// with `out_rounder` (exact, hence no term, when `out` holds every value of the accumulator).
ReduceBound reduce_bound(ReduceKind kind, std::size_t n, const ReduceOrder& order, const ReduceArith& arith,
                         const Format& out, const Rounder& out_rounder, const ReduceRef& ref);

/// The bound as text, one term a line with its law and source, then the total (what a verdict prints).
std::string to_text(const ReduceBound& b);

}  // namespace fpcert
