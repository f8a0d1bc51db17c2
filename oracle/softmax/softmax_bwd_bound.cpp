// oracle/softmax/softmax_bwd_bound.cpp — the per-element bound of oracle/softmax/softmax_bwd_bound.hpp (docs/backward.md,
// "Softmax and log-softmax backward", derives each contribution).
#include "oracle/softmax/softmax_bwd_bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <string>

#include "oracle/reduce/reduce_bound.hpp"
#include "oracle/softmax/softmax_bwd_ref.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

__attribute__((format(printf, 1, 2))) std::string strf(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

/// What every element of a row shares: D's (G's) error bound and its parts.
struct RowPart {
  bool ok = false;
  SoftmaxBwdRow row;
  int h = 0;
  std::string h_formula;
  double u = 0, eta = 0, u_d = 0, gamma = 0;
  double u_p = 0, eta_p = 0;  ///< the products dy_k y_k's rounding (prod's format, else the compute format)
  double d_err = 0;         ///< |D^ - D| <= gamma_h sum|t_k| + abs
  double d_abs = 0;         ///< the subnormal part of d_err
};

RowPart row_part(const SoftmaxBwdArith& a, const double* y, const double* dy, std::size_t n) {
  RowPart r;
  r.row = softmax_bwd_row(a.fn, y, dy, n);
  if (!r.row.finite) return r;
  const bool soft = a.fn == SoftmaxFn::Softmax;
  r.u = a.compute->unit_roundoff();
  r.eta = a.compute->min_subnormal() / 2;
  // A rounded product is rounded in the compute format: the sum's u is the larger of the two (Higham 2002, (3.4)).
  // Expanded with `prod`: D sums the products rounded into prod (PyTorch's grad * output tensor), fused or not.
  const Format* pf = soft && a.expanded && a.prod ? a.prod : a.compute;
  const bool rounded = soft && (!a.fma || pf != a.compute);
  r.u_p = pf->unit_roundoff();
  r.eta_p = pf->min_subnormal() / 2;
  r.u_d = std::max(a.dot_acc->unit_roundoff(), rounded ? r.u_p : 0.0);
  const auto terms = static_cast<std::size_t>(r.row.terms);
  const ProductRounding pr = rounded ? ProductRounding::Rounded : ProductRounding::Exact;
  const ReduceKind kind = soft ? ReduceKind::Dot : ReduceKind::Sum;
  r.h = rounding_depth(kind, terms, a.dot_order, pr);
  r.h_formula = depth_formula(kind, terms, a.dot_order, pr);
  r.gamma = gamma_of(r.h, r.u_d);
  if (!std::isfinite(r.gamma)) return r;
  // Every rounding of the sum (n - 1 additions, n products) may land below the least normal: half its least subnormal.
  const double eta_d = std::max(a.dot_acc->min_subnormal() / 2, rounded ? r.eta_p : 0.0);
  r.d_abs = static_cast<double>(2 * terms) * eta_d * (1 + r.gamma);
  r.d_err = r.gamma * r.row.abs_dot + r.d_abs;
  r.ok = true;
  return r;
}

struct Element {
  double total = kInf;
  std::vector<SoftmaxBoundTerm> terms;
};

Element element(const SoftmaxBwdArith& a, const RowPart& r, const double* y, const double* dy, double s, std::size_t i, bool explain) {
  Element e;
  const bool soft = a.fn == SoftmaxFn::Softmax;
  if ((soft && y[i] == 0) || (!soft && y[i] == -kInf)) {
    e.total = 0;
    if (explain) e.terms.push_back({"exact (a zero probability or a masked entry: dx = +0)", 0, "docs/backward.md, \"Special values\""});
    return e;
  }
  if (!std::isfinite(y[i]) || !std::isfinite(dy[i])) return e;
  const double u = r.u, eta = r.eta, as = std::fabs(s);
  const bool narrow_out = a.out->precision() < a.compute->precision() || a.out->emin() > a.compute->emin();
  const double u_out = narrow_out ? a.out->unit_roundoff() : 0, eta_out = narrow_out ? a.out->min_subnormal() / 2 : 0;
  const double D = r.row.dot;
  const std::string cf(a.compute->tag);
  auto term = [&](std::string name, double v, std::string law) {
    if (explain) e.terms.push_back({std::move(name), v, std::move(law)});
  };
  // The exact t and its computed value's error, carried up to the scale's product.
  double err = 0, mag = 0;  // |computed - exact| so far, |exact| of the current quantity
  if (soft) {
    const double t = std::fabs(dy[i] - D) * (1 + 0x1p-50) + 0x1p-50 * std::fabs(D);
    const double ay = std::fabs(y[i]);
    const double e_dot = ay * as * r.d_err;
    mag = ay * t;
    term(strf("D = sum dy_k y_k (%s, gamma_h)", std::string(a.dot_acc->tag).c_str()), e_dot,
         strf("|s y_j| (gamma_h sum|dy_k y_k| + abs), %s: gamma = %.3g, sum = %.4g, abs = %.3g", r.h_formula.c_str(), r.gamma,
              r.row.abs_dot, r.d_abs));
    if (!a.expanded) {
      const double e_sub = u * (t + r.d_err);  // fl(dy_j - D^): a subnormal difference is exact
      const double et = r.d_err + e_sub;
      const double e_mul = u * ay * t + eta;  // fl(y_j t^)
      err = ay * et * (1 + u) + e_mul;
      term("dy_j - D (1 rounding)", as * ay * e_sub, strf("|s y_j| u (|dy_j - D| + |D^ - D|), |dy_j - D| = %.4g", t));
      term("y_j (dy_j - D) (1 rounding)", as * (e_mul + ay * et * u), "|s| (u |y_j (dy_j - D)| + eta + u |y_j| (error of t))");
    } else {
      // fl(dy_j y_j), fl(y_j D^) (a fused one has less), their difference: each u |result| + eta where it can be subnormal.
      const double ad = std::fabs(D) * (1 + 0x1p-50);
      const double e_g = r.u_p * ay * std::fabs(dy[i]) + r.eta_p;  // in prod's format (the compute format when none)
      const double e_q = ay * r.d_err + u * ay * (ad + r.d_err) + eta;
      const double e_r = u * (mag + e_g + e_q);
      err = e_g + e_q + e_r;
      term(strf("dy_j y_j (1 rounding, %s) and y_j D (1 rounding)", std::string(a.prod ? a.prod->tag : a.compute->tag).c_str()),
           as * (e_g + e_q - ay * r.d_err),
           strf("|s| ((u_p |dy_j| + u |D|) |y_j| + eta_p + eta), |dy_j| = %.4g, |D| = %.4g", std::fabs(dy[i]), ad));
      term("their difference (1 rounding)", as * e_r, "|s| u (|y_j (dy_j - D)| + the above)");
    }
  } else {
    const double ay = std::fabs(y[i]);
    const double ex = std::exp(y[i]) * (1 + 0x1p-50);
    const double rel = (a.exp.ulps + std::floor(a.exp.ulps_per_x * ay)) * 2 * u;
    const double e_exp = rel * ex + a.exp.abs;  // |E^ - e^{y_j}|
    const double G = std::fabs(D) * (1 + 0x1p-50);
    const double e_eg = e_exp * (G + r.d_err) + ex * r.d_err;  // |E^ G^ - e^y G|
    const double p = ex * G;
    const double e_p = e_eg + u * (p + e_eg) + eta;  // fl(E^ G^)
    const double t = std::fabs(dy[i] - std::exp(y[i]) * D) * (1 + 0x1p-48) + 0x1p-48 * p;
    const double e_sub = u * (t + e_p);
    err = e_p + e_sub;
    mag = t;
    term(strf("G = sum dy_k (%s, gamma_h)", std::string(a.dot_acc->tag).c_str()), as * ex * r.d_err,
         strf("|s| e^{y_j} (gamma_h sum|dy_k| + abs), %s: gamma = %.3g, sum = %.4g", r.h_formula.c_str(), r.gamma, r.row.abs_dot));
    term(strf("exp (%g + floor(%g |x|) ulp, %s)", a.exp.ulps, a.exp.ulps_per_x, cf.c_str()), as * e_exp * (G + r.d_err),
         strf("|s| E |G^|, E = %.3g relative + %.3g; %s", rel, a.exp.abs, a.exp.source.c_str()));
    term("e^{y_j} G (1 rounding)", as * (e_p - e_eg), "|s| (u |e^{y_j} G| + eta)");
    term("dy_j - e^{y_j} G (1 rounding)", as * e_sub, strf("|s| u (|dy_j - e^{y_j} G| + the above), |dy_j - e^{y_j} G| = %.4g", t));
  }
  // The scale's product (none when s = 1), then the output rounding.
  double total = as * err;
  if (s != 1) {
    const double e_s = u * (as * mag + total) + eta;
    total += e_s;
    term("times s (1 rounding)", e_s, strf("u (|dx_j| + the above) + eta, s = %.9g", s));
  }
  const double e_out = u_out * (as * mag + total) + eta_out;
  total += e_out;
  if (narrow_out) term(strf("output rounding (%s)", std::string(a.out->tag).c_str()), e_out, "u_out (|dx_j| + the above) + eta_out");
  e.total = total * (1 + 0x1p-40);
  term("total", e.total, "the exact sum of the contributions (docs/backward.md, \"Bound\")");
  return e;
}

}  // namespace

void softmax_bwd_row_bound(const SoftmaxBwdArith& a, const double* y, const double* dy, std::size_t n, double scale, double* bound) {
  const RowPart r = row_part(a, y, dy, n);
  for (std::size_t i = 0; i < n; ++i) bound[i] = r.ok ? element(a, r, y, dy, scale, i, false).total : kInf;
}

std::vector<SoftmaxBoundTerm> softmax_bwd_bound_terms(const SoftmaxBwdArith& a, const double* y, const double* dy, std::size_t n,
                                                      double scale, std::size_t i) {
  const RowPart r = row_part(a, y, dy, n);
  if (!r.ok) return {{"not applicable", kInf, "a row with NaN or Inf (judged as special values), or gamma_h undefined (h u >= 1)"}};
  return element(a, r, y, dy, scale, i, true).terms;
}

}  // namespace fpcert
