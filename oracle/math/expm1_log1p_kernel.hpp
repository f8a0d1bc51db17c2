// oracle/math/expm1_log1p_kernel.hpp — the fast paths of expm1, log1p, tanh, sinh and cosh in plain double arithmetic (no libm, no
// allocation), for host and device as exp_kernel.hpp (FPCERT_HD). Near 0 a Taylor polynomial of f(x)/x (no cancellation);
// elsewhere exp_fast minus 1 and log_fast of 1 + x (their proved bounds carried through). docs/elementwise.md, "expm1 and
// log1p" and "tanh, sinh, cosh", derives the bounds.
#pragma once

#include "oracle/math/exp_kernel.hpp"
#include "oracle/math/log_kernel.hpp"

namespace fpcert::math {

/// |y - expm1(x)| <= E |expm1(x)| for finite x in [-40, 90] (the caller answers the rest).
inline constexpr double kExpm1ErrorBound = 0x1p-45;
/// The bracket B = 4E: (1 - 2^-45)(1 + 2^-43)(1 - 2^-53) > 1 + 2^-45.
inline constexpr double kExpm1Bracket = 0x1p-43;
/// |y - log1p(x)| <= E |log1p(x)| for finite x > -1.
inline constexpr double kLog1pErrorBound = 0x1p-48;
inline constexpr double kLog1pBracket = 0x1p-46;

/// expm1(x), x an fp32 value in [-40, 90].
///  |x| < 1/8: x q(x), q(x) = sum_{k<=11} x^k/(k+1)! by Horner as 1 + x (1/2 + x (1/6 + ...)): truncation 2^-68.5,
///  rounding <= 3.7 u (relative, q >= 0.94): <= 2^-51.
///  else: exp_fast(x) - 1: 2^-49 e^x absolute (exp_fast's proved bound) over |e^x - 1| >= e^x / 8.51, plus one rounding:
///  <= 8.51 2^-49 + 2^-53 < 2^-45.
FPCERT_HD inline double expm1_fast(double x, const ExpTables& t) {
  if (x > -0.125 && x < 0.125) {
    constexpr double c3 = 1.0 / 6, c4 = 1.0 / 24, c5 = 1.0 / 120, c6 = 1.0 / 720, c7 = 1.0 / 5040, c8 = 1.0 / 40320,
                     c9 = 1.0 / 362880, c10 = 1.0 / 3628800, c11 = 1.0 / 39916800, c12 = 1.0 / 479001600;
    const double tail = 0.5 + x * (c3 + x * (c4 + x * (c5 + x * (c6 + x * (c7 + x * (c8 + x * (c9 + x * (c10 + x * (c11 + x * c12)))))))));
    return x * (1.0 + x * tail);
  }
  return exp_fast(ExpKind::Exp, x, t) - 1.0;
}

/// log1p(x), x a finite fp32 value > -1.
///  |x| < 2^-5: x q(x), q(x) = sum_{k<=11} (-x)^k/(k+1) by Horner as 1 + x (-1/2 + x (1/3 - ...)): truncation 2^-63.5,
///  rounding <= 2.4 u: <= 2^-51.7.
///  else: s = 1 + x (exact below 2^53: x's last bit is >= 2^-29; above, relative 2^-53: 2^-53 absolute on log s >= 36),
///  h = s rounded to 24 bits (an fp32 value other than 1: |log s| >= log(1 + 2^-5) > 0.0307), c = (s - h)/h (s - h exact,
///  |c| <= 2^-24), log1p(x) = log h + log1p(c) ~ log_fast(h) + (c - c^2/2): 2^-49 (1 + 2^-19) + 2^-73 / 0.0307 + u
///  < 2^-48.
FPCERT_HD inline double log1p_fast(double x, const LogTables& t) {
  if (x > -0x1p-5 && x < 0x1p-5) {
    constexpr double c3 = 1.0 / 3, c5 = 1.0 / 5, c6 = 1.0 / 6, c7 = 1.0 / 7, c9 = 1.0 / 9, c10 = 1.0 / 10, c11 = 1.0 / 11,
                     c12 = 1.0 / 12;
    const double tail =
        -0.5 + x * (c3 + x * (-0.25 + x * (c5 + x * (-c6 + x * (c7 + x * (-0.125 + x * (c9 + x * (-c10 + x * (c11 + x * -c12)))))))));
    return x * (1.0 + x * tail);
  }
  const double s = 1.0 + x;
  const double h = static_cast<double>(static_cast<float>(s));  // nearest 24-bit value (no overflow: s <= FLT_MAX + 1)
  const double c = (s - h) / h;
  return log_fast(LogKind::Log, h, t) + (c - 0.5 * c * c);
}

/// |y - tanh(a)| <= E tanh(a) for a = |x| in (0, 20].
inline constexpr double kTanhErrorBound = 0x1p-45;
inline constexpr double kTanhBracket = 0x1p-43;

/// tanh(a) for an fp32 value a in (0, 20]: e = expm1_fast(2a) (2a is an fp32 value too: exact doubling), tanh(a) =
/// e / (e + 2). The relative error of e / (e + 2) in e is scaled by 2 / (e + 2) <= 1; with expm1_fast's proved
/// 2^-45.9 (docs/elementwise.md, "expm1") and the two roundings: <= 2^-45.9 + 2^-52 < 2^-45.
FPCERT_HD inline double tanh_fast(double a, const ExpTables& t) {
  const double e = expm1_fast(2.0 * a, t);
  return e / (e + 2.0);
}

/// sinh(a) for an fp32 value a in (0, 90]: e = expm1_fast(a), sinh(a) = (e + e / (e + 1)) / 2. Both terms are positive;
/// e / (e + 1) carries e's relative error scaled by 1 / (e + 1) <= 1 plus two roundings, the sum one more, the halving none:
/// <= 2^-45.9 + 3u < 2^-45.
inline constexpr double kSinhErrorBound = 0x1p-45;
inline constexpr double kSinhBracket = 0x1p-43;
FPCERT_HD inline double sinh_fast(double a, const ExpTables& t) {
  const double e = expm1_fast(a, t);
  return (e + e / (e + 1.0)) * 0.5;
}

/// cosh(a) for an fp32 value a in [0, 90]: y = exp_fast(a) (2^-49, "exp family"), cosh(a) = (y + 1/y) / 2: 1/y carries
/// 2^-49 + u, the sum of positives u more, the halving none: <= 2^-49 + 2u < 2^-48.
inline constexpr double kCoshErrorBound = 0x1p-48;
inline constexpr double kCoshBracket = 0x1p-46;
FPCERT_HD inline double cosh_fast(double a, const ExpTables& t) {
  const double y = exp_fast(ExpKind::Exp, a, t);
  return (y + 1.0 / y) * 0.5;
}

}  // namespace fpcert::math
