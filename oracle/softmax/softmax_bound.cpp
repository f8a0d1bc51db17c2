// oracle/softmax/softmax_bound.cpp — the per-element bound of oracle/softmax/softmax_bound.hpp (docs/softmax.md,
// "Bound", derives each factor).
#include "oracle/softmax/softmax_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

#include "oracle/reduce/reduce_bound.hpp"

namespace fpcert {

std::string_view to_string(SoftmaxShift s) {
  switch (s) {
    case SoftmaxShift::Shifted: return "shifted";
    case SoftmaxShift::Unshifted: return "unshifted";
    case SoftmaxShift::Online: return "online";
  }
  return "?";
}

std::string_view to_string(SoftmaxExpExact e) { return e == SoftmaxExpExact::ExpfOps ? "expf_ops" : "none"; }

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// printf into a string (the oracle prints without fmt, as oracle/reduce/reduce_bound.cpp).
__attribute__((format(printf, 1, 2))) std::string strf(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

/// Relative error bound of one exp (or log) result at argument magnitude x: (ulps + floor(per_x x)) ulp <= that many
/// times 2u of the result (an ulp of a normal value v is at most 2u |v|).
double fn_rel(const ElemFnError& e, double x, double u) { return (e.ulps + std::floor(e.ulps_per_x * x)) * 2 * u; }

/// Everything one row's bound needs, element independent.
struct RowBound {
  bool ok = false;
  double m = 0;           ///< max z
  double p_max = 0;       ///< max perturbation
  double s = 0;           ///< sum e^{z_j - M} (shifted units) or e^{M} times it (unshifted)
  double d_hi = 0, d_lo = 0;  ///< the computed row sum over the exact one: in [d_lo, d_hi]
  double w_arg = 0, w_exp = 0, gamma = 0, rescale = 0, abs_sum = 0;  ///< first-order parts of d
  int h = 0;
  std::string h_formula;
  std::int64_t nu = 0;    ///< unmasked entries
  double u = 0, u_acc = 0, eta = 0;
  double log_s = 0;       ///< |log S| of the computed units (for the log's error)
};

double arg_pert(const SoftmaxArith& a, const RowBound& r, double z, double pert) {
  if (a.shift == SoftmaxShift::Unshifted) return pert;
  return pert + r.u * (std::fabs(z - r.m) + pert + r.p_max) * (1 + r.u);  // d^ = RN(z^ - M^)
}

double exp_arg(const SoftmaxArith& a, const RowBound& r, double z, double pert) {
  return (a.shift == SoftmaxShift::Unshifted ? std::fabs(z) : std::fabs(z - r.m)) + pert + r.p_max;
}

RowBound row_bound(const SoftmaxArith& a, const double* z, const double* pert, const double* y, std::size_t n) {
  RowBound r;
  r.u = a.compute->unit_roundoff();
  r.u_acc = a.sum_acc->unit_roundoff();
  r.eta = a.compute->min_subnormal() / 2;
  r.m = -kInf;
  for (std::size_t j = 0; j < n; ++j) {
    if (std::isnan(z[j]) || z[j] == kInf) return r;
    if (z[j] == -kInf) continue;
    ++r.nu;
    r.m = std::max(r.m, z[j]);
    r.p_max = std::max(r.p_max, pert[j]);
  }
  if (r.nu == 0) return r;
  double s_sh = 0;
  for (std::size_t j = 0; j < n; ++j)
    if (z[j] != -kInf) s_sh += std::exp(z[j] - r.m);
  s_sh *= 1 + 0x1p-40;  // libm's exp and the sum, within far less; S only scales the absolute terms
  r.s = a.shift == SoftmaxShift::Unshifted ? s_sh * std::exp(r.m) : s_sh;
  // The row sum: sum_j y_j e^{+-A_j} (1 +- E_j) +- n Eabs / S, times (1 +- gamma_h) and the rescalings' factor.
  double up = 0, down = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (z[j] == -kInf) continue;
    const double aj = arg_pert(a, r, z[j], pert[j]);
    const double ej = fn_rel(a.exp, exp_arg(a, r, z[j], pert[j]), r.u);
    const double yj = (a.fn == SoftmaxFn::Softmax ? y[j] : std::exp(y[j])) * (1 + 0x1p-40);
    up += yj * (std::exp(aj) * (1 + ej) - 1);
    down += yj * (1 - std::exp(-aj) * (1 - ej));
    r.w_arg += yj * aj;
    r.w_exp += yj * ej;
  }
  r.abs_sum = static_cast<double>(r.nu) * a.exp.abs / r.s;
  const auto nu = static_cast<std::size_t>(r.nu);
  if (a.shift == SoftmaxShift::Online) {
    const int b = std::max(a.block, 1);
    const ReduceOrder blocked = ReduceOrder::blocked(b);
    const auto nb = static_cast<int>((n + static_cast<std::size_t>(b) - 1) / static_cast<std::size_t>(b));
    r.h = rounding_depth(ReduceKind::Sum, n, blocked, ProductRounding::Exact) + (nb - 1);
    r.h_formula = depth_formula(ReduceKind::Sum, n, blocked, ProductRounding::Exact) + strf(" + (nb - 1) = %d rescaling products", nb - 1);
    // The rescalings exp(m_old - m_new) a term passes: at most nb - 1 (one per block whose max grows; exp(0) = 1 exactly
    // in every implementation declared here), their arguments summing to at most span = M - min z (any online order:
    // blocks, or lanes combined by a butterfly), each rounded (u |m_old - m_new|), each exp within
    // (ulps + ulps_per_x |a_k|) 2u, each product rounded: e^(u span + 2u (ulps (nb - 1) + ulps_per_x span)) (1 + u)^(nb - 1).
    double lo = kInf;
    for (std::size_t j = 0; j < n; ++j)
      if (z[j] != -kInf) lo = std::min(lo, z[j]);
    const double span = r.m - lo + 2 * r.p_max;
    const double cnt = nb - 1;
    r.rescale = std::exp(r.u * span * (1 + r.u) + 2 * r.u * (a.exp.ulps * cnt + a.exp.ulps_per_x * span)) * std::pow(1 + r.u, cnt) - 1;
  } else {
    r.h = rounding_depth(ReduceKind::Sum, n, a.sum_order, ProductRounding::Exact);
    r.h_formula = depth_formula(ReduceKind::Sum, n, a.sum_order, ProductRounding::Exact);
  }
  (void)nu;
  r.gamma = gamma_of(r.h, r.u_acc);
  if (!std::isfinite(r.gamma)) return r;
  r.d_hi = (1 + r.gamma) * (1 + r.rescale) * (1 + up + r.abs_sum);
  r.d_lo = (1 - r.gamma) * (1 - r.rescale) * (1 - down - r.abs_sum);
  if (!(r.d_lo > 0)) return r;
  r.log_s = a.shift == SoftmaxShift::Unshifted ? std::fabs(std::log(r.s)) : std::log(s_sh);
  r.ok = true;
  return r;
}

struct Element {
  double total = kInf;
  std::vector<SoftmaxBoundTerm> terms;
};

Element element(const SoftmaxArith& a, const RowBound& r, const double* z, const double* pert, const double* y, std::size_t i,
                bool explain) {
  Element e;
  if (z[i] == -kInf) {
    e.total = 0;
    return e;
  }
  const double u = r.u;
  const bool narrow_out = a.out->precision() < a.compute->precision() || a.out->emin() > a.compute->emin();
  const double u_out = narrow_out ? a.out->unit_roundoff() : 0, eta_out = narrow_out ? a.out->min_subnormal() / 2 : 0;
  const double ai = arg_pert(a, r, z[i], pert[i]);
  const double ei = fn_rel(a.exp, exp_arg(a, r, z[i], pert[i]), u);
  const double yi = y[i];
  const std::string cf(a.compute->tag);
  auto term = [&](std::string name, double v, std::string law) {
    if (explain) e.terms.push_back({std::move(name), v, std::move(law)});
  };
  if (a.fn == SoftmaxFn::Softmax) {
    const int nd = a.reciprocal ? 2 : 1;
    const double eabs = a.exp.abs / r.s;
    const double n_hi = yi * std::exp(ai) * (1 + ei) + eabs;
    const double n_lo = std::max(0.0, yi * std::exp(-ai) * (1 - ei) - eabs);
    double hi = n_hi / r.d_lo * std::pow(1 + u, nd) + nd * r.eta;
    double lo = n_lo / r.d_hi * std::pow(1 - u, nd) - nd * r.eta;
    hi = hi * (1 + u_out) + eta_out;
    lo = lo * (1 - u_out) - eta_out;
    e.total = std::max(hi - yi, yi - lo) * (1 + 0x1p-40) + 0x1p-44 * yi;
    if (!explain) return e;  // the terms' texts are formatted only when asked for (they were 40 % of a diagnosis's time)
    term("argument of exp (storage, scale, shift)", ai * yi, strf("A_i y_i, A_i = %.3g", ai));
    term("arguments of the row sum", r.w_arg * yi, strf("sum_j y_j A_j = %.3g, times y_i", r.w_arg));
    term(strf("exp (%g + floor(%g |x|) ulp, %s)", a.exp.ulps, a.exp.ulps_per_x, cf.c_str()), (ei + r.w_exp) * yi,
         strf("(E_i + sum_j y_j E_j) y_i, E_i = %.3g, sum = %.3g; %s", ei, r.w_exp, a.exp.source.c_str()));
    term(strf("row sum (%s, gamma_h)", std::string(a.sum_acc->tag).c_str()), r.gamma * yi,
         strf("gamma_h y_i, %s: gamma = %.3g", r.h_formula.c_str(), r.gamma));
    if (a.shift == SoftmaxShift::Online)
      term("online rescalings", r.rescale * yi, strf("(e^(u span + 2u (c0 (nb - 1) + c1 span)) (1 + u)^(nb - 1) - 1) y_i = %.3g y_i", r.rescale));
    term(a.reciprocal ? "reciprocal and product (2 roundings)" : "division (1 rounding)", nd * u * yi, strf("%d u y_i", nd));
    term("below the least normal (exp, division)", eabs * (1 + static_cast<double>(r.nu) * yi) + nd * r.eta,
         strf("Eabs / S (1 + n y_i) + %d eta, Eabs = %.3g, S = %.4g", nd, a.exp.abs, r.s));
    if (narrow_out) term(strf("output rounding (%s)", std::string(a.out->tag).c_str()), u_out * yi + eta_out, "u_out y_i + eta_out");
  } else {
    const double logdiff = std::max(std::log(r.d_hi), -std::log(r.d_lo));
    const double lmax = r.log_s + logdiff;
    const double elog = fn_rel(a.log, lmax, u) * lmax + a.log.abs;
    double err = ai + logdiff + elog;
    const double sub = u * (std::fabs(yi) + err);
    err += sub;
    const double outr = u_out * (std::fabs(yi) + err) + eta_out;
    err += outr;
    e.total = err * (1 + 0x1p-40) + 0x1p-45 + 0x1p-50 * std::fabs(yi);
    if (!explain) return e;
    term("argument (storage, scale, shift)", ai, "A_i");
    term("log of the row sum (arguments, exp, gamma_h, rescalings)", logdiff,
         strf("max(log D_hi, -log D_lo): sum_j p_j A_j = %.3g, sum_j p_j E_j = %.3g, gamma_h = %.3g (%s)", r.w_arg, r.w_exp,
                     r.gamma, r.h_formula.c_str()));
    term(strf("log (%g + floor(%g |x|) ulp, %s)", a.log.ulps, a.log.ulps_per_x, cf.c_str()), elog,
         strf("E_log |log S|, |log S| <= %.4g; %s", lmax, a.log.source.c_str()));
    term("subtraction (1 rounding)", sub, "u (|y_i| + the above)");
    if (narrow_out) term(strf("output rounding (%s)", std::string(a.out->tag).c_str()), outr, "u_out (|y_i| + the above) + eta_out");
  }
  term("total (the exact product of the factors)", e.total, "docs/softmax.md, \"Bound\"");
  return e;
}

}  // namespace

void softmax_row_bound(const SoftmaxArith& a, const double* z, const double* pert, const double* y, std::size_t n, double* bound) {
  const RowBound r = row_bound(a, z, pert, y, n);
  for (std::size_t i = 0; i < n; ++i) bound[i] = r.ok ? element(a, r, z, pert, y, i, false).total : kInf;
}

std::vector<SoftmaxBoundTerm> softmax_bound_terms(const SoftmaxArith& a, const double* z, const double* pert, const double* y,
                                                  std::size_t n, std::size_t i) {
  const RowBound r = row_bound(a, z, pert, y, n);
  if (!r.ok) return {{"not applicable", kInf, "a non-finite row, or a row sum whose lower bound is not positive"}};
  return element(a, r, z, pert, y, i, true).terms;
}

std::string to_text(const std::vector<SoftmaxBoundTerm>& terms) {
  std::string s;
  for (const auto& t : terms) s += strf("  %-52s %.4g   %s\n", t.name.c_str(), t.value, t.law.c_str());
  return s;
}

}  // namespace fpcert
