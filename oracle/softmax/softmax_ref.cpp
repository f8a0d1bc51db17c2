// oracle/softmax/softmax_ref.cpp — the softmax and log-softmax reference: fast path with a proved bracket, MPFR where
// it cannot decide (docs/softmax.md, "Reference", derives every constant used here).
#include "oracle/softmax/softmax_ref.hpp"

#include <mpfr.h>

#include <cmath>
#include <deque>
#include <limits>

#include "base/parallel.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

std::string_view to_string(SoftmaxFn f) { return f == SoftmaxFn::Softmax ? "softmax" : "log_softmax"; }
std::string_view to_string(MaskedRowPolicy p) { return p == MaskedRowPolicy::Nan ? "nan" : "zero"; }

namespace {

using mpfr_ref::Mpfr;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// s + e = a + b exactly (Knuth's TwoSum; no overflow for the magnitudes here).
inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// The row sum's relative error bound: every term within kExpTermRelError; the TwoSum accumulation leaves at most
/// n 2^-106 S with n <= 2^24 (2^-82); the terms left out (below 2^-150 each, at most 2^24 of them) at most 2^-126 S.
constexpr double kSumRelError = kExpTermRelError + 0x1p-80;
/// Softmax's fast bracket: e_i / S within kExpTermRelError + kSumRelError + 3 roundings (2^-46.4) of y.
constexpr double kSoftmaxBracket = 0x1p-45;
/// Log-softmax's: |y - computed| <= 1.01 kSumRelError + 2^-100 + 2^-52 |y| (docs/softmax.md); the bracket adds a
/// margin of 2^-51 |y| for the rounding of its own ends.
constexpr double kLogBracketAbs = 0x1p-46;

SoftmaxRowClass classify(const double* z, std::size_t n, double& m, std::int64_t& unmasked) {
  m = -kInf;
  unmasked = 0;
  bool nan = false;
  for (std::size_t j = 0; j < n; ++j) {
    const double v = z[j];
    if (std::isnan(v) || v == kInf) nan = true;  // NaN, or max = +Inf: Inf - Inf
    else if (v != -kInf) {
      ++unmasked;
      if (v > m) m = v;
    }
  }
  if (nan) return SoftmaxRowClass::Nan;
  return unmasked == 0 ? SoftmaxRowClass::AllMasked : SoftmaxRowClass::Finite;
}

/// e^{z - m} for z - m = hi + lo exactly, hi in [kTailArgument, 0]: exp_fast's |k| <= 104 * 64 / ln 2 < 2^14.
inline double exp_term(double hi, double lo, const math::ExpTables& t) {
  const double e = math::exp_fast(math::ExpKind::Exp, hi, t);
  return e + e * lo;
}

Rounded special(const Format& out, double v) { return round_double(out, v, Rounder::nearest(out)); }

/// MPFR at precision p over one row: R = sum over j != j0 of e^{t_j}, t_j = z_j - M rounded at p bits, with j0 the
/// first maximum (so S = 1 + R and log S = log1p(R) keep their relative precision). t_max: the largest |t_j| whose
/// exp did not underflow MPFR's range; underflowed: how many did (each below 2^-(2^29)).
struct MpRow {
  explicit MpRow(long p) : r(p) {}
  Mpfr r;
  double t_max = 0;
  std::int64_t underflowed = 0;
};

void mp_row(const double* z, std::size_t n, double m, std::size_t j0, MpRow& row, long p) {
  std::deque<Mpfr> terms;  // Mpfr does not move: a deque grows without moving its elements
  Mpfr t(p);
  for (std::size_t j = 0; j < n; ++j) {
    if (j == j0 || z[j] == -kInf) continue;
    mpfr_set_d(t, z[j], MPFR_RNDN);
    mpfr_sub_d(t, t, m, MPFR_RNDN);
    const double td = std::fabs(mpfr_get_d(t, MPFR_RNDU));
    terms.emplace_back(p);
    mpfr_clear_underflow();
    mpfr_exp(terms.back(), t, MPFR_RNDN);
    if (mpfr_underflow_p() || mpfr_zero_p(terms.back())) {
      ++row.underflowed;
      terms.pop_back();
      continue;
    }
    row.t_max = std::max(row.t_max, td);
  }
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (auto& x : terms) ptrs.push_back(x.get());
  mpfr_sum(row.r, ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
}

/// The value of element i at precision p and its error bound err 2^-p (err a coefficient, so that 2^-p never underflows
/// a double): softmax relative (rel = true), log-softmax absolute.
/// Bounds (docs/softmax.md, "MPFR path"): t_j rounded (2^-p |t_j|) then exp rounded (2^-p): each e^{t_j} within
/// (|t_j| + 1.01) 2^-p; the sum's own rounding 2^-p: R within rho_R = (t_max + 2.02) 2^-p relative.
void mp_value(SoftmaxFn fn, const double* z, std::size_t i, double m, std::size_t j0, const MpRow& row, long p, Mpfr& v,
              double& err, bool& rel) {
  const double rho_r = row.t_max + 2.02;  // times 2^-p
  const double u = 1;                     // 2^-p, as a coefficient
  (void)p;
  Mpfr s(mpfr_get_prec(v)), t(mpfr_get_prec(v)), l(mpfr_get_prec(v));
  if (fn == SoftmaxFn::Softmax) {
    mpfr_add_ui(s, row.r, 1, MPFR_RNDN);  // S = 1 + R, one rounding
    double ti = 0;
    if (i == j0) {
      mpfr_ui_div(v, 1, s, MPFR_RNDN);
    } else {
      mpfr_set_d(t, z[i], MPFR_RNDN);
      mpfr_sub_d(t, t, m, MPFR_RNDN);
      ti = std::fabs(mpfr_get_d(t, MPFR_RNDU));
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_div(v, t, s, MPFR_RNDN);
    }
    rel = true;
    err = 1.01 * ((ti + 1.01) * u + rho_r + 2 * u + u);  // e_i, R, 1 + R, the division
    return;
  }
  rel = false;
  mpfr_log1p(l, row.r, MPFR_RNDN);  // log S; |error| <= (rho_R + 2^-p) log1p(R): log1p(R) >= R / (1 + R)
  const double lg = mpfr_get_d(l, MPFR_RNDU);
  double ti = 0;
  if (i == j0) {
    mpfr_neg(v, l, MPFR_RNDN);
  } else {
    mpfr_set_d(t, z[i], MPFR_RNDN);
    mpfr_sub_d(t, t, m, MPFR_RNDN);
    ti = std::fabs(mpfr_get_d(t, MPFR_RNDU));
    mpfr_sub(v, t, l, MPFR_RNDN);
  }
  const double vy = std::fabs(mpfr_get_d(v, MPFR_RNDU));
  err = 1.01 * (ti * u + (rho_r + u) * lg + u * vy);
}

/// Ziv's loop on one element (the fast bracket failed): precision doubled from 128 until the bracket rounds one way.
Rounded ziv_element(SoftmaxFn fn, const double* z, std::size_t n, std::size_t i, double m, const Format& out, double* value) {
  std::size_t j0 = 0;
  while (z[j0] != m) ++j0;
  const Rounder rn = Rounder::nearest(out);
  for (long p = 128;; p *= 2) {
    MpRow row(p);
    mp_row(z, n, m, j0, row, p);
    Mpfr v(p), lo(p + 8), hi(p + 8);
    double err = 0;
    bool rel = false;
    mp_value(fn, z, i, m, j0, row, p, v, err, rel);
    if (value) *value = mpfr_get_d(v, MPFR_RNDN);
    if (fn == SoftmaxFn::LogSoftmax && i == j0 && mpfr_zero_p(row.r))
      // R = 0: no other term (y = 0 - log 1 = +0 exactly, as IEEE's 0 - 0), or all underflowed (0 < R < n 2^-(2^29):
      // y = -log1p(R) is a negative value far below every format's range, -0)
      return special(out, row.underflowed > 0 ? -0.0 : 0.0);
    Mpfr w(64);
    mpfr_set_d(w, err, MPFR_RNDU);
    mpfr_mul_2si(w, w, -p, MPFR_RNDU);  // err 2^-p, exact
    if (rel) mpfr_mul(w, w, v, MPFR_RNDA), mpfr_abs(w, w, MPFR_RNDU);
    mpfr_sub(lo, v, w, MPFR_RNDD);
    mpfr_add(hi, v, w, MPFR_RNDU);
    const Rounded a = mpfr_ref::round(out, lo, rn), b = mpfr_ref::round(out, hi, rn);
    if (a.code == b.code || p >= (1L << 16)) return mpfr_ref::round(out, v, rn);
  }
}

}  // namespace

SoftmaxRowRef softmax_row(SoftmaxFn fn, const double* z, std::size_t n) {
  SoftmaxRowRef r;
  r.cls = classify(z, n, r.max, r.unmasked);
  if (r.cls != SoftmaxRowClass::Finite) return r;
  const math::ExpTables& tab = math::exp_tables();
  double s = 0, c = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (z[j] == -kInf) continue;
    double hi, lo;
    two_sum(z[j], -r.max, hi, lo);
    if (hi < kTailArgument) continue;
    double t, e;
    two_sum(s, exp_term(hi, lo, tab), t, e);
    s = t;
    c += e;
  }
  two_sum(s, c, r.s_hi, r.s_lo);
  if (fn == SoftmaxFn::LogSoftmax) {
    Mpfr sm(128), l(128);
    mpfr_set_d(sm, r.s_hi, MPFR_RNDN);
    mpfr_add_d(sm, sm, r.s_lo, MPFR_RNDN);
    mpfr_log(l, sm, MPFR_RNDN);
    r.log_s_hi = mpfr_get_d(l, MPFR_RNDN);
    mpfr_sub_d(l, l, r.log_s_hi, MPFR_RNDN);
    r.log_s_lo = mpfr_get_d(l, MPFR_RNDN);
  }
  return r;
}

