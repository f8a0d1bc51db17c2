// oracle/norm/norm_ref.cpp — the LayerNorm / RMSNorm reference: exact row statistics in MPFR, a double evaluation with
// a proved bracket, Ziv's loop on 1/sqrt(D) where the bracket does not decide (docs/normalization.md, "Reference").
#include "oracle/norm/norm_ref.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "base/parallel.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

std::string_view to_string(NormKind k) { return k == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }

namespace {

using mpfr_ref::Mpfr;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double u53 = 0x1p-53;

inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// Exact S, Q and D of a finite row (precision from the exponent span: every value below is exact; checked through
/// MPFR's inexact flag).
struct ExactRow {
  long prec = 0;
  Mpfr s, q, d;
  explicit ExactRow(long p) : prec(p), s(p), q(p), d(p) {}
};

long exact_precision(const double* x, std::size_t n, double eps) {
  int emax = -2000, emin = 2000;
  auto see = [&](double v) {
    if (v == 0) return;
    int e;
    std::frexp(v, &e);
    emax = std::max(emax, e);
    emin = std::min(emin, e - 53);
  };
  for (std::size_t j = 0; j < n; ++j) see(x[j]);
  see(eps);
  if (emax < emin) return 128;
  const long span = 2L * (emax - emin) + 2 * (64 - __builtin_clzll(static_cast<unsigned long long>(n) + 1)) + 128;
  return std::max(128L, 2 * span);  // S^2 and n^2 eps inside one exact value
}

void exact_row(NormKind kind, const double* x, std::size_t n, double eps, ExactRow& r) {
  const long p = r.prec;
  mpfr_clear_inexflag();
  mpfr_set_zero(r.s, 1);
  mpfr_set_zero(r.q, 1);
  Mpfr t(p);
  for (std::size_t j = 0; j < n; ++j) {
    mpfr_add_d(r.s, r.s, x[j], MPFR_RNDN);
    mpfr_set_d(t, x[j], MPFR_RNDN);
    mpfr_sqr(t, t, MPFR_RNDN);
    mpfr_add(r.q, r.q, t, MPFR_RNDN);
  }
  const auto nn = static_cast<unsigned long>(n);
  mpfr_mul_ui(r.d, r.q, nn, MPFR_RNDN);  // n Q
  if (kind == NormKind::LayerNorm) {
    mpfr_sqr(t, r.s, MPFR_RNDN);
    mpfr_sub(r.d, r.d, t, MPFR_RNDN);  // n Q - S^2 = n^2 var >= 0
  }
  mpfr_set_d(t, eps, MPFR_RNDN);
  mpfr_mul_ui(t, t, nn, MPFR_RNDN);
  mpfr_mul_ui(t, t, nn, MPFR_RNDN);
  mpfr_add(r.d, r.d, t, MPFR_RNDN);
  if (mpfr_inexflag_p()) throw std::logic_error("norm reference: the exact row statistics were rounded (precision too small)");
}

/// Ziv's loop for element i: y = N g / sqrt(D) + b with N, g, b exact; 1/sqrt(D) bracketed at precision p.
Rounded ziv(NormKind kind, const ExactRow& r, double xi, std::size_t n, double g, double b, const Format& out, double* value,
            bool* settled) {
  const long pe = r.prec + 128;
  Mpfr num(pe);
  mpfr_set_d(num, xi, MPFR_RNDN);
  mpfr_mul_ui(num, num, static_cast<unsigned long>(n), MPFR_RNDN);
  if (kind == NormKind::LayerNorm) mpfr_sub(num, num, r.s, MPFR_RNDN);
  mpfr_mul_d(num, num, g, MPFR_RNDN);  // exact: pe covers the span
  const Rounder rn = Rounder::nearest(out);
  Rounded lo_r{}, hi_r{};
  for (long p = 128; p <= (1L << 16); p *= 2) {
    Mpfr rl(p), rh(p), yl(p), yh(p);
    mpfr_rec_sqrt(rl, r.d, MPFR_RNDD);
    mpfr_rec_sqrt(rh, r.d, MPFR_RNDU);
    const bool neg = mpfr_sgn(num.get()) < 0;
    mpfr_mul(yl, num, neg ? rh : rl, MPFR_RNDD);
    mpfr_mul(yh, num, neg ? rl : rh, MPFR_RNDU);
    mpfr_add_d(yl, yl, b, MPFR_RNDD);
    mpfr_add_d(yh, yh, b, MPFR_RNDU);
    lo_r = mpfr_ref::round(out, yl, rn);
    hi_r = mpfr_ref::round(out, yh, rn);
    if (value) *value = mpfr_get_d(yl, MPFR_RNDN);
    if (lo_r.code == hi_r.code) {
      *settled = true;
      return lo_r;
    }
  }
  *settled = false;
  return lo_r;
}

}  // namespace

