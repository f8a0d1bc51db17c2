// oracle/softmax/softmax_bwd_ref.cpp — the softmax and log-softmax backward reference: an exact D (or G), a fast
// bracket, and MPFR where the bracket cannot decide (docs/backward.md, "Softmax and log-softmax backward", derives the
// constants used here).
#include "oracle/softmax/softmax_bwd_ref.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "base/parallel.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

namespace {

using mpfr_ref::Mpfr;
constexpr double kInf = std::numeric_limits<double>::infinity();

inline bool masked(SoftmaxFn fn, double y) { return fn == SoftmaxFn::LogSoftmax && y == -kInf; }

/// The bits a sum of exact terms can occupy: every term a multiple of 2^low below 2^top.
struct Span {
  int top = INT_MIN, low = INT_MAX;
  void add(int t, int l) {
    top = std::max(top, t);
    low = std::min(low, l);
  }
  bool empty() const { return top == INT_MIN; }
};

/// The exact D (softmax: sum dy_k y_k) or G (log-softmax: sum of the unmasked dy_k) of a finite row in MPFR: each term
/// exact at 110 bits, mpfr_sum at a precision holding the sum exactly (every term a multiple of 2^low, the sum below
/// 2^(top + ceil(log2 n) + 1)). span receives the sum's bits.
void exact_dot(SoftmaxFn fn, const double* y, const double* dy, std::size_t n, Mpfr& out, Span& span) {
  std::deque<Mpfr> terms;
  for (std::size_t k = 0; k < n; ++k) {
    if (masked(fn, y[k])) continue;
    const double a = dy[k], b = fn == SoftmaxFn::Softmax ? y[k] : 1.0;
    if (a == 0 || b == 0) continue;
    terms.emplace_back(110);
    mpfr_set_d(terms.back(), a, MPFR_RNDN);
    mpfr_mul_d(terms.back(), terms.back(), b, MPFR_RNDN);  // 53 x 53 bits: exact
    span.add(top_exponent(a) + top_exponent(b) + 1, low_exponent(a) + low_exponent(b));
  }
  if (terms.empty()) {
    mpfr_set_prec(out, 2);
    mpfr_set_zero(out, 1);
    return;
  }
  span.top += std::bit_width(n) + 1;
  mpfr_set_prec(out, span.top - span.low + 2);
  std::vector<mpfr_ptr> ptrs;
  for (auto& t : terms) ptrs.push_back(t.get());
  mpfr_sum(out, ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);  // exact at this precision
}

Rounded special(const Format& out, double v) { return round_double(out, v, Rounder::nearest(out)); }

/// Softmax's dx_j computed exactly in MPFR (dy_j - D, times y_j, times s: each step at a precision holding its result)
/// and rounded once.
Rounded softmax_exact(double yj, double dyj, double s, const Mpfr& d, const Span& span, const Format& out, double* value) {
  Span st = span;
  if (dyj != 0) st.add(top_exponent(dyj), low_exponent(dyj));
  if (st.empty()) return special(out, 0.0);
  Mpfr t(st.top + 2 - st.low + 2);
  mpfr_set_d(t, dyj, MPFR_RNDN);
  mpfr_sub(t, t, d, MPFR_RNDN);  // exact
  Mpfr v(mpfr_get_prec(t) + 110);
  mpfr_mul_d(v, t, yj, MPFR_RNDN);  // exact
  mpfr_mul_d(v, v, s, MPFR_RNDN);   // exact
  if (value) *value = mpfr_get_d(v, MPFR_RNDN);
  if (mpfr_zero_p(v)) return special(out, 0.0);
  return mpfr_ref::round(out, v, Rounder::nearest(out));
}

/// Log-softmax's dx_j by Ziv's loop: E = e^{y_j} at p bits (|E - e^{y_j}| <= 2^-p |E| unless exact), E G exactly,
/// t = dy_j - E G at p + 64 bits, s t exactly; the bracket v +- |s| (2^-p |E G| + 2^-(p+64) |t|) rounded both ways.
/// E below MPFR's range: the value is s dy_j - s e^{y_j} G with |s e^{y_j} G| far below one ulp of s dy_j at 256 bits
/// (or s dy_j = 0): s dy_j nudged one 256-bit ulp toward -s G rounds as the exact value does (no rounding boundary of a
/// format up to binary32 lies strictly inside that ulp).
Rounded log_softmax_ziv(double yj, double dyj, double s, const Mpfr& g, const Format& out, double* value) {
  const Rounder rn = Rounder::nearest(out);
  for (long p = 128;; p *= 2) {
    Mpfr e(p);
    mpfr_clear_underflow();
    Mpfr ya(64);
    mpfr_set_d(ya, yj, MPFR_RNDN);
    const int te = mpfr_exp(e, ya, MPFR_RNDN);
    if (mpfr_underflow_p() || mpfr_zero_p(e)) {
      Mpfr v(256);
      mpfr_set_d(v, dyj, MPFR_RNDN);
      mpfr_mul_d(v, v, s, MPFR_RNDN);  // exact
      const int dir = -mpfr_sgn(g.get()) * (s > 0 ? 1 : -1);
      if (dir > 0) mpfr_nextabove(v);
      if (dir < 0) mpfr_nextbelow(v);
      if (value) *value = mpfr_get_d(v, MPFR_RNDN);
      return mpfr_ref::round(out, v, rn);
    }
    Mpfr eg(p + mpfr_get_prec(g));
    mpfr_mul(eg, e, g, MPFR_RNDN);  // exact
    Mpfr t(p + 64);
    mpfr_set_d(t, dyj, MPFR_RNDN);
    const int tt = mpfr_sub(t, t, eg, MPFR_RNDN);
    Mpfr v(p + 64 + 60);
    mpfr_mul_d(v, t, s, MPFR_RNDN);  // exact: 24-bit s
    if (value) *value = mpfr_get_d(v, MPFR_RNDN);
    if (te == 0 && tt == 0) return mpfr_zero_p(v) ? special(out, 0.0) : mpfr_ref::round(out, v, rn);
    Mpfr w(64), x(64);
    mpfr_set_zero(w, 1);
    if (te != 0) {
      mpfr_abs(x, eg, MPFR_RNDU);
      mpfr_mul_2si(x, x, -p, MPFR_RNDU);
      mpfr_add(w, w, x, MPFR_RNDU);
    }
    if (tt != 0) {
      mpfr_abs(x, t, MPFR_RNDU);
      mpfr_mul_2si(x, x, -(p + 64), MPFR_RNDU);
      mpfr_add(w, w, x, MPFR_RNDU);
    }
    mpfr_mul_d(w, w, std::fabs(s), MPFR_RNDU);
    Mpfr lo(p + 200), hi(p + 200);
    mpfr_sub(lo, v, w, MPFR_RNDD);
    mpfr_add(hi, v, w, MPFR_RNDU);
    const Rounded a = mpfr_ref::round(out, lo, rn), b = mpfr_ref::round(out, hi, rn);
    if (a.code == b.code || p >= (1L << 16)) return mpfr_ref::round(out, v, rn);
  }
}

/// An element whose value is decided before any arithmetic (docs/backward.md, "Special values"): v set, true.
bool special_value(SoftmaxFn fn, double yj, double dyj, const SoftmaxBwdRow& r, double s, double& v) {
  if (masked(fn, yj)) {
    v = 0;
    return true;
  }
  if (r.finite && std::isfinite(yj) && std::isfinite(dyj)) {
    if (fn == SoftmaxFn::Softmax && yj == 0) {
      v = 0;
      return true;
    }
    return false;
  }
  v = fn == SoftmaxFn::Softmax ? s * (yj * (dyj - r.dot)) : s * (dyj - std::exp(yj) * r.dot);
  return true;
}

/// The fast bracket of a finite element (docs/backward.md, "Reference"): v and w with |dx_j - v| <= w; false where it
/// does not apply (log-softmax: y_j outside exp_fast's [-690, 690]; s y_j not exact in double).
bool fast_bracket(SoftmaxFn fn, double yj, double dyj, double s, const RefValue& d, double& v, double& w) {
  if (fn == SoftmaxFn::Softmax) {
    const double sy = s * yj;
    if (std::fma(s, yj, -sy) != 0) return false;
    const RefValue ts = ref_from_two_sum(dyj, -d.hi);  // dy_j - D_hi = a + ae exactly (TwoSum)
    const double a = ts.hi, ae = ts.lo;
    const double b = a + (ae - d.lo);
    v = sy * b;
    // |t - b| <= 2^-53 |D_lo| (D - D_hi - D_lo) + 2^-53 |ae - D_lo| (1 + u) + 2^-53 |b|; the product 2^-53 |v|.
    const double et = 0x1p-52 * (std::fabs(ae) + std::fabs(d.lo) + std::fabs(b));
    w = (std::fabs(sy) * et + 0x1p-51 * std::fabs(v)) * (1 + 0x1p-50) + 0x1p-1000;
    return true;
  }
  if (!(yj >= -690 && yj <= 690)) return false;
  const double e = math::exp_fast(math::ExpKind::Exp, yj, math::exp_tables());  // |e - e^y| <= 2^-48 e^y
  const double p1 = e * d.hi, p2 = e * d.lo;
  const RefValue ts = ref_from_two_sum(dyj, -p1);
  const double a = ts.hi, ae = ts.lo;
  const double b = a + (ae - p2);
  v = s * b;
  // |t - b| <= 2^-47.99 |e| |G| (exp) + 2^-53 (|p1| + |p2| + |e| |G - D_hi - D_lo| / ...) + 2^-53 (|ae| + |p2|) + 2^-53 |b|.
  const double et = 0x1p-47 * std::fabs(e) * (std::fabs(d.hi) + std::fabs(d.lo)) +
                    0x1p-52 * (std::fabs(p1) + std::fabs(p2) + std::fabs(ae) + std::fabs(b));
  w = (std::fabs(s) * et + 0x1p-51 * std::fabs(v)) * (1 + 0x1p-50) + 0x1p-1000;
  return true;
}

}  // namespace

