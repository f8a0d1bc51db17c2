// generators/detmath.cpp — log and exp from IEEE basic operations only, in a fixed order.
#include "generators/detmath.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__FAST_MATH__)
#error "generators/detmath.cpp must not be compiled with -ffast-math: its results would depend on the compiler"
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace fpcert {
namespace {

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^13: kLn2Hi is ln 2 truncated to 40
// significant bits, kLn2Lo = RN(ln 2 - kLn2Hi) (from ln 2 to 80 digits; detmath_test.cpp checks
// the functions built on them against MPFR).
constexpr double kLn2Hi = 0x1.62e42fefa2000p-1;
constexpr double kLn2Lo = 0x1.9ef35793c7673p-41;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;  // RN(1 / ln 2)
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;   // RN(sqrt 2)

/// 2 / (2j + 1): the coefficients of 2 atanh(s) = 2s + s * sum_j (2 / (2j + 1)) s^(2j).
/// Each is one correctly rounded division of exact small integers (compile-time, exact IEEE).
constexpr double atanh_coef(int j) { return 2.0 / (2.0 * j + 1.0); }

/// 1 / j!: exact integers up to 18! in double, one correctly rounded division.
constexpr double inv_factorial(int j) {
  double f = 1.0;
  for (int i = 2; i <= j; ++i) f *= i;
  return 1.0 / f;
}

/// 2^k as a double for -1022 <= k <= 1023, from its bits.
inline double pow2i(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

/// Knuth's TwoSum: s = RN(a + b) and e with a + b = s + e exactly (6 basic operations).
inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// Dekker's exact square (no FMA): p = RN(a a), e with a a = p + e exactly, for |a| < 2^995.
inline void two_square(double a, double& p, double& e) {
  const double c = 134217729.0 * a;  // 2^27 + 1: Veltkamp's split a = ah + al, 26 + 27 bits
  const double ah = c - (c - a), al = a - ah;
  p = a * a;
  e = ((ah * ah - p) + 2.0 * ah * al) + al * al;
}

}  // namespace

double det_log(double x) {
  // Special values.
  if (std::isnan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  // x = 2^k * m, m in [1, 2): exact bit manipulation (subnormals scaled into the normal range).
  int k = 0;
  std::uint64_t u = std::bit_cast<std::uint64_t>(x);
  if ((u >> 52) == 0) {
    x *= 0x1p54;  // exact
    k = -54;
    u = std::bit_cast<std::uint64_t>(x);
  }
  k += static_cast<int>(u >> 52) - 1023;
  double m = std::bit_cast<double>((u & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);
  // m in (sqrt2 / 2, sqrt2]: then f = m - 1 is exact (Sterbenz) and |s| <= 0.1716.
  if (m > kSqrt2) {
    m *= 0.5;  // exact
    k += 1;
  }
  const double f = m - 1.0;
  // log(1 + f) = 2 atanh(s), s = f / (2 + f): 2 atanh(s) = 2s + s T, T = sum_{j>=1} (2/(2j+1)) s^(2j).
  // With s (2 + f) = f this is  log(1 + f) = f - h + s (h + T),  h = f^2 / 2
  // (check: f - s f + s T and s f = f^2 / (2 + f) = h - s h). z = s^2 <= 0.02944; 10 terms of T
  // leave a truncation below z^11 * 2/23 < 2^-57 relative to T.
  const double s = f / (2.0 + f);
  const double z = s * s;
  double t = atanh_coef(10);
  for (int j = 9; j >= 1; --j) t = atanh_coef(j) + z * t;
  t = z * t;
  double hp, he;  // h = f^2 / 2 exactly as hp + he (halving is exact)
  two_square(f, hp, he);
  hp *= 0.5;
  he *= 0.5;
  const double kd = static_cast<double>(k);
  // Sum the large terms k ln2_hi + f - hp exactly (TwoSum), the small ones in double, round once
  // at the end: the result is within 0.5 ulp plus the small terms' errors (< 0.2 ulp).
  double s1, e1, s2, e2;
  two_sum(kd * kLn2Hi, f, s1, e1);  // kd * kLn2Hi is exact (|k| < 2^13)
  two_sum(s1, -hp, s2, e2);
  const double small = ((e1 + e2) - he) + (s * (hp + t) + kd * kLn2Lo);
  return s2 + small;
}

double det_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.8) return std::numeric_limits<double>::infinity();  // e^709.79 > DBL_MAX
  if (x < -745.2) return 0.0;                                      // below half the smallest subnormal
  // x = k ln2 + r, |r| <= ln2 / 2 (plus rounding): k = round-half-even(x / ln 2).
  const double kd = std::nearbyint(x * kInvLn2);  // IEEE roundToIntegral: exact, deterministic
  const int k = static_cast<int>(kd);
  // r = rh + rl: rh = x - k ln2_hi is exact (k ln2_hi is exact for |k| < 2^13, and x is within a
  // factor 2 of it when k != 0: Sterbenz); rl = -k ln2_lo carries the rest.
  const double rh = x - kd * kLn2Hi;
  const double rl = -(kd * kLn2Lo);
  const double r = rh + rl;
  // e^r = 1 + r + q, q = r^2/2! + ... + r^13/13!: for |r| <= 0.3466 the first omitted term is
  // below 0.3466^14 / 14! < 5e-18, a twentieth of an ulp of 1.
  double q = inv_factorial(13);
  for (int j = 12; j >= 2; --j) q = inv_factorial(j) + r * q;
  q = r * r * q;
  // 1 + rh exactly (TwoSum), then the small terms, one final rounding: within 0.5 ulp plus the
  // small terms' errors (< 0.2 ulp).
  double s1, e1;
  two_sum(1.0, rh, s1, e1);
  const double er = s1 + (e1 + (rl + q));
  // Scale by 2^k exactly; for k outside the normal exponent range split it in two steps (the
  // second may round once into the subnormal range, identically everywhere).
  if (k > 1023) return er * pow2i(1023) * pow2i(k - 1023);
  if (k < -1022) return er * pow2i(-1022) * pow2i(k + 1022);
  return er * pow2i(k);
}

double det_log2(double x) {
  // Powers of two exactly: log of m == 1 is 0 and k * kLn2Hi * kInvLn2 would not be exactly k.
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x);
  if (x > 0 && std::isfinite(x) && (u >> 52) != 0 && (u & 0x000FFFFFFFFFFFFFULL) == 0)
    return static_cast<double>(static_cast<int>(u >> 52) - 1023);
  return det_log(x) * kInvLn2;
}

double det_pow(double x, double y) {
  if (x == 0 && y > 0) return 0.0;
  return det_exp(y * det_log(x));
}

}  // namespace fpcert