NormRowStats norm_reference_row(NormKind kind, const double* x, std::size_t n, const double* gamma, const double* beta, double eps,
                                const Format& out, std::uint64_t* codes, double* value, NormRefStats* stats) {
  NormRowStats st;
  bool finite = n > 0;
  for (std::size_t j = 0; j < n; ++j) finite = finite && std::isfinite(x[j]);
  const Rounder rn = Rounder::nearest(out);
  auto nan_row = [&] {
    st.finite = false;
    st.mean = st.var = kNan;
    for (std::size_t i = 0; i < n; ++i) {
      codes[i] = round_double(out, kNan, rn).code;
      if (value) value[i] = kNan;
    }
    return st;
  };
  if (!finite) {
    bool nan = false;
    for (std::size_t j = 0; j < n; ++j) nan = nan || std::isnan(x[j]);
    if (kind == NormKind::LayerNorm || nan) return nan_row();
    // RMSNorm with +-Inf and no NaN: Q = +Inf, rsqrt = +0; a finite x_j gives (x_j * 0) * g + b = b (+0 without
    // beta: the sign of x_j g, which the grading does not tell apart), an infinite one Inf * 0 = NaN.
    st.finite = false;
    st.mean = st.var = kNan;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = std::isinf(x[i]) ? kNan : (beta ? beta[i] : 0.0);
      codes[i] = round_double(out, v, rn).code;
      if (value) value[i] = v;
    }
    return st;
  }
  ExactRow r(exact_precision(x, n, eps));
  exact_row(kind, x, n, eps, r);
  if (mpfr_zero_p(r.d.get())) return nan_row();
  const double nd = static_cast<double>(n);
  {
    Mpfr t(r.prec + 64);
    mpfr_div_ui(t, r.s, static_cast<unsigned long>(n), MPFR_RNDN);
    st.mean = kind == NormKind::LayerNorm ? mpfr_get_d(t, MPFR_RNDN) : 0.0;
    mpfr_set_d(t, eps, MPFR_RNDN);
    mpfr_mul_d(t, t, nd * nd, MPFR_RNDN);
    mpfr_sub(t, r.d, t, MPFR_RNDN);
    mpfr_div_d(t, t, nd * nd, MPFR_RNDN);
    st.var = mpfr_get_d(t, MPFR_RNDN);
  }
  // 1/sqrt(D) in double: MPFR at 128 bits then rounded: relative error <= 2^-53 + 2^-127 < 2^-52.
  Mpfr rs(128);
  mpfr_rec_sqrt(rs, r.d, MPFR_RNDN);
  const double rd = mpfr_get_d(rs, MPFR_RNDN);
  // S as a double-double: |S - s_hi - s_lo| <= 2^-53 |s_lo| <= 2^-105 |S|.
  Mpfr t(r.prec);
  const double s_hi = mpfr_get_d(r.s, MPFR_RNDN);
  mpfr_sub_d(t, r.s, s_hi, MPFR_RNDN);
  const double s_lo = mpfr_get_d(t, MPFR_RNDN);
  const bool rd_ok = std::isfinite(rd) && rd > 0x1p-900 && rd < 0x1p900;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gamma ? gamma[i] : 1.0, b = beta ? beta[i] : 0.0;
    // N = n x_i - S: n x_i = a_hi + a_lo exactly (FMA), then TwoSum with -s_hi.
    const double a_hi = nd * x[i], a_lo = std::fma(nd, x[i], -a_hi);
    double num, err_num;
    if (kind == NormKind::LayerNorm) {
      double th, te;
      two_sum(a_hi, -s_hi, th, te);
      const double rest = (te + a_lo) - s_lo;  // two roundings of at most 2^-53 (|te| + |a_lo| + |s_lo|) each
      num = th + rest;
      err_num = 0x1p-105 * std::fabs(s_hi) * 1.01 + 2 * u53 * (std::fabs(te) + std::fabs(a_lo) + std::fabs(s_lo)) * 1.01 +
                u53 * std::fabs(num);
    } else {
      num = a_hi;
      err_num = std::fabs(a_lo);
    }
    const double q = num * rd;  // rel error of rd 2^-52, of the product 2^-53
    const double y0 = q * g, y = y0 + b;
    double err = (err_num * rd + std::fabs(q) * (0x1p-52 + u53)) * std::fabs(g) * 1.01 + u53 * std::fabs(y0) + u53 * std::fabs(y);
    err = err * (1 + 0x1p-40) + 0x1p-1070;
    bool decided = false;
    Rounded res{};
    if (rd_ok && std::isfinite(y) && std::isfinite(err)) {
      const Rounded lo = round_double(out, y - err, rn), hi = round_double(out, y + err, rn);
      decided = lo.code == hi.code;
      res = lo;
    }
    if (stats) ++stats->elements;
    if (decided) {
      codes[i] = res.code;
      if (value) value[i] = y;
      continue;
    }
    if (stats) ++stats->mpfr;
    bool settled = true;
    double v = y;
    codes[i] = ziv(kind, r, x[i], n, g, b, out, &v, &settled).code;
    if (value) value[i] = v;
    if (!settled && stats) ++stats->unsettled;
  }
  return st;
}