SoftmaxBwdRow softmax_bwd_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n) {
  SoftmaxBwdRow r;
  double sum = 0, abs = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (masked(fn, y[k])) continue;
    const double t = fn == SoftmaxFn::Softmax ? dy[k] * y[k] : dy[k];
    if (!std::isfinite(dy[k]) || (fn == SoftmaxFn::Softmax && !std::isfinite(y[k]))) r.finite = false;
    sum += t;
    abs += std::fabs(t);
    ++r.terms;
  }
  if (!r.finite) {
    r.dot = sum;
    r.abs_dot = kInf;
    return r;
  }
  ExactSum acc;
  for (std::size_t k = 0; k < n; ++k) {
    if (masked(fn, y[k])) continue;
    if (fn == SoftmaxFn::Softmax) acc.add_product(dy[k], y[k]);
    else acc.add(dy[k]);
  }
  r.dot = acc.round_nearest();
  // Each product exact in double (formats up to binary32) or rounded (2^-53), n - 1 additions: (n + 1) 2^-53 relative.
  r.abs_dot = abs * (1 + static_cast<double>(n + 1) * 0x1p-52);
  return r;
}

void softmax_bwd_reference_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n, double scale, const Format& out,
                               std::uint64_t* codes, double* value, SoftmaxBwdRefStats* stats) {
  const SoftmaxBwdRow row = softmax_bwd_row(fn, y, dy, n);
  const Rounder rn = Rounder::nearest(out);
  if (stats) stats->elements += static_cast<std::int64_t>(n);
  RefValue d;
  bool fast = row.finite;
  if (row.finite) {
    ExactSum acc;
    for (std::size_t k = 0; k < n; ++k) {
      if (masked(fn, y[k])) continue;
      if (fn == SoftmaxFn::Softmax) acc.add_product(dy[k], y[k]);
      else acc.add(dy[k]);
    }
    std::uint8_t status = 0;
    d = acc.finalize(status);
    fast = (status & 6) == 0;  // no overflow, not tiny: hi + lo carries 106 bits
  }
  std::unique_ptr<Mpfr> exact;  // D or G in MPFR, made on first need
  Span span;
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0, w = 0;
    if (special_value(fn, y[i], dy[i], row, scale, v)) {
      codes[i] = special(out, v).code;
      if (value) value[i] = v;
      continue;
    }
    if (fast && fast_bracket(fn, y[i], dy[i], scale, d, v, w)) {
      const std::uint64_t c0 = round_double(out, v - w, rn).code, c1 = round_double(out, v + w, rn).code;
      if (c0 == c1) {
        codes[i] = c0;
        if (value) value[i] = v;
        continue;
      }
    }
    if (stats) ++stats->mpfr;
    if (!exact) {
      exact = std::make_unique<Mpfr>(2);
      exact_dot(fn, y, dy, n, *exact, span);
    }
    double vv = v;
    codes[i] = (fn == SoftmaxFn::Softmax ? softmax_exact(y[i], dy[i], scale, *exact, span, out, &vv)
                                          : log_softmax_ziv(y[i], dy[i], scale, *exact, out, &vv))
                   .code;
    if (value) value[i] = vv;
  }
}