void softmax_reference_row(SoftmaxFn fn, const double* z, std::size_t n, const Format& out, MaskedRowPolicy policy,
                           std::uint64_t* codes, double* value, SoftmaxRefStats* stats) {
  const SoftmaxRowRef r = softmax_row(fn, z, n);
  const bool soft = fn == SoftmaxFn::Softmax;
  auto put = [&](std::size_t i, double v) {
    codes[i] = special(out, v).code;
    if (value) value[i] = v;
  };
  if (stats) stats->elements += static_cast<std::int64_t>(n);
  if (r.cls == SoftmaxRowClass::Nan || (r.cls == SoftmaxRowClass::AllMasked && policy == MaskedRowPolicy::Nan)) {
    for (std::size_t i = 0; i < n; ++i) put(i, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  if (r.cls == SoftmaxRowClass::AllMasked) {
    for (std::size_t i = 0; i < n; ++i) put(i, soft ? 0.0 : -kInf);
    return;
  }
  const math::ExpTables& tab = math::exp_tables();
  const Rounder rn = Rounder::nearest(out);
  for (std::size_t i = 0; i < n; ++i) {
    if (z[i] == -kInf) {
      put(i, soft ? 0.0 : -kInf);
      continue;
    }
    double hi, lo;
    two_sum(z[i], -r.max, hi, lo);
    double y;
    std::uint64_t c0, c1;
    if (soft) {
      if (hi < kTailArgument) {  // y <= e^{-104} / 1 < 2^-150: below half of every format's least subnormal
        put(i, 0.0);
        continue;
      }
      y = exp_term(hi, lo, tab) / r.s_hi;
      y -= y * (r.s_lo / r.s_hi);
      c0 = round_double(out, y * (1 - kSoftmaxBracket), rn).code;
      c1 = round_double(out, y * (1 + kSoftmaxBracket), rn).code;
    } else {
      double a, b;
      two_sum(hi, -r.log_s_hi, a, b);
      y = a + (b + (lo - r.log_s_lo));
      const double w = kLogBracketAbs + 0x1p-51 * std::fabs(y);
      c0 = round_double(out, y - w, rn).code;
      c1 = round_double(out, y + w, rn).code;
    }
    if (c0 == c1) {
      codes[i] = c0;
      if (value) value[i] = y;
      continue;
    }
    if (stats) ++stats->mpfr;
    double v = y;
    codes[i] = ziv_element(fn, z, n, i, r.max, out, &v).code;
    if (value) value[i] = v;
  }
}

SoftmaxRef softmax_reference(SoftmaxFn fn, const double* z, std::int64_t rows, std::int64_t cols, const Format& out,
                             MaskedRowPolicy policy, unsigned threads) {
  SoftmaxRef r;
  const auto total = static_cast<std::size_t>(rows * cols);
  r.code.resize(total);
  r.value.resize(total);
  const unsigned workers = threads ? threads : thread_count();
  std::vector<SoftmaxRefStats> per(workers + 1);
  parallel_for(static_cast<std::uint64_t>(rows), 1, [&](std::uint64_t b, std::uint64_t e, unsigned w) {
    for (std::uint64_t row = b; row < e; ++row) {
      const std::size_t at = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
      softmax_reference_row(fn, z + at, static_cast<std::size_t>(cols), out, policy, r.code.data() + at, r.value.data() + at,
                            &per[std::min<std::size_t>(w, workers)]);
    }
  }, workers);
  for (const auto& s : per) {
    r.stats.elements += s.elements;
    r.stats.mpfr += s.mpfr;
  }
  return r;
}

void softmax_mpfr_row(SoftmaxFn fn, const double* z, std::size_t n, const Format& out, long prec, std::uint64_t* codes) {
  double m;
  std::int64_t unmasked;
  if (classify(z, n, m, unmasked) != SoftmaxRowClass::Finite) {
    for (std::size_t i = 0; i < n; ++i) codes[i] = special(out, std::numeric_limits<double>::quiet_NaN()).code;
    return;
  }
  std::size_t j0 = 0;
  while (z[j0] != m) ++j0;
  MpRow row(prec);
  mp_row(z, n, m, j0, row, prec);
  for (std::size_t i = 0; i < n; ++i) {
    if (z[i] == -kInf) {
      codes[i] = special(out, fn == SoftmaxFn::Softmax ? 0.0 : -kInf).code;
      continue;
    }
    Mpfr v(prec);
    double err;
    bool rel;
    mp_value(fn, z, i, m, j0, row, prec, v, err, rel);
    codes[i] = mpfr_ref::round(out, v, Rounder::nearest(out)).code;
  }
}

}  // namespace fpcert
