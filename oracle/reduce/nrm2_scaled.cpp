// oracle/reduce/nrm2_scaled.cpp — LAPACK 3.10's scaled nrm2 emulated in an accumulator format, and its bound
// (nrm2_scaled.hpp states both; docs/reductions.md, "Scaled nrm2", derives the bound). Written from the
// algorithm's description, not from LAPACK's source.
#include "oracle/reduce/nrm2_scaled.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "oracle/exact_sum.hpp"
#include "oracle/reduce/reduce_acc.hpp"
#include "oracle/convert/representable.hpp"

namespace fpcert {
namespace {

int floor_half(int a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }
int ceil_half(int a) { return -floor_half(-a); }

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

}  // namespace

BlueConstants blue_constants(const Format& f) {
  const int minexp = f.emin() + 1, maxexp = f.emax() + 1, p = f.precision();  // Fortran's model: 0.5 <= m < 1
  return {std::ldexp(1.0, ceil_half(minexp - 1)), std::ldexp(1.0, floor_half(maxexp - p + 1)),
          std::ldexp(1.0, -floor_half(minexp - p)), std::ldexp(1.0, -ceil_half(maxexp + p - 1))};
}

std::string_view to_string(Nrm2Branch b) {
  switch (b) {
    case Nrm2Branch::Zero: return "zero";
    case Nrm2Branch::Big: return "big";
    case Nrm2Branch::MediumAndSmall: return "medium and small";
    case Nrm2Branch::Small: return "small";
    case Nrm2Branch::Medium: return "medium";
    case Nrm2Branch::NonFinite: return "non-finite";
  }
  return "?";
}

Nrm2Branch nrm2_scaled_branch(const double* x, std::size_t n, const Format& acc) {
  const BlueConstants c = blue_constants(acc);
  bool big = false, small = false, med = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = std::fabs(x[i]);
    if (!std::isfinite(a)) return Nrm2Branch::NonFinite;
    if (a > c.tbig) big = true;
    else if (a == 0) continue;
    else if (a < c.tsml) small = true;
    else med = true;
  }
  if (big) return Nrm2Branch::Big;
  if (small && med) return Nrm2Branch::MediumAndSmall;
  if (small) return Nrm2Branch::Small;
  return med ? Nrm2Branch::Medium : Nrm2Branch::Zero;
}

double emulate_nrm2_scaled(const double* x, std::size_t n, const ReduceArith& arith) {
  if (arith.acc == nullptr || arith.acc->precision() > 26 || !arith.acc->is_signed())
    throw std::invalid_argument("emulate_nrm2_scaled: the accumulator must be a signed format of at most 26 bits of precision");
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(x[i]) && !exactly_representable(*arith.acc, x[i]))
      throw std::invalid_argument("emulate_nrm2_scaled: x value " + std::to_string(x[i]) +
                                  " is not exactly representable in the accumulator format " + std::string(arith.acc->tag));
  const BlueConstants c = blue_constants(*arith.acc);
  detail::Acc acc(arith);
  const bool fused = arith.products == ProductRounding::Exact;
  // acc_sum + y^2 for y a value of acc: one rounding (fused) or two.
  auto add_square = [&](double s, double y) { return fused ? acc.add(s, y * y) : acc.add(s, acc.mul(y, y)); };
  double asml = 0, amed = 0, abig = 0;
  bool notbig = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double ax = std::fabs(x[i]);  // exact; a NaN fails both comparisons below and goes to amed
    if (ax > c.tbig) {
      abig = add_square(abig, acc.mul(ax, c.sbig));  // ax S_b: a power-of-two scaling, exact (normal result)
      notbig = false;
    } else if (ax < c.tsml) {
      if (notbig) asml = add_square(asml, acc.mul(ax, c.ssml));  // scaled up: exact
    } else {
      amed = add_square(amed, ax);
    }
  }
  const bool med_counts = amed > 0 || std::isnan(amed) || std::isinf(amed);
  double scl = 1, sumsq = 0;
  if (abig > 0) {
    if (med_counts) abig = acc.add(abig, acc.mul(acc.mul(amed, c.sbig), c.sbig));
    scl = 1 / c.sbig;  // a power of two: exact
    sumsq = abig;
  } else if (asml > 0) {
    if (med_counts) {
      const double y = acc.sqrt(amed);
      const double z = acc.div(acc.sqrt(asml), c.ssml);
      const double ymin = z > y ? y : z, ymax = z > y ? z : y;
      const double r = acc.div(ymin, ymax);
      sumsq = acc.mul(acc.mul(ymax, ymax), acc.add(1.0, acc.mul(r, r)));
    } else {
      scl = 1 / c.ssml;
      sumsq = asml;
    }
  } else {
    sumsq = amed;
  }
  return acc.mul(scl, acc.sqrt(sumsq));
}