SoftmaxBwdRef softmax_bwd_reference(SoftmaxFn fn, const double* y, const double* dy, std::int64_t rows, std::int64_t cols,
                                    double scale, const Format& out, unsigned threads) {
  SoftmaxBwdRef r;
  const auto total = static_cast<std::size_t>(rows * cols);
  r.code.resize(total);
  r.value.resize(total);
  const unsigned workers = threads ? threads : thread_count();
  std::vector<SoftmaxBwdRefStats> per(workers + 1);
  parallel_for(static_cast<std::uint64_t>(rows), 1, [&](std::uint64_t b, std::uint64_t e, unsigned w) {
    for (std::uint64_t row = b; row < e; ++row) {
      const std::size_t at = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
      softmax_bwd_reference_row(fn, y + at, dy + at, static_cast<std::size_t>(cols), scale, out, r.code.data() + at,
                                r.value.data() + at, &per[std::min<std::size_t>(w, workers)]);
    }
  }, workers);
  for (const auto& s : per) {
    r.stats.elements += s.elements;
    r.stats.mpfr += s.mpfr;
  }
  return r;
}

void softmax_bwd_mpfr_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n, double scale, const Format& out, long prec,
                          std::uint64_t* codes) {
  const SoftmaxBwdRow row = softmax_bwd_row(fn, y, dy, n);
  std::deque<Mpfr> terms;
  for (std::size_t k = 0; k < n; ++k) {
    if (masked(fn, y[k]) || !row.finite) continue;
    terms.emplace_back(prec);
    mpfr_set_d(terms.back(), dy[k], MPFR_RNDN);
    if (fn == SoftmaxFn::Softmax) mpfr_mul_d(terms.back(), terms.back(), y[k], MPFR_RNDN);
  }
  std::vector<mpfr_ptr> ptrs;
  for (auto& t : terms) ptrs.push_back(t.get());
  Mpfr d(prec), t(prec), v(prec);
  mpfr_sum(d, ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
  for (std::size_t i = 0; i < n; ++i) {
    double sv;
    if (special_value(fn, y[i], dy[i], row, scale, sv)) {
      codes[i] = special(out, sv).code;
      continue;
    }
    if (fn == SoftmaxFn::Softmax) {
      mpfr_set_d(t, dy[i], MPFR_RNDN);
      mpfr_sub(t, t, d, MPFR_RNDN);
      mpfr_mul_d(v, t, y[i], MPFR_RNDN);
    } else {
      mpfr_set_d(t, y[i], MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_mul(t, t, d, MPFR_RNDN);
      mpfr_d_sub(v, dy[i], t, MPFR_RNDN);
    }
    mpfr_mul_d(v, v, scale, MPFR_RNDN);
    codes[i] = mpfr_zero_p(v) ? special(out, 0.0).code : mpfr_ref::round(out, v, Rounder::nearest(out)).code;
  }
}

}  // namespace fpcert
