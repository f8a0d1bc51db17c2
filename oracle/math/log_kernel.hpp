// oracle/math/log_kernel.hpp — the fast path of log, log2 and log10 in plain double arithmetic (no libm, no
// allocation, no exceptions), for host and device as exp_kernel.hpp (FPCERT_HD). The tables are filled once with MPFR
// (oracle/math/elementary.cpp). docs/elementwise.md, "log family", derives the bound.
#pragma once

#include <cstdint>

#include "oracle/math/exp_kernel.hpp"

namespace fpcert::math {

/// 97 table entries: j = -32 .. 64, c_j = 1 + j/128 (the centres covering m in [0.75, 1.5)).
inline constexpr int kLogTable = 97;
struct LogTables {
  double inv_c[kLogTable];  ///< 1/c_j rounded to 12 significant bits (MPFR, nearest); exactly 1 for j = 0
  double t_hi[kLogTable];   ///< -log(inv_c[j]) rounded to double (0 for j = 0)
  double t_lo[kLogTable];   ///< -log(inv_c[j]) - t_hi, rounded: |exact - hi - lo| <= 2^-104 |exact|
  double ln2_hi;            ///< ln 2 rounded to 45 bits: e * ln2_hi is exact for |e| < 2^8
  double ln2_lo;            ///< ln 2 - ln2_hi, rounded
  double inv_ln2;           ///< 1/ln 2, nearest double
  double inv_ln10;          ///< 1/ln 10, nearest double
};

/// The relative error bound of log_fast (docs/elementwise.md, "log family": <= 2^-50.5 for log, 2^-50 for log2 and
/// log10; this is the bound the bracket uses).
inline constexpr double kLogErrorBound = 0x1p-49;
/// The bracket: fl(y(1 +- B)) enclose f(x) since (1 - 2^-49)(1 + 2^-47)(1 - 2^-53) > 1 + 2^-49 (B = 4E).
inline constexpr double kLogBracket = 0x1p-47;

enum class LogKind : std::uint8_t { Log, Log2, Log10 };

/// f(x) for a positive finite x other than 1 (the caller answers the special values), relative error <= kLogErrorBound.
///  1. x = 2^e m', m' in [0.75, 1.5) (from the double's fields: exact; an fp32 subnormal is a normal double).
///  2. j = round((m' - 1) 128), p = m' inv_c[j] exact (24 + 12 significant bits), r = p - 1 exact (Sterbenz:
///     p in [1/2, 2]); |r| <= 2^-8/0.75 + 2^-12 < 2^-7.5 (j = 0: inv_c = 1, |r| <= 2^-8).
///  3. L = log1p(r) by Horner on the Taylor polynomial of degree 8: truncation |r|^8/9 < 2^-62 relative; Horner
///     rounding <= 2.1 u relative (docs/elementwise.md).
///  4. log x = e ln2 + T_j + L, T_j = -log(inv_c[j]) as t_hi + t_lo; summed as (e ln2_hi + t_hi) + ((e ln2_lo + t_lo) + L).
///     log2 x = e + (t_hi + (t_lo + L)) / ln 2; log10 x = (log x) / ln 10 (times the nearest double of the inverse).
FPCERT_HD inline double log_fast(LogKind kind, double x, const LogTables& t) {
  std::uint64_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  int e = static_cast<int>((b >> 52) & 0x7ff) - 1023;
  std::uint64_t mb = (b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1023} << 52);  // m in [1, 2)
  double m;
  __builtin_memcpy(&m, &mb, sizeof m);
  if (m >= 1.5) {
    m *= 0.5;  // exact
    ++e;
  }
  const double s = (m - 1.0) * 128.0;  // exact: m - 1 is exact (Sterbenz), the product a power-of-two scaling
  const int j = static_cast<int>(s + (s >= 0 ? 0.5 : -0.5));
  const int i = j + 32;
  const double r = m * t.inv_c[i] - 1.0;
  constexpr double c3 = 1.0 / 3.0, c5 = 1.0 / 5.0, c6 = 1.0 / 6.0, c7 = 1.0 / 7.0;
  const double q = 1.0 + r * (-0.5 + r * (c3 + r * (-0.25 + r * (c5 + r * (-c6 + r * (c7 + r * -0.125))))));
  const double L = r * q;
  const double ed = static_cast<double>(e);
  if (kind == LogKind::Log2) return ed + (t.t_hi[i] + (t.t_lo[i] + L)) * t.inv_ln2;
  const double hi = ed * t.ln2_hi + t.t_hi[i];
  const double lo = (ed * t.ln2_lo + t.t_lo[i]) + L;
  const double y = hi + lo;
  return kind == LogKind::Log ? y : y * t.inv_ln10;
}

}  // namespace fpcert::math
