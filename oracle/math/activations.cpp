// oracle/math/activations.cpp — sigmoid, SiLU, softplus and GELU (erf and tanh forms) correctly rounded: special values and
// clamps, then Ziv's loop over an MPFR evaluation at w bits whose relative error is proved below c 2^-w (docs/elementwise.md,
// "Activations"). MPFR only: no fast path.
#include "oracle/math/activations.hpp"

#include <mpfr.h>

#include <cmath>

#include "oracle/mpfr_ref.hpp"

namespace fpcert::math {

namespace {

using mpfr_ref::Mpfr;

// x = M 2^E, M a 24-bit integer (x an fp32 value, nonzero, finite).
void split_float(float x, std::uint64_t& m, int& e) {
  int ex = 0;
  const double fr = std::frexp(std::fabs(static_cast<double>(x)), &ex);  // exact
  m = static_cast<std::uint64_t>(std::ldexp(fr, 24));
  e = ex - 24;
}

// |x| times (1 - a hair) or (1 + a hair), the hair below 2^-60 relative, with the sign of x: (M 2^40 -+ 1 + f) 2^(E - 40),
// 0 < f < 1. Both lie strictly between |x| and the nearest grid point of 2^-55 ulp(x) (the finest grid of any destination's
// boundaries, stochastic rounding's 32 bits included, near x) on that side, as does the exact value where it is used.
Rounded near_x(float x, bool above, const Format& d, const Rounder& r, std::uint32_t rbits) {
  std::uint64_t m = 0;
  int e = 0;
  split_float(x, m, e);
  const std::uint64_t sig = (m << 40) - (above ? 0 : 1);
  return round_exact(d, Exact{FpClass::Normal, x < 0, sig, e - 40, true}, r, rbits);
}
// (2^64 - 1 + f) 2^-64: in (1 - 2^-56, 1), as tanh's stand-in.
Rounded below_one(const Format& d, const Rounder& r, std::uint32_t rbits) {
  return round_exact(d, Exact{FpClass::Normal, false, ~std::uint64_t{0}, -64, true}, r, rbits);
}

// The bound's exponent: |y - f(x)| <= 2^(kLog2C - w) |f(x)| for every function below (c <= 2^12, docs).
constexpr int kLog2C = 13;

// f(x) at w bits (round-to-nearest in every step); returns false when the value is exact (all steps exact).
void compute(Fn f, float x, mpfr_ptr y, mpfr_prec_t w) {
  Mpfr in(24), t(w), s(w), k(w), c(w);
  mpfr_set_flt(in, x, MPFR_RNDN);  // exact
  switch (f) {
    case Fn::Sigmoid:  // 1 / (1 + e^-x): 3 roundings, the sum's relative error at most the exponential's: c = 4
    case Fn::Silu:     // x / (1 + e^-x): the same: c = 4
      mpfr_neg(t, in, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(s, t, 1, MPFR_RNDN);
      if (f == Fn::Sigmoid) mpfr_ui_div(y, 1, s, MPFR_RNDN);
      else mpfr_div(y, in, s, MPFR_RNDN);
      return;
    case Fn::Softplus:  // log1p(e^x): a relative d in t moves log1p(t) by at most d relative (log1p(t) >= t/(1+t)): c = 4
      mpfr_exp(t, in, MPFR_RNDN);
      mpfr_log1p(y, t, MPFR_RNDN);
      return;
    case Fn::GeluErf:  // (x/2) erfc(-x/sqrt 2): the argument within 3u, erfc's condition <= 402 on |x| <= 20: c = 2^11
      mpfr_sqrt_ui(c, 2, MPFR_RNDN);
      mpfr_div(t, in, c, MPFR_RNDN);
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_erfc(s, t, MPFR_RNDN);
      mpfr_mul(y, s, in, MPFR_RNDN);
      mpfr_div_2ui(y, y, 1, MPFR_RNDN);  // exact
      return;
    case Fn::GeluTanh:  // x sigmoid(z), z = 2 sqrt(2/pi) (x + 0.044715 x^3): z within 9u relative, |z| <= 265: c = 2^12
      mpfr_const_pi(c, MPFR_RNDN);
      mpfr_ui_div(c, 2, c, MPFR_RNDN);
      mpfr_sqrt(c, c, MPFR_RNDN);
      mpfr_set_str(k, "0.044715", 10, MPFR_RNDN);
      mpfr_mul(t, in, in, MPFR_RNDN);
      mpfr_mul(t, t, in, MPFR_RNDN);
      mpfr_mul(t, t, k, MPFR_RNDN);
      mpfr_add(t, t, in, MPFR_RNDN);
      mpfr_mul(t, t, c, MPFR_RNDN);
      mpfr_mul_2ui(t, t, 1, MPFR_RNDN);  // z, exact doubling
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(s, t, 1, MPFR_RNDN);
      mpfr_div(y, in, s, MPFR_RNDN);
      return;
    default: mpfr_set_nan(y); return;
  }
}

}  // namespace

std::optional<Rounded> activation_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x, inf = __builtin_inf();
  if (xd != xd) return round_double(d, xd, r, rbits);
  switch (f) {
    case Fn::Sigmoid:
      if (xd == 0) return round_double(d, 0.5, r, rbits);  // exact
      if (xd == inf) return round_double(d, 1.0, r, rbits);
      if (xd == -inf) return round_double(d, 0.0, r, rbits);
      if (xd > 40.0) return below_one(d, r, rbits);                // 1 - sigmoid(x) < e^-40 < 2^-57
      if (xd < -127.0) return round_double(d, 0x1p-200, r, rbits);  // sigmoid(x) < e^x < 2^-183
      return std::nullopt;
    case Fn::Silu:
      if (xd == 0 || xd == inf) return round_double(d, xd, r, rbits);
      if (xd == -inf) return round_double(d, -0.0, r, rbits);         // the limit, from below
      if (xd > 40.0) return near_x(x, false, d, r, rbits);           // x - x (1 - sigmoid x): below x by < 2^-57 x
      if (xd < -140.0) return round_double(d, -0x1p-200, r, rbits);  // |x| e^x <= 140 e^-140 < 2^-194
      return std::nullopt;
    case Fn::Softplus:
      if (xd == inf) return round_double(d, inf, r, rbits);
      if (xd == -inf) return round_double(d, 0.0, r, rbits);
      if (xd > 40.0) return near_x(x, true, d, r, rbits);            // x + log1p(e^-x): above x by < e^-40 < 2^-57
      if (xd < -127.0) return round_double(d, 0x1p-200, r, rbits);  // log1p(e^x) < e^x < 2^-183
      return std::nullopt;
    case Fn::GeluErf:
    case Fn::GeluTanh:
      if (xd == 0 || xd == inf) return round_double(d, xd, r, rbits);
      if (xd == -inf) return round_double(d, -0.0, r, rbits);
      if (xd > 10.0) return near_x(x, false, d, r, rbits);  // erf form: x erfc(7.07)/2 < 2^-75 x; tanh form: e^-87 < 2^-125
      if (xd < (f == Fn::GeluErf ? -20.0 : -15.0)) return round_double(d, -0x1p-200, r, rbits);  // < 2^-280 in magnitude
      return std::nullopt;
    default: return std::nullopt;
  }
}

Rounded activation_mpfr(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  if (auto s = activation_special(f, x, d, r, rbits)) return *s;
  for (mpfr_prec_t w = 96;; w *= 2) {
    Mpfr y(w), e(w), lo(w), hi(w);
    compute(f, x, y, w);
    // The exact value lies in [y - |e|, y + |e|], e = y 2^(kLog2C + 1 - w) (>= 2^(kLog2C - w) |f(x)| since |y| >= |f|/2);
    // lo and hi round outward, so the bracket holds it too. Rounding is monotone: equal codes decide.
    mpfr_mul_2si(e, y, kLog2C + 1 - static_cast<long>(w), MPFR_RNDN);  // exact
    mpfr_abs(e, e, MPFR_RNDN);
    mpfr_sub(lo, y, e, MPFR_RNDD);
    mpfr_add(hi, y, e, MPFR_RNDU);
    const Rounded a = mpfr_ref::round(d, lo, r, rbits), b = mpfr_ref::round(d, hi, r, rbits);
    if (a.code == b.code) return a;
    if (w > (1 << 14)) return mpfr_ref::round(d, y, r, rbits);  // never reached: no exact non-special results
  }
}

}  // namespace fpcert::math
