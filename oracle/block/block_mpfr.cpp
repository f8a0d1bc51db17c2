// oracle/block/block_mpfr.cpp — block-scaled formats in MPFR: the reference oracle/block/block_format.cpp is held to.
#include "oracle/block/block_mpfr.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "oracle/mpfr_ref.hpp"

namespace fpcert::mpfr_ref {
namespace {

constexpr mpfr_prec_t kWide = 256;

/// The element format's largest value, from MPFR (MXINT8: 127 * 2^-6 from the integer range).
void max_elem(mpfr_ptr out, const BlockFormat& f) {
  if (f.int_elements) mpfr_set_ui_2exp(out, 127, -6, MPFR_RNDN);
  else max_finite(out, *f.element);
}

/// floor(log2 |x|) of a nonzero MPFR number (MPFR writes x = m 2^E with 1/2 <= |m| < 1).
long floor_log2(mpfr_srcptr x) { return static_cast<long>(mpfr_get_exp(x)) - 1; }

/// The scale exponent of an E8M0 rule, unclamped, for 0 < amax < Inf.
long pow2_exponent(const BlockFormat& f, ScaleRule r, mpfr_srcptr amax) {
  Mpfr mx(64);
  max_elem(mx, f);
  const long emax = floor_log2(mx);  // the largest element binade, from the largest element itself
  switch (r) {
    case ScaleRule::Floor: return floor_log2(amax) - emax;
    case ScaleRule::Ceil: {
      // The smallest c with 2^c >= amax.
      long c = floor_log2(amax);
      if (mpfr_cmp_ui_2exp(amax, 1, c) > 0) ++c;
      return c - emax;
    }
    case ScaleRule::Even: {
      Mpfr t(f.element->precision());  // MXINT8: int8_elem's precision is 7 (1.xxxxxx), as 127 = 1111111b
      mpfr_set(t, amax, MPFR_RNDN);    // amax rounded to the element's precision, ties to even
      return floor_log2(t) - emax;
    }
    case ScaleRule::RCeil: {
      // The smallest e with max_elem * 2^e >= amax, by search from below.
      long e = floor_log2(amax) - emax - 2;
      Mpfr t(64);
      for (;; ++e) {
        mpfr_mul_2si(t, mx, e, MPFR_RNDN);  // exact
        if (mpfr_cmp(t, amax) >= 0) return e;
      }
    }
  }
  return 0;
}

/// v in MPFR, exact: the value of an e4m3 code used unsigned.
void e4m3_unsigned(mpfr_ptr out, std::uint8_t code) { set_code(out, e4m3, code & 0x7F); }

}  // namespace

void div_round_to_odd(mpfr_ptr q, mpfr_srcptr a, mpfr_srcptr b) {
  const mpfr_prec_t p = mpfr_get_prec(q);
  Mpfr t(p - 1);
  const int inexact = mpfr_div(t, a, b, MPFR_RNDZ);
  mpfr_set(q, t, MPFR_RNDN);  // exact: p > p - 1
  if (inexact != 0) {
    // The exact quotient lies strictly between t and t + ulp_{p-1}(t) (away from zero): t + ulp_p(t)
    // (odd last bit at precision p) is inside the interval.
    if (mpfr_sgn(q) > 0) mpfr_nextabove(q);
    else mpfr_nextbelow(q);
  }
}

std::uint8_t block_scale_code(const BlockFormat& f, ScaleRule r, double amax, bool nonfinite, double tensor_scale) {
  if (r == ScaleRule::Ceil && !f.pow2_scales()) throw std::invalid_argument("ceil needs power-of-two scales");
  if (nonfinite) return f.pow2_scales() ? 0xFF : 0x7F;
  Mpfr a(64);
  mpfr_set_d(a, amax, MPFR_RNDN);  // exact
  if (f.pow2_scales()) {
    if (mpfr_zero_p(a)) return 0;
    const long e = pow2_exponent(f, r, a);
    if (e < -127) return 0;
    if (e > 127) return 0xFF;
    return static_cast<std::uint8_t>(e + 127);
  }
  if (mpfr_zero_p(a)) return 0x01;
  Mpfr d(64), q(kWide);
  mpfr_set_d(d, tensor_scale, MPFR_RNDN);
  mpfr_mul_ui(d, d, 6, MPFR_RNDN);  // exact: 24 + 3 bits
  div_round_to_odd(q, a, d);
  const Rounding dir = r == ScaleRule::Floor ? Rounding::TowardZero : r == ScaleRule::Even ? Rounding::NearestEven : Rounding::Up;
  const Rounded s = round(e4m3, q, Rounder{dir, Saturation::Finite, NanPayload::Canonical});
  const std::uint8_t c = static_cast<std::uint8_t>(s.code & 0x7F);
  return c == 0 ? std::uint8_t{0x01} : c;
}

ElementCode quantize_element(const BlockFormat& f, double x, std::uint8_t scale, double tensor_scale, Rounding r,
                             std::uint32_t rbits) {
  Mpfr y(kWide);
  if (f.pow2_scales()) {
    mpfr_set_d(y, x, MPFR_RNDN);
    mpfr_mul_2si(y, y, -(static_cast<long>(scale) - 127), MPFR_RNDN);  // exact
  } else {
    Mpfr xv(64), d(64);
    mpfr_set_d(xv, x, MPFR_RNDN);
    e4m3_unsigned(d, scale);
    mpfr_mul_d(d, d, tensor_scale, MPFR_RNDN);  // exact: 4 + 24 bits
    if (mpfr_zero_p(xv)) mpfr_set(y, xv, MPFR_RNDN);
    else div_round_to_odd(y, xv, d);
  }
  ElementCode e;
  if (!f.int_elements) {
    const Rounded rr = round(*f.element, y, Rounder{r, Saturation::Finite, NanPayload::Canonical}, rbits);
    e.code = static_cast<std::uint8_t>(rr.code);
    e.flags = static_cast<std::uint8_t>(((rr.flags & kInexact) ? kElemInexact : 0) | ((rr.flags & kOverflow) ? kElemSaturated : 0));
    if (x != 0 && (rr.code & f.element->magnitude_mask()) == 0) e.flags |= kElemFlushed;
    return e;
  }
  // MXINT8: k = y * 2^6 rounded to an integer, |k| clamped to 127.
  Mpfr z(kWide + 8), k(kWide + 8);
  mpfr_mul_2ui(z, y, 6, MPFR_RNDN);  // exact
  const bool inexact = !mpfr_integer_p(z);
  switch (r) {
    case Rounding::NearestEven: mpfr_rint(k, z, MPFR_RNDN); break;
    case Rounding::NearestAway: mpfr_round(k, z); break;
    case Rounding::TowardZero: mpfr_rint(k, z, MPFR_RNDZ); break;
    case Rounding::Up: mpfr_rint(k, z, MPFR_RNDU); break;
    case Rounding::Down: mpfr_rint(k, z, MPFR_RNDD); break;
    case Rounding::Stochastic: {
      // |k| = floor(|z|) + 1 iff floor(2^32 * frac(|z|)) + rbits >= 2^32.
      Mpfr az(kWide + 8), fl(kWide + 8), fr(kWide + 40);
      mpfr_abs(az, z, MPFR_RNDN);
      mpfr_floor(fl, az);
      mpfr_sub(fr, az, fl, MPFR_RNDN);  // exact
      mpfr_mul_2ui(fr, fr, 32, MPFR_RNDN);
      const unsigned long D = mpfr_get_ui(fr, MPFR_RNDZ);
      if (D + rbits >= (1UL << 32)) mpfr_add_ui(fl, fl, 1, MPFR_RNDN);
      mpfr_copysign(k, fl, z, MPFR_RNDN);
      break;
    }
  }
  long kv = mpfr_get_si(k, MPFR_RNDN);
  const bool sat = kv > 127 || kv < -127;
  if (kv > 127) kv = 127;
  if (kv < -127) kv = -127;
  e.code = static_cast<std::uint8_t>(static_cast<std::int8_t>(kv));
  e.flags = static_cast<std::uint8_t>((inexact || sat ? kElemInexact : 0) | (sat ? kElemSaturated : 0));
  if (x != 0 && kv == 0) e.flags |= kElemFlushed;
  return e;
}

bool dequantize(mpfr_ptr out, const BlockFormat& f, std::uint8_t code, std::uint8_t scale_code, double tensor_scale) {
  if (f.pow2_scales() ? scale_code == 0xFF : (scale_code & 0x7F) == 0x7F) return false;
  if (f.int_elements) {
    mpfr_set_si(out, static_cast<std::int8_t>(code), MPFR_RNDN);
    mpfr_mul_2si(out, out, -6, MPFR_RNDN);
  } else {
    const std::uint64_t c = code & f.element->code_mask();
    const FpClass cls = classify(*f.element, c);
    if (cls == FpClass::NaN) return false;
    if (cls == FpClass::Inf) {
      mpfr_set_inf(out, code_is_negative(*f.element, c) ? -1 : 1);
      return true;
    }
    set_code(out, *f.element, c);
    if (cls == FpClass::Zero && code_is_negative(*f.element, c)) mpfr_setsign(out, out, 1, MPFR_RNDN);
  }
  if (f.pow2_scales()) {
    mpfr_mul_2si(out, out, static_cast<long>(scale_code) - 127, MPFR_RNDN);
  } else {
    Mpfr s(64);
    e4m3_unsigned(s, scale_code);
    mpfr_mul(out, out, s, MPFR_RNDN);  // exact at out's precision (>= 64): 2 + 4 + 24 bits
    mpfr_mul_d(out, out, tensor_scale, MPFR_RNDN);
  }
  return true;
}

double nvfp4_tensor_scale(double amax_tensor) {
  if (!(amax_tensor > 0) || !std::isfinite(amax_tensor)) return 1.0;
  Mpfr a(64), d(64), q(kWide);
  mpfr_set_d(a, amax_tensor, MPFR_RNDN);
  mpfr_set_ui(d, 448 * 6, MPFR_RNDN);
  div_round_to_odd(q, a, d);
  const Rounded r = round(f32, q, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Canonical});
  const double ts = to_double(f32, r.code);
  return ts > 0 ? ts : std::ldexp(1.0, -149);
}

}  // namespace fpcert::mpfr_ref