ReduceBound nrm2_scaled_bound(const double* x, std::size_t n, const ReduceArith& arith, const Format& out,
                              const Rounder& out_rounder, const ReduceRef& ref) {
  ReduceBound b;
  const Format& accf = *arith.acc;
  const std::string tag(accf.tag), mode(to_string(arith.rounder.rounding));
  const BlueConstants c = blue_constants(accf);
  const Nrm2Branch br = nrm2_scaled_branch(x, n, accf);
  b.u = unit_roundoff(accf, arith.rounder.rounding);
  if (br == Nrm2Branch::NonFinite || (ref.status & kRefNonFinite)) {
    b.applicable = false;
    b.total = INFINITY;
    b.assumption = "a non-finite input: the result is a special value, no bound";
    return b;
  }
  if (br == Nrm2Branch::Zero) {
    b.assumption = "every input is zero: the result is exactly +0";
    return b;
  }
  const double eta = underflow_eta(accf, arith.rounder.rounding);
  std::size_t n_small = 0;
  bool has_med = false;
  ExactSum dropped;  // the squares the big branch leaves out
  for (std::size_t i = 0; i < n; ++i) {
    const double a = std::fabs(x[i]);
    if (a != 0 && a < c.tsml) {
      ++n_small;
      dropped.add_product(a, a);
    }
    has_med = has_med || (a >= c.tsml && a <= c.tbig);
  }
  b.depth = static_cast<int>(n) + (br == Nrm2Branch::Big ? 1 : br == Nrm2Branch::MediumAndSmall ? 8 : 0);
  b.gamma = gamma_of(b.depth, b.u);
  if (!std::isfinite(b.gamma) || b.gamma >= 1) {
    b.applicable = false;
    b.total = INFINITY;
    b.assumption = "h u >= 1: gamma_h is undefined (vacuous)";
    return b;
  }
  const double g = b.gamma, nrm = std::fabs(ref.value.hi) * (1 + 0x1p-52), q = ref.abs_sum;
  const double qd = br == Nrm2Branch::Big ? dropped.round_up() : 0.0;
  const std::string branch = "branch '" + std::string(to_string(br)) + "'";
  const char* kSrc =
      "E. Anderson, Algorithm 978: Safe scaling in the Level 1 BLAS, ACM TOMS 44(1), 2017 (the algorithm); Higham 2002 "
      "Lemma 3.1 along each square's path, through the square roots (docs/reductions.md, \"Scaled nrm2\")";
  const double t_acc = nrm * g / (1 + std::sqrt(1 - g));
  const std::string hwhy = br == Nrm2Branch::Big ? "n + 1 (the medium sum joins the big one)"
                           : br == Nrm2Branch::MediumAndSmall ? "n + 8 (two square roots, ymax^2, ymin / ymax, its square, 1 + it, the product)"
                                                              : "n";
  b.terms.push_back({"sums of squares (" + tag + ", " + mode + ")", t_acc,
                     branch + ": ||x|| gamma_h / (1 + sqrt(1 - gamma_h)), h = " + hwhy + " = " + std::to_string(b.depth) +
                         ", u = " + num(b.u) + ": " + num(nrm) + " * " + num(g) + " / " + num(1 + std::sqrt(1 - g)) + " = " + num(t_acc),
                     kSrc});
  if (qd > 0) {
    const double t = qd / nrm;
    b.terms.push_back({"squares left out (values below T_s = " + num(c.tsml) + " beside a big one)", t,
                       "sum of the left-out x_i^2 / ||x|| = " + num(qd) + " / " + num(nrm) + " = " + num(t),
                       "the algorithm drops them (Anderson 2017); |sqrt(q - d) - sqrt(q)| <= d / sqrt(q)"});
  }
  // Roundings that can land in the subnormal range, in units of q: the small values' scaled squares (below
  // 2^emin once scaled: each eta / S_s^2), the medium sum scaled twice by S_b (big branch: 2 eta / S_b^2), and in
  // the mixed branch z = sqrt(A_small) / S_s (eta on z: (2 ||x|| (1 + gamma) + eta) eta on z^2) and
  // (ymin / ymax)^2 (eta, times ymax^2 <= q (1 + gamma)).
  double U = static_cast<double>(n_small) * eta / (c.ssml * c.ssml);
  if (br == Nrm2Branch::Big) U = has_med ? 2 * eta / (c.sbig * c.sbig) : 0.0;  // the small values are left out there
  if (br == Nrm2Branch::MediumAndSmall) U += (2 * nrm * (1 + g) + eta) * eta + eta * q * (1 + g);
  U *= (1 + g);
  const double qkept = std::max(0.0, (q - qd) * (1 - 0x1p-50));
  double t_under = 0;
  if (U > 0) t_under = qkept > 0 ? U / std::sqrt(qkept * (1 - g)) : INFINITY;
  if (U > 0)
    b.terms.push_back({"underflow (" + tag + ")", t_under,
                       "U / sqrt((q - left out)(1 - gamma_h)), U = " + num(U) + " in units of q: " + num(t_under),
                       "Higham 2002 §2.1 with underflow: eta = " + num(eta) + " per rounding into the subnormal range"});
  const double eta_sqrt = std::sqrt(accf.min_subnormal()) < accf.min_normal() ? eta : 0.0;  // e2m1, e2m3 (reduce_bound.cpp)
  const double t_sqrt = b.u * (nrm + t_acc + (qd > 0 ? qd / nrm : 0.0) + t_under) + eta_sqrt;
  b.terms.push_back({"square root rounding (" + tag + ", " + mode + ")", t_sqrt,
                     "u (||x|| + the above) = " + num(t_sqrt), "IEEE 754 correctly rounded square root"});
  double err = t_acc + (qd > 0 ? qd / nrm : 0.0) + t_under + t_sqrt;
  if (br == Nrm2Branch::Small) {
    b.terms.push_back({"final scaling by 1 / S_s (" + tag + ")", eta, "eta = " + num(eta),
                       "a multiplication by a power of two is exact unless its result is subnormal"});
    err += eta;
  }
  b.overflow_free = nrm + err <= accf.max_finite();
  b.assumption = branch + "; the result " + (b.overflow_free ? "stays within " : "may pass ") + num(accf.max_finite()) +
                 " (" + tag + "'s largest finite)";
  if (!format_holds(out, accf)) {
    const double uo = unit_roundoff(out, out_rounder.rounding), eo = underflow_eta(out, out_rounder.rounding);
    const double t_out = uo * (nrm + err) + eo;
    b.terms.push_back({"output rounding (" + std::string(out.tag) + ", " + std::string(to_string(out_rounder.rounding)) + ")",
                       t_out, "u_out (||x|| + the above) + eta_out = " + num(t_out), "one rounding into the output format"});
    err += t_out;
    if (nrm + err > out.max_finite()) b.overflow_free = false;
  }
  b.total = err;
  return b;
}

}  // namespace fpcert
