// oracle/math/binary.cpp — the binary functions' oracle (binary.hpp): MPFR through Ziv's loop, special values first.
#include "oracle/math/binary.hpp"

#include <mpfr.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "oracle/math/elementary.hpp"
#include "oracle/math/ziv_mpfr.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert::math {

bool is_odd_integer(double v) { return std::fabs(v) < 0x1p24 && v == std::floor(v) && std::fmod(std::fabs(v), 2.0) == 1.0; }

namespace {

using mpfr_ref::Mpfr;

/// A result MPFR gives as NaN, an infinity or a zero is exact: rounded from its double (a NaN becomes the quiet NaN).
std::optional<Rounded> special_result(mpfr_srcptr y, const Format& d, const Rounder& r, std::uint32_t rbits) {
  if (mpfr_nan_p(y)) return round_double(d, std::nan(""), r, rbits);
  if (mpfr_inf_p(y) || mpfr_zero_p(y)) return round_double(d, mpfr_get_d(y, MPFR_RNDN), r, rbits);
  return std::nullopt;
}

}  // namespace

Rounded evaluate_binary(Fn f, float x1, float x2, const Format& d, const Rounder& r, std::uint32_t rbits) {
  if (!is_binary(f)) throw std::invalid_argument("evaluate_binary: " + std::string(to_string(f)) + " takes one input (elementary.hpp)");
  const double a = x1, b = x2;
  if (f == Fn::Fmax || f == Fn::Fmin) {
    // maxNum / minNum (IEEE 754-2008 5.3.1, C's fmax/fmin): a NaN operand yields the other one; both NaN: NaN. Equal values
    // (+0 and -0) may return either: the check's ulp distance counts +0 and -0 as one value.
    if (a != a) return round_double(d, b, r, rbits);
    if (b != b) return round_double(d, a, r, rbits);
    return round_double(d, (f == Fn::Fmax) == (a > b) ? a : b, r, rbits);
  }
  if (f == Fn::Pow && a == a && b == b && std::isfinite(a) && std::isfinite(b) && a != 0 && b != 0 && std::fabs(a) != 1) {
    // |x1|^x2 = 2^t, t = x2 log2|x1|, |t| <= 2^128 * 149: MPFR's exponent range (+-2^30) would overflow or underflow. t is
    // computed in double (relative error below 2^-50): beyond +-300 the exact result lies above 2^299 or below 2^-299, far
    // past every destination's overflow threshold or under half its least subnormal, and rounds as a stand-in 2^+-400 does.
    // The sign: negative for x1 < 0 and an odd integer x2; x1 < 0 and a non-integer x2 is NaN (MPFR answers below).
    const bool integer = b == std::floor(b);
    const double t = b * std::log2(std::fabs(a));
    if ((a > 0 || integer) && (t > 300 || t < -300)) {
      const double mag = t > 0 ? 0x1p400 : 0x1p-400;
      return round_double(d, a < 0 && is_odd_integer(b) ? -mag : mag, r, rbits);
    }
  }
  Mpfr u(24), v(24), probe(64);
  mpfr_set_flt(u, x1, MPFR_RNDN);  // exact
  mpfr_set_flt(v, x2, MPFR_RNDN);
  auto eval = [&](mpfr_ptr y) {
    switch (f) {
      case Fn::Div: return mpfr_div(y, u, v, MPFR_RNDN);
      case Fn::Pow: return mpfr_pow(y, u, v, MPFR_RNDN);
      default: return mpfr_atan2(y, u, v, MPFR_RNDN);  // atan2(y = x1, x = x2)
    }
  };
  // Special values (NaN, infinities, zeros: IEEE 754 9.2 / C Annex F, as MPFR documents them) are exact: answered from a
  // first evaluation; a finite nonzero value goes through Ziv's loop. Quotients of fp32 values (2^-277 .. 2^277), atan2's
  // values (|atan2| >= 2^-277 when nonzero) and pow's values within 2^+-300 stay far inside MPFR's exponent range.
  eval(probe);
  if (auto s = special_result(probe, d, r, rbits)) return *s;
  return ziv_mpfr(d, r, rbits, eval);
}

std::uint32_t binary_ref_f32(Fn f, float x1, float x2) {
  const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  return static_cast<std::uint32_t>(evaluate_binary(f, x1, x2, f32, rn).code);
}

}  // namespace fpcert::math
