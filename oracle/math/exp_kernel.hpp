// oracle/math/exp_kernel.hpp — the fast path of exp, exp2 and exp10 in plain double arithmetic (no libm,
// no allocation, no exceptions): the same code can run on a GPU. A .cu file defines FPCERT_HD as
// `__host__ __device__` before including; here it expands to nothing. The tables are plain arrays
// filled once with MPFR (oracle/math/elementary.cpp). docs/elementwise.md derives every bound below.
#pragma once

#include <cstdint>

#ifndef FPCERT_HD
#define FPCERT_HD
#endif

namespace fpcert::math {

/// Tables and constants of the exp family, each the double nearest the exact value (MPFR, RNDN)
/// unless stated.
struct ExpTables {
  double two_j64[64];   ///< 2^(j/64), j = 0..63: relative error <= 2^-53
  double ln2_64_hi;     ///< ln(2)/64 rounded to 39 significant bits: k * hi is exact for |k| < 2^14
  double ln2_64_lo;     ///< ln(2)/64 - hi, rounded: |ln2/64 - hi - lo| <= 2^-53 |lo| <= 2^-99
  double log10_2_64_hi; ///< log10(2)/64 to 39 bits (k * hi exact for |k| < 2^14)
  double log10_2_64_lo; ///< log10(2)/64 - hi, rounded
  double ln2;           ///< ln 2
  double ln10;          ///< ln 10
  double inv_ln2_64;    ///< 64/ln 2 (only picks k: its error moves r, never the result)
  double inv_log10_2_64;///< 64/log10(2)
};

/// The relative error bound E of exp_fast (docs/elementwise.md, "exp family"): |y - f(x)| <= E f(x).
inline constexpr double kExpErrorBound = 0x1p-48;
/// The bracket the caller rounds: y (1 - B) and y (1 + B), each rounded to double, enclose
/// [f(x)(1 - E), f(x)(1 + E)] scaled back: fl(y(1+B)) >= y(1+B)(1-2^-53) > y(1+E) since B = 4E and
/// 1 +- B are exact doubles.
inline constexpr double kExpBracket = 0x1p-46;

enum class ExpKind : std::uint8_t { Exp, Exp2, Exp10 };

/// 2^e for -1022 <= e <= 1023, exact (built from the exponent field).
FPCERT_HD inline double pow2i(int e) {
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double d;
  __builtin_memcpy(&d, &bits, sizeof d);
  return d;
}

/// f(x) for finite x with the result in [2^-1000, 2^1000] (the caller clamps |x| first), with
/// relative error <= kExpErrorBound. Steps (bounds derived in docs/elementwise.md):
///  1. k = nearest integer to x*64/c (c = ln2, 1 or log10 2), r = x - k c/64 with |r| <= c/128 (1+2^-40).
///     exp2: r = x - k/64 exact (x has 24 bits, k/64 a multiple of 2^-6 near x). exp, exp10: Cody-Waite,
///     r1 = x - k*hi exact (k*hi exact: 39 + 14 bits; r1 a multiple of 2^-46 below 2^-7), then
///     r = r1 - k*lo: |error| <= 2^-60 (subtraction) + 2^-85 (k*lo) + 2^-85 (|c/64 - hi - lo| k).
///  2. u = r in natural units (exp: u = r; exp2: u = r ln2; exp10: u = r ln10), |u| <= 0.0055,
///     |u - exact| <= 2^-58 in all three: exp(u) moves by a relative 2^-57.9 at most.
///  3. p(u) = Taylor of e^u to degree 6 by Horner: truncation |u|^7/7! e^|u| <= 2^-65 (relative,
///     e^u >= 0.994); coefficients 1/3!..1/6! rounded: <= 2^-70; Horner's rounding <= gamma_12
///     e^(2|u|) <= 12.1 * 2^-53 = 2^-49.4.
///  4. y = 2^(k>>6) * (T[k&63] * p): T rounded 2^-53, the product 2^-53, the power of two exact.
///  Product of (1 + each): <= 1 + 2^-49 < 1 + kExpErrorBound.
FPCERT_HD inline double exp_fast(ExpKind kind, double x, const ExpTables& t) {
  double r, u;
  long k;
  if (kind == ExpKind::Exp2) {
    const double s = x * 64.0;  // exact: a power-of-two scaling of a float
    k = static_cast<long>(s + (s >= 0 ? 0.5 : -0.5));
    r = x - static_cast<double>(k) * 0x1p-6;  // exact (see 1.)
    u = r * t.ln2;
  } else if (kind == ExpKind::Exp) {
    const double s = x * t.inv_ln2_64;
    k = static_cast<long>(s + (s >= 0 ? 0.5 : -0.5));
    const double kd = static_cast<double>(k);
    r = (x - kd * t.ln2_64_hi) - kd * t.ln2_64_lo;
    u = r;
  } else {
    const double s = x * t.inv_log10_2_64;
    k = static_cast<long>(s + (s >= 0 ? 0.5 : -0.5));
    const double kd = static_cast<double>(k);
    r = (x - kd * t.log10_2_64_hi) - kd * t.log10_2_64_lo;
    u = r * t.ln10;
  }
  // Taylor coefficients 1/i!: 1, 1, 1/2 exact; the rest the double nearest (constant folding of a
  // division of exact integers, correctly rounded by the compiler).
  constexpr double c3 = 1.0 / 6.0, c4 = 1.0 / 24.0, c5 = 1.0 / 120.0, c6 = 1.0 / 720.0;
  const double p = 1.0 + u * (1.0 + u * (0.5 + u * (c3 + u * (c4 + u * (c5 + u * c6)))));
  const long hi = k >= 0 ? k >> 6 : -((-k + 63) >> 6);  // floor(k/64)
  const int j = static_cast<int>(k - hi * 64);
  return pow2i(static_cast<int>(hi)) * (t.two_j64[j] * p);
}

}  // namespace fpcert::math