NormRef norm_reference(NormKind kind, const double* x, std::int64_t rows, std::int64_t cols, const double* gamma, const double* beta,
                       double eps, const Format& out, unsigned threads) {
  NormRef r;
  const auto total = static_cast<std::size_t>(rows * cols);
  r.code.resize(total);
  r.value.resize(total);
  r.rows.resize(static_cast<std::size_t>(rows));
  const unsigned workers = threads ? threads : thread_count();
  std::vector<NormRefStats> per(workers + 1);
  parallel_for(static_cast<std::uint64_t>(rows), 1, [&](std::uint64_t b, std::uint64_t e, unsigned w) {
    for (std::uint64_t row = b; row < e; ++row) {
      const std::size_t at = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
      r.rows[row] = norm_reference_row(kind, x + at, static_cast<std::size_t>(cols), gamma, beta, eps, out, r.code.data() + at,
                                       r.value.data() + at, &per[std::min<std::size_t>(w, workers)]);
    }
  }, workers);
  for (const auto& s : per) {
    r.stats.elements += s.elements;
    r.stats.mpfr += s.mpfr;
    r.stats.unsettled += s.unsettled;
  }
  return r;
}

void norm_mpfr_row(NormKind kind, const double* x, std::size_t n, const double* gamma, const double* beta, double eps, const Format& out,
                   long prec, std::uint64_t* codes) {
  const Rounder rn = Rounder::nearest(out);
  Mpfr mean(prec), var(prec), t(prec), y(prec);
  mpfr_set_zero(mean, 1);
  for (std::size_t j = 0; j < n; ++j) mpfr_add_d(mean, mean, x[j], MPFR_RNDN);
  mpfr_div_ui(mean, mean, static_cast<unsigned long>(n), MPFR_RNDN);
  if (kind == NormKind::RmsNorm) mpfr_set_zero(mean, 1);
  mpfr_set_zero(var, 1);
  for (std::size_t j = 0; j < n; ++j) {
    mpfr_set_d(t, x[j], MPFR_RNDN);
    mpfr_sub(t, t, mean, MPFR_RNDN);
    mpfr_sqr(t, t, MPFR_RNDN);
    mpfr_add(var, var, t, MPFR_RNDN);
  }
  mpfr_div_ui(var, var, static_cast<unsigned long>(n), MPFR_RNDN);
  mpfr_add_d(var, var, eps, MPFR_RNDN);
  mpfr_sqrt(var, var, MPFR_RNDN);
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_set_d(y, x[i], MPFR_RNDN);
    mpfr_sub(y, y, mean, MPFR_RNDN);
    mpfr_div(y, y, var, MPFR_RNDN);
    if (gamma) mpfr_mul_d(y, y, gamma[i], MPFR_RNDN);
    if (beta) mpfr_add_d(y, y, beta[i], MPFR_RNDN);
    codes[i] = mpfr_nan_p(y) || mpfr_inf_p(y) ? round_double(out, kNan, rn).code : mpfr_ref::round(out, y, rn).code;
  }
}

}  // namespace fpcert
