// oracle/reduce/reduce_bound.cpp — the terms of a reduction's error bound (reduce_bound.hpp; the derivations
// are in docs/reductions.md, "Bounds").
//
// The bound's own arithmetic is double: each term is a product of a few positive doubles, within a few ulps
// (relative 2^-50) of its exact value, far below the slack of gamma_h (whose first-order part alone
// exceeds the true error of most data by orders of magnitude); the tests hold it against the emulations.
#include "oracle/reduce/reduce_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace fpcert {
namespace {

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

int ceil_log2(std::size_t n) {
  int k = 0;
  while ((std::size_t{1} << k) < n) ++k;
  return k;
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// The most roundings a term passes in NumPy's pairwise_sum of n terms (reduce_order.hpp), r0 = 1 when a term
/// standing alone (an exact product as an accumulator's first value, or added to the +0 of the short loop) is
/// rounded: the short loop n - 1 + r0; the blocked one r0 + (m - 1) + 3 + (n mod 8), m = n div 8 terms per
/// accumulator, 3 combining levels, then the leftovers; above 128 one more addition than the deeper half.
int numpy_depth(std::size_t n, int r0) {
  if (n == 0) return 0;
  if (n < 8) return static_cast<int>(n) - 1 + r0;
  if (n <= 128) return r0 + static_cast<int>(n / 8 - 1) + 3 + static_cast<int>(n % 8);
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return 1 + std::max(numpy_depth(n2, r0), numpy_depth(n - n2, r0));
}

/// Roundings a term passes besides the additions: r0 (an exact product rounded alone: at a chain's start,
/// R(+0 + p) or R(p), or at a pairwise leaf) and one for a product rounded before it is added.
int extra_roundings(ReduceKind kind, ProductRounding products, int& r0) {
  const bool has_products = kind != ReduceKind::Sum;
  r0 = has_products && products == ProductRounding::Exact ? 1 : 0;
  return has_products && products == ProductRounding::Rounded ? 1 : 0;
}

constexpr const char* kSrcGamma =
    "Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. (2002), Lemma 3.1 (prod (1 + delta_i)^(+-1) = "
    "1 + theta_h, |theta_h| <= gamma_h) applied to each term's path through the tree of additions, as in §4.2 "
    "(summation in any order) and §3.1 (inner products)";

std::string order_source(const ReduceOrder& o) {
  switch (o.kind) {
    case ReduceOrderKind::Unknown:
    case ReduceOrderKind::Sequential: return std::string(kSrcGamma) + "; recursive summation: gamma_{n-1} (Higham §4.2)";
    case ReduceOrderKind::Pairwise: return std::string(kSrcGamma) + "; pairwise summation: gamma_{ceil(log2 n)} (Higham §4.2)";
    case ReduceOrderKind::Blocked:
      return std::string(kSrcGamma) + "; blocked summation: (b - 1) + (n/b - 1) roundings (Blanchard, Higham, Mary, "
                                      "A class of fast and accurate summation algorithms, SIAM J. Sci. Comput. 42(3), 2020)";
    case ReduceOrderKind::WarpTree:
      return std::string(kSrcGamma) + "; warp tree: a lane's chain then log2 L butterfly levels (docs/reductions.md)";
    case ReduceOrderKind::BlockTree:
      return std::string(kSrcGamma) + "; block tree: a thread's chain, its warp's butterfly, the warps' combination "
                                      "(docs/reductions.md)";
    case ReduceOrderKind::NumpyPairwise:
      return std::string(kSrcGamma) + "; NumPy's pairwise_sum: the depth of its tree (docs/reductions.md, \"NumPy\")";
  }
  return kSrcGamma;
}

}  // namespace

double unit_roundoff(const Format& f, Rounding r) {
  const bool nearest = r == Rounding::NearestEven || r == Rounding::NearestAway;
  return std::ldexp(1.0, nearest ? -f.precision() : 1 - f.precision());
}

double underflow_eta(const Format& f, Rounding r) {
  const bool nearest = r == Rounding::NearestEven || r == Rounding::NearestAway;
  return nearest ? f.min_subnormal() / 2 : f.min_subnormal();
}

double gamma_of(int h, double u) {
  const double hu = static_cast<double>(h) * u;
  return hu >= 1 ? INFINITY : hu / (1 - hu);
}

bool format_holds(const Format& outer, const Format& inner) {
  if (outer == inner) return true;
  return outer.precision() >= inner.precision() && outer.max_finite() >= inner.max_finite() &&
         outer.min_subnormal() <= inner.min_subnormal() && (outer.is_signed() || !inner.is_signed());
}

int rounding_depth(ReduceKind kind, std::size_t n, const ReduceOrder& o, ProductRounding products) {
  if (n == 0) return 0;
  int r0 = 0;
  const int prod = extra_roundings(kind, products, r0);
  const int N = static_cast<int>(n);
  switch (o.kind) {
    case ReduceOrderKind::Unknown:
    case ReduceOrderKind::Sequential: return (N - 1) + r0 + prod;
    case ReduceOrderKind::Pairwise: return ceil_log2(n) + r0 + prod;
    case ReduceOrderKind::Blocked: {
      const std::size_t B = static_cast<std::size_t>(std::max(o.block, 1));
      return static_cast<int>(std::min(B, n) - 1 + r0) + static_cast<int>(ceil_div(n, B) - 1) + prod;
    }
    case ReduceOrderKind::WarpTree: {
      const std::size_t L = static_cast<std::size_t>(std::max(o.lanes, 1));
      return static_cast<int>(ceil_div(n, L) - 1 + r0) + ceil_log2(L) + prod;
    }
    case ReduceOrderKind::BlockTree: {
      // A thread's chain, its warp's butterfly, then the warps' combination.
      const std::size_t L = static_cast<std::size_t>(std::max(o.lanes, 1)), W = static_cast<std::size_t>(std::max(o.block, 1));
      const int outer = o.warps == WarpCombine::Sequential ? static_cast<int>(W) - 1 : ceil_log2(L);
      return static_cast<int>(ceil_div(n, L * W) - 1 + r0) + ceil_log2(L) + outer + prod;
    }
    case ReduceOrderKind::NumpyPairwise: {
      // The first chunk's tree, then one addition per later chunk (adding it to the +0 start is exact).
      const std::size_t B = static_cast<std::size_t>(std::max(o.block, 1));
      return numpy_depth(std::min(B, n), r0) + static_cast<int>(ceil_div(n, B) - 1) + prod;
    }
  }
  return N;
}

std::string depth_formula(ReduceKind kind, std::size_t n, const ReduceOrder& o, ProductRounding products) {
  int r0 = 0;
  const int prod = extra_roundings(kind, products, r0);
  std::string extra;
  if (r0) extra += " + 1 (an exact product rounded alone)";
  if (prod) extra += " + 1 (the product's rounding)";
  const std::string total = " = " + std::to_string(rounding_depth(kind, n, o, products));
  const std::string h = extra.empty() ? "" : total;  // a single count needs no second "= h"
  if (n == 0) return "h = 0 (no terms)";
  switch (o.kind) {
    case ReduceOrderKind::Unknown: return "h = n - 1 = " + std::to_string(n - 1) + extra + h + " (any binary tree)";
    case ReduceOrderKind::Sequential: return "h = n - 1 = " + std::to_string(n - 1) + extra + h;
    case ReduceOrderKind::Pairwise: return "h = ceil(log2 n) = " + std::to_string(ceil_log2(n)) + extra + h;
    case ReduceOrderKind::Blocked: {
      const std::size_t B = static_cast<std::size_t>(std::max(o.block, 1));
      return "h = (min(B, n) - 1) + (ceil(n/B) - 1) = " + std::to_string(std::min(B, n) - 1) + " + " +
             std::to_string(ceil_div(n, B) - 1) + extra + total;
    }
    case ReduceOrderKind::WarpTree: {
      const std::size_t L = static_cast<std::size_t>(std::max(o.lanes, 1));
      return "h = (ceil(n/L) - 1) + log2 L = " + std::to_string(ceil_div(n, L) - 1) + " + " +
             std::to_string(ceil_log2(L)) + extra + total;
    }
    case ReduceOrderKind::BlockTree: {
      const std::size_t L = static_cast<std::size_t>(std::max(o.lanes, 1)), W = static_cast<std::size_t>(std::max(o.block, 1));
      return "h = (ceil(n/(W L)) - 1) + log2 L + " + std::string(o.warps == WarpCombine::Sequential ? "(W - 1)" : "log2 L") +
             " = " + std::to_string(ceil_div(n, L * W) - 1) + " + " + std::to_string(ceil_log2(L)) + " + " +
             std::to_string(o.warps == WarpCombine::Sequential ? static_cast<int>(W) - 1 : ceil_log2(L)) + extra + total;
    }
    case ReduceOrderKind::NumpyPairwise:
      return "h = the depth of NumPy's pairwise tree over a chunk (n - 1 below 8; (n div 8 - 1) + 3 + n mod 8 up to "
             "128; one more per halving above) + (chunks - 1)" + extra + total;
  }
  return "h = " + std::to_string(rounding_depth(kind, n, o, products));
}

ReduceBound reduce_bound(ReduceKind kind, std::size_t n, const ReduceOrder& order, const ReduceArith& arith,
                         const Format& out, const Rounder& out_rounder, const ReduceRef& ref) {
  ReduceBound b;
  const Format& acc = *arith.acc;
  const std::string acc_tag(acc.tag), mode(to_string(arith.rounder.rounding));
  b.depth = rounding_depth(kind, n, order, arith.products);
  b.u = unit_roundoff(acc, arith.rounder.rounding);
  b.gamma = gamma_of(b.depth, b.u);
  if ((ref.status & kRefNonFinite) || !std::isfinite(ref.abs_sum) || !std::isfinite(b.gamma)) {
    b.applicable = false;
    b.total = INFINITY;
    b.assumption = (ref.status & kRefNonFinite) ? "a non-finite input: the result is IEEE's special value, no bound"
                                                : "h u = " + num(b.depth * b.u) + " >= 1: gamma_h is undefined (vacuous)";
    return b;
  }
  const double A = ref.abs_sum;  // sum |t_i| (RU), for nrm2 q = sum x_i^2
  const double eta = underflow_eta(acc, arith.rounder.rounding);
  // Roundings that can land in the subnormal range inexactly: those taking a product (one per term);
  // additions of two accumulator values are exact there (Hauser 1996).
  const double n_under = kind == ReduceKind::Sum ? 0.0 : static_cast<double>(n);
  const std::string hform = depth_formula(kind, n, order, arith.products);
  const double under = n_under * eta * (1 + b.gamma);
  const char* kSrcUnder =
      "Higham 2002 §2.1, the model with underflow: fl(x op y) = (x op y)(1 + delta) + eta_abs, |eta_abs| <= eta; "
      "an addition whose result is subnormal is exact (J. R. Hauser, Handling floating-point exceptions in numeric "
      "programs, ACM TOPLAS 18(2), 1996), so only the n roundings that take a product can underflow";
  double result_mag = 0, err = 0;  // |exact result| (upper) and the error before the output rounding
  const double ref_mag = std::fabs(ref.value.hi) * (1 + 0x1p-52);
  if (kind != ReduceKind::Nrm2) {
    const double accum = b.gamma * A;
    b.terms.push_back({"accumulation (" + acc_tag + ", " + mode + ")", accum,
                       "gamma_h sum|t_i|, " + hform + ", u = " + num(b.u) + ": " + num(b.gamma) + " * " + num(A) +
                           " = " + num(accum),
                       order_source(order)});
    if (n_under > 0)
      b.terms.push_back({"underflow (" + acc_tag + ")", under,
                         "n eta (1 + gamma_h) = " + num(n_under) + " * " + num(eta) + " * (1 + " + num(b.gamma) +
                             ") = " + num(under),
                         kSrcUnder});
    err = accum + under;
    result_mag = ref_mag;
    b.overflow_free = (1 + b.gamma) * A <= acc.max_finite();
    b.assumption = "no partial sum overflows: (1 + gamma_h) sum|t_i| = " + num((1 + b.gamma) * A) +
                   (b.overflow_free ? " <= " : " > ") + num(acc.max_finite()) + " (" + acc_tag + "'s largest finite)";
  } else {
    // q^ = q (1 + theta) + upsilon with |theta| <= gamma_h (the squares are >= 0, so their weighted
    // relative errors average into one theta) and |upsilon| <= U. sqrt(q^) - sqrt(q) splits into
    // sqrt(q)(sqrt(1 + theta) - 1), at most ||x|| gamma / (1 + sqrt(1 - gamma)), and upsilon over
    // sqrt(q^) + sqrt(q(1 + theta)) >= sqrt(q (1 - gamma)). Then R(sqrt) adds u (||x|| + those).
    const double nrm = ref_mag;
    const double g = b.gamma;
    const double t_acc = g >= 1 ? INFINITY : nrm * g / (1 + std::sqrt(1 - g));
    b.terms.push_back({"sum of squares (" + acc_tag + ", " + mode + ")", t_acc,
                       "||x|| gamma_h / (1 + sqrt(1 - gamma_h)), " + hform + ", u = " + num(b.u) + ": " + num(nrm) +
                           " * " + num(g) + " / " + num(1 + std::sqrt(1 - g)) + " = " + num(t_acc),
                       std::string(kSrcGamma) + "; through the square root: |sqrt(1 + theta) - 1| <= |theta| / (1 + "
                                                "sqrt(1 - |theta|)) (docs/reductions.md, \"nrm2\")"});
    double t_under = 0;
    if (nrm > 0 && g < 1) t_under = under / (nrm * std::sqrt(1 - g));
    b.terms.push_back({"underflow of squares (" + acc_tag + ")", t_under,
                       "n eta (1 + gamma_h) / (||x|| sqrt(1 - gamma_h)) = " + num(under) + " / " +
                           num(nrm * std::sqrt(std::max(0.0, 1 - g))) + " = " + num(t_under),
                       std::string(kSrcUnder) + "; through the square root: |sqrt(a + e) - sqrt(a)| <= |e| / sqrt(a)"});
    // The root of a positive accumulator value is normal unless the format's smallest subnormal has a subnormal
    // root (e2m1, e2m3): then one eta more.
    const double eta_sqrt = std::sqrt(acc.min_subnormal()) < acc.min_normal() ? eta : 0.0;
    const double t_sqrt = b.u * (nrm + t_acc + t_under) + eta_sqrt;
    b.terms.push_back({"square root rounding (" + acc_tag + ", " + mode + ")", t_sqrt,
                       "u (||x|| + the above)" + std::string(eta_sqrt > 0 ? " + eta" : "") + " = " + num(b.u) + " * " +
                           num(nrm + t_acc + t_under) + (eta_sqrt > 0 ? " + " + num(eta_sqrt) : "") + " = " + num(t_sqrt),
                       "IEEE 754 correctly rounded square root into the accumulator; its result is normal when the root "
                       "of the smallest subnormal is (every format but e2m1 and e2m3, which add eta)"});
    err = t_acc + t_under + t_sqrt;
    result_mag = nrm;
    b.overflow_free = (1 + g) * A <= acc.max_finite();
    b.assumption = "no partial sum of squares overflows: (1 + gamma_h) sum x_i^2 = " + num((1 + g) * A) +
                   (b.overflow_free ? " <= " : " > ") + num(acc.max_finite()) + " (" + acc_tag +
                   "'s largest finite)" + (b.overflow_free ? "" : ": the unscaled nrm2 trap, the bound does not apply");
  }
  if (!format_holds(out, acc)) {
    const double uo = unit_roundoff(out, out_rounder.rounding), eo = underflow_eta(out, out_rounder.rounding);
    const double t_out = uo * (result_mag + err) + eo;
    b.terms.push_back({"output rounding (" + std::string(out.tag) + ", " + std::string(to_string(out_rounder.rounding)) + ")",
                       t_out,
                       "u_out (|s| + the above) + eta_out = " + num(uo) + " * " + num(result_mag + err) + " + " + num(eo) +
                           " = " + num(t_out),
                       "one rounding of the accumulator's result into the output format (IEEE 754 §4.3; "
                       "Higham 2002 §2.1 with underflow)"});
    err += t_out;
    if (result_mag + err > out.max_finite()) {
      b.overflow_free = false;
      b.assumption += "; the result may pass " + std::string(out.tag) + "'s largest finite value";
    }
  }
  b.total = err;
  return b;
}

std::string to_text(const ReduceBound& b) {
  std::string s;
  for (const auto& t : b.terms) s += "  " + t.name + ": " + num(t.value) + "   [" + t.law + "]   (" + t.source + ")\n";
  s += "  total: " + num(b.total) + (b.applicable ? "" : " (not applicable)") + "; " + b.assumption + "\n";
  return s;
}

}  // namespace fpcert
