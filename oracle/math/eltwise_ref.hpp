// oracle/math/eltwise_ref.hpp — the elementwise check's arithmetic shared by host and device (issue 42): the
// correctly rounded round-to-nearest-even result of exp, exp2, exp10 decided from exp_fast's proved bracket (or
// "undecided": the caller asks MPFR), ulp distances between codes, and the judgement of a claimed accuracy. Plain
// integer and double arithmetic (no libm, no allocation): a .cu file defines FPCERT_HD as `__host__ __device__`
// before including it. docs/elementwise.md, "Checking a function", states the method.
#pragma once

#include <cstdint>
#include <limits>

#include "oracle/math/exp_kernel.hpp"
#include "oracle/math/expm1_log1p_kernel.hpp"
#include "oracle/math/fn.hpp"
#include "oracle/math/log_kernel.hpp"

namespace fpcert::math {

/// An IEEE binary format of at most 32 bits by its field widths (f32 8/23, f16 5/10, bf16 8/7).
struct CodeFormat {
  int ebits = 8, mbits = 23;
  FPCERT_HD constexpr int width() const { return 1 + ebits + mbits; }
  FPCERT_HD constexpr std::uint32_t sign_bit() const { return std::uint32_t{1} << (ebits + mbits); }
  FPCERT_HD constexpr std::uint32_t inf_code() const { return ((std::uint32_t{1} << ebits) - 1) << mbits; }
  FPCERT_HD constexpr bool is_nan(std::uint32_t c) const {
    return (c & (sign_bit() - 1)) > inf_code();
  }
};
inline constexpr CodeFormat kCodeF32{8, 23}, kCodeF16{5, 10}, kCodeBf16{8, 7};

/// A double rounded to nearest-even into f (subnormals and overflow to Inf as IEEE 754 has them), as a code.
/// v must be 0, +-Inf or a normal double (the callers' values lie in [2^-1000, 2^1000]); NaN gives the quiet NaN.
FPCERT_HD inline std::uint32_t round_rn_code(double v, CodeFormat f) {
  std::uint64_t b;
  __builtin_memcpy(&b, &v, sizeof b);
  const std::uint32_t sign = (b >> 63) ? f.sign_bit() : 0u;
  const int be = static_cast<int>((b >> 52) & 0x7ff);
  if (be == 0x7ff) return (b & ((std::uint64_t{1} << 52) - 1)) ? f.inf_code() | (std::uint32_t{1} << (f.mbits - 1)) : sign | f.inf_code();
  if (be == 0) return sign;  // +-0 (a subnormal double is far below every format's least subnormal)
  const int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
  const int e = be - 1023;                       // v = m53 2^(e - 52), m53 in [2^52, 2^53)
  const std::uint64_t m53 = (b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  const int E = e > emin ? e : emin;             // the exponent of the result's quantum 2^(E - mbits)
  const int shift = 52 - f.mbits + (E - e);      // bits of m53 below that quantum (>= 29 for these formats)
  if (shift > 60) return sign;                   // v < 2^-7 of the least subnormal: rounds to 0
  std::uint64_t keep = m53 >> shift;
  const std::uint64_t rem = m53 & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (keep & 1))) ++keep;
  // Normal: keep in [2^mbits, 2^(mbits+1)] carries its implicit bit into the exponent field; subnormal: E = emin
  // and the field is 0. A carry out of the largest binade reaches the Inf code.
  const std::uint64_t code = (static_cast<std::uint64_t>(E + bias - 1) << f.mbits) + keep;
  return sign | (code >= f.inf_code() ? f.inf_code() : static_cast<std::uint32_t>(code));
}

/// The code's value as a double (exact for these formats).
FPCERT_HD inline double code_value(std::uint32_t c, CodeFormat f) {
  const std::uint32_t mag = c & (f.sign_bit() - 1);
  const double s = (c & f.sign_bit()) ? -1.0 : 1.0;
  const std::uint32_t ef = mag >> f.mbits, m = mag & ((std::uint32_t{1} << f.mbits) - 1);
  const int bias = (1 << (f.ebits - 1)) - 1;
  if (ef == (std::uint32_t{1} << f.ebits) - 1) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  if (ef == 0) return s * static_cast<double>(m) * pow2i(1 - bias - f.mbits);
  return s * static_cast<double>(m | (std::uint32_t{1} << f.mbits)) * pow2i(static_cast<int>(ef) - bias - f.mbits);
}

/// An fp32 input's value as a double, decoded from its bits: exact, and unchanged by a -ftz=true build. There the float to
/// double conversion is cvt.ftz.f64.f32, which reads a subnormal as zero; the -use_fast_math twins compile this header with
/// it (kernels/elementwise/cuda/eltwise_cuda_fastmath.cu), and a twin that keeps subnormal inputs (__tanhf: tanh.approx.f32
/// has no .ftz form) must be judged against f(x), not f(0) (measured on the H100, 2026-12-05: every positive and negative
/// subnormal of tanhf's twin was refused by 2^23 - 1 ulp until this was so). Every reference and the judge read x here.
FPCERT_HD inline double f32_value(float x) {
  std::uint32_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  if ((b & 0x7f800000u) != 0) return static_cast<double>(x);  // normal, Inf or NaN: no flush applies
  const double m = static_cast<double>(b & 0x7fffffu) * 0x1p-149;  // integer to double: exact, no flush
  return (b >> 31) ? -m : m;
}

/// Distance in ulps of f between two codes: how many representable values lie between them, counting one end
/// (+0 and -0 are one value). NaN: both NaN 0, one NaN kNanDistance.
inline constexpr std::uint64_t kNanDistance = ~std::uint64_t{0};
FPCERT_HD inline std::uint64_t ulp_distance(std::uint32_t a, std::uint32_t b, CodeFormat f) {
  const bool na = f.is_nan(a), nb = f.is_nan(b);
  if (na || nb) return na && nb ? 0 : kNanDistance;
  auto ord = [&](std::uint32_t c) {
    const std::int64_t mag = c & (f.sign_bit() - 1);
    return (c & f.sign_bit()) ? -mag : mag;
  };
  const std::int64_t d = ord(a) - ord(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

/// The reference of one input: the correctly rounded (nearest-even) code when the fast path decides it, and the
/// fast value (relative error <= kExpErrorBound; exact or a stand-in for the special cases).
struct RefRn {
  std::uint32_t code = 0;
  bool decided = false;  ///< false: the bracket straddles a rounding boundary, MPFR must decide (the host)
  double value = 0;      ///< f(x) to within kExpErrorBound relative (NaN for a NaN input)
  double unc = 0x1p-47;  ///< |value - f(x)| <= unc |value|: what judge allows for (expm1: 2^-44, its bound E = 2^-45)
};

/// f(x) rounded to nearest-even into `out`, from exp_fast's bracket (the host's evaluate_fast under NearestEven,
/// restricted to it). Special values as docs/elementwise.md's table: NaN -> NaN; +-0 and 0 < |x| < 2^-60 -> 1 (the
/// exact value lies within 2^-56 of 1, where no format of at most 24 bits has a boundary); beyond the clamps +Inf or
/// +0 (the exact value is above 2^129 or below 2^-182, past the overflow threshold or under half the least subnormal).
FPCERT_HD inline RefRn exp_ref_rn(ExpKind kind, float x, CodeFormat out, const ExpTables& t) {
  const double xd = f32_value(x);
  RefRn r;
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  if (xd < 0x1p-60 && xd > -0x1p-60) return {round_rn_code(1.0, out), true, 1.0};
  const double big = kind == ExpKind::Exp ? 90.0 : kind == ExpKind::Exp2 ? 129.0 : 39.0;
  const double tiny = kind == ExpKind::Exp ? -127.0 : kind == ExpKind::Exp2 ? -183.0 : -55.0;
  if (xd > big) return {out.inf_code(), true, std::numeric_limits<double>::infinity()};
  if (xd < tiny) return {0u, true, 0.0};
  const double y = exp_fast(kind, xd, t);
  const std::uint32_t lo = round_rn_code(y * (1.0 - kExpBracket), out), hi = round_rn_code(y * (1.0 + kExpBracket), out);
  r.code = lo;
  r.decided = lo == hi;
  r.value = y;
  return r;
}

/// f(x) rounded to nearest-even for the log family (docs/elementwise.md, "log family"): NaN -> NaN; x < 0 -> NaN;
/// +-0 -> -Inf; +Inf -> +Inf; 1 -> +0; else log_fast's bracket (exact for powers of two in log2: r = 0, T = 0).
FPCERT_HD inline RefRn log_ref_rn(LogKind kind, float x, CodeFormat out, const LogTables& t) {
  const double xd = f32_value(x);
  const std::uint32_t qnan = out.inf_code() | (std::uint32_t{1} << (out.mbits - 1));
  const double inf = std::numeric_limits<double>::infinity();
  if (xd != xd || xd < 0) return {qnan, true, std::numeric_limits<double>::quiet_NaN()};
  if (xd == 0) return {out.sign_bit() | out.inf_code(), true, -inf};
  if (xd == inf) return {out.inf_code(), true, inf};
  if (xd == 1) return {0u, true, 0.0};
  const double y = log_fast(kind, xd, t);
  const std::uint32_t lo = round_rn_code(y * (1.0 - kLogBracket), out), hi = round_rn_code(y * (1.0 + kLogBracket), out);
  return {lo, lo == hi, y};
}

/// Either family by its kind: `log` false: ExpKind(kind), true: LogKind(kind).
FPCERT_HD inline RefRn ref_rn(bool log, std::uint8_t kind, float x, CodeFormat out, const ExpTables& et, const LogTables& lt) {
  return log ? log_ref_rn(static_cast<LogKind>(kind), x, out, lt) : exp_ref_rn(static_cast<ExpKind>(kind), x, out, et);
}

/// The sign of f(x) - m, exactly, for f = sqrt (rsqrt false) or 1/sqrt, x > 0 an fp32 value and m > 0 a value of at most
/// 25 significant bits in [2^-151, 2^129] (a midpoint between two codes of f32, f16 or bf16). docs/elementwise.md,
/// "sqrt and rsqrt": m^2 is exact (<= 50 bits, normal); sqrt(x) - m has the sign of x - m^2; 1/sqrt(x) - m that of
/// 1 - m^2 x, with m^2 = h + l split on bits (h: its top 29 bits, l: the rest) so that h x and l x are exact products
/// (29 + 24 and 24 + 24 bits) and m^2 x = p1 + p2 exactly, 0 <= p2 < 2^-28 p1.
FPCERT_HD inline int root_sign(bool rsqrt, double x, double m) {
  const double m2 = m * m;
  if (!rsqrt) return x > m2 ? 1 : x < m2 ? -1 : 0;
  std::uint64_t b;
  __builtin_memcpy(&b, &m2, sizeof b);
  b &= ~((std::uint64_t{1} << 24) - 1);  // keep 29 significant bits
  double h;
  __builtin_memcpy(&h, &b, sizeof h);
  const double l = m2 - h;  // exact: the low bits of m2
  const double p1 = h * x, p2 = l * x;
  if (p1 >= 2.0) return -1;  // m^2 x >= 2 > 1
  if (p1 < 0.5) return 1;    // m^2 x < 0.5 (1 + 2^-28) < 1
  const double d = p1 - 1.0;  // exact (Sterbenz: p1 in [1/2, 2))
  return -p2 > d ? 1 : -p2 < d ? -1 : 0;  // 1 - m^2 x = -(d + p2): compared exactly
}

/// A non-negative code's value, the Inf code read as 2^(emax + 1) (where the binade above the largest finite would start:
/// the midpoint between it and the largest finite is the overflow threshold of round-to-nearest-even).
FPCERT_HD inline double code_value_or_limit(std::uint32_t c, CodeFormat f) {
  return c == f.inf_code() ? pow2i(1 << (f.ebits - 1)) : code_value(c, f);
}

/// The code of `out` nearest-even to f(x), from a candidate code c within a few codes of it: moved to its neighbour while
/// f(x) lies beyond the midpoint on that side (`sign(m)`: the sign of f(x) - m, exactly; a tie goes to the even code).
/// Non-negative results only (codes of non-negative values, ordered as the values). decided false only if 8 steps did not
/// settle it (never for a candidate within one code).
template <class SignOf>
FPCERT_HD inline bool refine_rn(std::uint32_t& c, CodeFormat out, SignOf sign) {
  for (int step = 0; step < 8; ++step) {
    if (c > 0) {  // below: the midpoint with the code under c
      const int sg = sign((code_value_or_limit(c - 1, out) + code_value_or_limit(c, out)) * 0.5);
      if (sg < 0 || (sg == 0 && (c & 1))) {
        --c;
        continue;
      }
    }
    if (c < out.inf_code()) {  // above
      const int sg = sign((code_value_or_limit(c, out) + code_value_or_limit(c + 1, out)) * 0.5);
      if (sg > 0 || (sg == 0 && (c & 1))) {
        ++c;
        continue;
      }
    }
    return true;
  }
  return false;
}

/// sqrt(x) (rsqrt false) or 1/sqrt(x) rounded to nearest-even into `out`, decided exactly: a candidate code from the double
/// sqrt, then moved to its neighbour while f(x) lies beyond the midpoint on that side (root_sign; a tie goes to the even
/// code). The candidate's accuracy only saves steps: the answer rests on the exact midpoint test alone (docs/elementwise.md,
/// "sqrt and rsqrt"). Special values (IEEE 754 9.2): NaN and x < 0 -> NaN; sqrt(+-0) = +-0, rsqrt(+-0) = +-Inf;
/// sqrt(+Inf) = +Inf, rsqrt(+Inf) = +0. `value`: the double sqrt (correctly rounded by IEEE 754: 2^-53) or 1 over it (2^-52).
FPCERT_HD inline RefRn root_ref_rn(bool rsqrt, float x, CodeFormat out) {
  const double xd = f32_value(x), inf = std::numeric_limits<double>::infinity();
  const std::uint32_t qnan = out.inf_code() | (std::uint32_t{1} << (out.mbits - 1));
  if (xd != xd || xd < 0) return {qnan, true, std::numeric_limits<double>::quiet_NaN()};
  std::uint32_t xb;
  __builtin_memcpy(&xb, &x, sizeof xb);
  const std::uint32_t sign = (xb >> 31) ? out.sign_bit() : 0u;  // reached for -0 only (x < 0 answered above)
  if (xd == 0) return rsqrt ? RefRn{sign | out.inf_code(), true, sign ? -inf : inf} : RefRn{sign, true, xd};
  if (xd == inf) return rsqrt ? RefRn{0u, true, 0.0} : RefRn{out.inf_code(), true, inf};
#ifdef __CUDA_ARCH__
  const double s = ::sqrt(xd);
#else
  const double s = __builtin_sqrt(xd);
#endif
  const double v = rsqrt ? 1.0 / s : s;
  std::uint32_t c = round_rn_code(v, out);
  const bool ok = refine_rn(c, out, [&](double m) { return root_sign(rsqrt, xd, m); });
  return {c, ok, v};
}

/// The sign of x - m^3, exactly, for x > 0 an fp32 value and m > 0 a value of at most 25 significant bits in
/// [2^-151, 2^129] (a midpoint between two codes of f32, f16 or bf16, or the overflow limit). docs/elementwise.md, "cbrt":
/// m^2 is exact (<= 50 bits; m >= 2^-151 keeps it normal), m^3 = hi + lo exactly (TwoProduct by fma: hi = RN(m^2 m), lo the
/// rounding error, normal since hi >= 2^-453). x and hi are doubles: beyond a factor 2 apart the sign is x's side; within
/// it x - hi is exact (Sterbenz), and compared with lo it gives the sign of x - hi - lo.
FPCERT_HD inline int cube_sign(double x, double m) {
  const double m2 = m * m;
  const double hi = m2 * m;
#ifdef __CUDA_ARCH__
  const double lo = ::fma(m2, m, -hi);
#else
  const double lo = __builtin_fma(m2, m, -hi);
#endif
  if (x >= 2 * hi) return 1;  // x - m^3 >= 2 hi - hi - |lo| > 0
  if (2 * x <= hi) return -1;
  const double d = x - hi;  // exact
  return d > lo ? 1 : d < lo ? -1 : 0;
}

/// cbrt(x) rounded to nearest-even into `out`, decided exactly as sqrt is (docs/elementwise.md, "cbrt"): a candidate code
/// from the double cbrt (glibc's or CUDA's, about 1 ulp of double: it only saves steps), moved while cbrt|x| lies beyond a
/// midpoint (cube_sign), the sign put back (cbrt is odd and round-to-nearest-even symmetric). Special values (IEEE 754
/// 9.2): NaN -> NaN; +-0 -> +-0; +-Inf -> +-Inf. `value`: the double cbrt, within 2^-51 relative.
FPCERT_HD inline RefRn cbrt_ref_rn(float x, CodeFormat out) {
  const double xd = f32_value(x), inf = std::numeric_limits<double>::infinity();
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  std::uint32_t xb;
  __builtin_memcpy(&xb, &x, sizeof xb);
  const std::uint32_t sign = (xb >> 31) ? out.sign_bit() : 0u;
  const double a = xd < 0 ? -xd : xd;
  if (a == 0 || a == inf) return {sign | (a == 0 ? 0u : out.inf_code()), true, xd};
#ifdef __CUDA_ARCH__
  const double v = ::cbrt(a);
#else
  const double v = __builtin_cbrt(a);
#endif
  std::uint32_t c = round_rn_code(v, out);
  const bool ok = refine_rn(c, out, [&](double m) { return cube_sign(a, m); });
  RefRn r{sign | c, ok, sign ? -v : v};
  r.unc = 0x1p-51;
  return r;
}

/// The bracket's verdict on y (f(x) within y B/4 relative): the code when both ends round alike.
FPCERT_HD inline RefRn bracket_rn(double y, double bracket, CodeFormat out) {
  const std::uint32_t lo = round_rn_code(y * (1.0 - bracket), out), hi = round_rn_code(y * (1.0 + bracket), out);
  return {lo, lo == hi, y};
}

/// expm1(x) rounded to nearest-even (docs/elementwise.md, "expm1 and log1p"): NaN -> NaN; x > 90 (and +Inf) -> +Inf (the
/// exact value exceeds 2^129); x < -40 (and -Inf) -> -1 (the exact value lies in (-1, -1 + 2^-57.7): no boundary of a
/// 24-bit format or its midpoints there; within 2^-57 of the value -1); else expm1_fast's bracket (+-0 -> +-0 exactly).
FPCERT_HD inline RefRn expm1_ref_rn(float x, CodeFormat out, const ExpTables& t) {
  const double xd = f32_value(x);
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  if (xd > 90.0) return {out.inf_code(), true, std::numeric_limits<double>::infinity()};
  if (xd < -40.0) return {round_rn_code(-1.0, out), true, -1.0};
  RefRn r = bracket_rn(expm1_fast(xd, t), kExpm1Bracket, out);
  r.unc = 0x1p-44;  // E |f| <= E |value| / (1 - E) < 2^-44 |value|
  return r;
}

/// log1p(x) rounded to nearest-even: NaN and x < -1 (also -Inf) -> NaN; -1 -> -Inf; +Inf -> +Inf; else log1p_fast's bracket
/// (+-0 -> +-0 exactly).
FPCERT_HD inline RefRn log1p_ref_rn(float x, CodeFormat out, const LogTables& t) {
  const double xd = f32_value(x), inf = std::numeric_limits<double>::infinity();
  if (xd != xd || xd < -1.0) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, std::numeric_limits<double>::quiet_NaN()};
  if (xd == -1.0) return {out.sign_bit() | out.inf_code(), true, -inf};
  if (xd == inf) return {out.inf_code(), true, inf};
  return bracket_rn(log1p_fast(xd, t), kLog1pBracket, out);
}

/// tanh(x) rounded to nearest-even (docs/elementwise.md, "tanh"): NaN -> NaN; +-0 -> +-0; |x| > 20 (and +-Inf) -> +-1
/// (1 - tanh|x| < 2 e^-40 < 2^-56: far inside the last half ulp below 1 of any 24-bit format); else tanh_fast's bracket.
FPCERT_HD inline RefRn tanh_ref_rn(float x, CodeFormat out, const ExpTables& t) {
  const double xd = f32_value(x);
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  if (xd == 0) return {round_rn_code(xd, out), true, xd};
  const double a = xd < 0 ? -xd : xd;
  if (a > 20.0) return {round_rn_code(xd < 0 ? -1.0 : 1.0, out), true, xd < 0 ? -1.0 : 1.0};
  const double y = tanh_fast(a, t);
  RefRn r = bracket_rn(xd < 0 ? -y : y, kTanhBracket, out);
  r.unc = 0x1p-44;  // E = 2^-45, as expm1
  return r;
}

/// sinh(x) rounded to nearest-even: NaN -> NaN; +-0 -> +-0; |x| > 90 (and +-Inf) -> +-Inf (sinh 90 > 2^128.8: past every
/// format's overflow threshold); else sinh_fast's bracket with the sign put back.
FPCERT_HD inline RefRn sinh_ref_rn(float x, CodeFormat out, const ExpTables& t) {
  const double xd = f32_value(x), inf = std::numeric_limits<double>::infinity();
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  if (xd == 0) return {round_rn_code(xd, out), true, xd};
  if (xd > 90.0 || xd < -90.0) return {round_rn_code(xd > 0 ? inf : -inf, out), true, xd > 0 ? inf : -inf};
  const double y = sinh_fast(xd < 0 ? -xd : xd, t);
  RefRn r = bracket_rn(xd < 0 ? -y : y, kSinhBracket, out);
  r.unc = 0x1p-44;  // E = 2^-45
  return r;
}

/// cosh(x) rounded to nearest-even: NaN -> NaN; |x| > 90 (and +-Inf) -> +Inf; |x| < 2^-30 -> 1 (cosh x - 1 < 2^-61: no
/// boundary of a 24-bit format within it); else cosh_fast's bracket.
FPCERT_HD inline RefRn cosh_ref_rn(float x, CodeFormat out, const ExpTables& t) {
  const double xd = f32_value(x), a = xd < 0 ? -xd : xd;
  if (xd != xd) return {out.inf_code() | (std::uint32_t{1} << (out.mbits - 1)), true, xd};
  if (a > 90.0) return {out.inf_code(), true, std::numeric_limits<double>::infinity()};
  if (a < 0x1p-30) return {round_rn_code(1.0, out), true, 1.0};
  return bracket_rn(cosh_fast(a, t), kCoshBracket, out);
}

/// Every function of the oracle by its name (the device sweep and the host check dispatch here).
FPCERT_HD inline RefRn ref_rn(Fn f, float x, CodeFormat out, const ExpTables& et, const LogTables& lt) {
  switch (f) {
    case Fn::Exp: return exp_ref_rn(ExpKind::Exp, x, out, et);
    case Fn::Exp2: return exp_ref_rn(ExpKind::Exp2, x, out, et);
    case Fn::Exp10: return exp_ref_rn(ExpKind::Exp10, x, out, et);
    case Fn::Log: return log_ref_rn(LogKind::Log, x, out, lt);
    case Fn::Log2: return log_ref_rn(LogKind::Log2, x, out, lt);
    case Fn::Log10: return log_ref_rn(LogKind::Log10, x, out, lt);
    case Fn::Sqrt: return root_ref_rn(false, x, out);
    case Fn::Rsqrt: return root_ref_rn(true, x, out);
    case Fn::Expm1: return expm1_ref_rn(x, out, et);
    case Fn::Log1p: return log1p_ref_rn(x, out, lt);
    case Fn::Tanh: return tanh_ref_rn(x, out, et);
    case Fn::Sinh: return sinh_ref_rn(x, out, et);
    case Fn::Cosh: return cosh_ref_rn(x, out, et);
    case Fn::Cbrt: return cbrt_ref_rn(x, out);
    case Fn::Erf:
    case Fn::Erfc:
    case Fn::Sigmoid:
    case Fn::Silu:
    case Fn::Softplus:
    case Fn::GeluErf:
    case Fn::GeluTanh:
    case Fn::Sin:
    case Fn::Cos:
    case Fn::Tan:
    case Fn::Sinpi:
    case Fn::Cospi: break;  // no fast path yet (fn.hpp, kMpfrOnlyFns): undecided, the host asks MPFR
    case Fn::Div:
    case Fn::Pow:
    case Fn::Atan2:
    case Fn::Fmax:
    case Fn::Fmin: break;  // binary (fn.hpp, kBinaryFns): the host's binary_ref decides them
  }
  RefRn none;
  none.value = std::numeric_limits<double>::quiet_NaN();
  return none;
}

/// What a kernel claims about its results (kernels/elementwise declare it; the check judges it).
enum class ClaimKind : std::uint8_t {
  CorrectlyRounded,  ///< every result is f(x) rounded to nearest-even (0 ulp); on [lo, hi] when either is finite
  Ulp,               ///< ulp distance to the correctly rounded result <= ulps + floor(ulp_slope |x|) (CUDA's __expf); as above
  Absolute,          ///< |y - f(x)| <= bound for x in [lo, hi]; outside, `ulps` ulp when ulps > 0, else no claim (CUDA's __logf)
  Relative,          ///< |y - f(x)| <= bound |f(x)| for x in [lo, hi]; outside as Absolute
};
struct Claim {
  ClaimKind kind = ClaimKind::CorrectlyRounded;
  double ulps = 0, ulp_slope = 0;
  double bound = 0;
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
};

/// The judgement of one result.
struct Judged {
  std::uint64_t ulps = 0;   ///< distance to the correctly rounded code (kNanDistance: a NaN on one side only)
  bool above = false;       ///< beyond the claim
  bool undecided = false;   ///< Absolute/Relative within the reference's own uncertainty of the bound: the host decides
  bool claimed = true;      ///< the claim covers this input (false: outside a ulp claim's domain, or an absolute/relative
                            ///< claim's interval without an ulp part); the largest error is taken over claimed inputs
};

/// Judge result `got` (a code of out) for input x against the reference (its code decided). Ulp and correctly rounded
/// claims are judged on codes, exactly; absolute and relative ones on values, with the reference's uncertainty
/// |value| ref.unc (2^-47 >= kExpErrorBound |f(x)| / |value|; expm1, tanh, sinh 2^-44): a result that close to the bound is undecided.
/// ftz: a kernel that flushes subnormal results to zero; its +-0 where the reference is subnormal (or zero) counts 0 ulp,
/// and where f(x) is tiny before rounding (|f(x)| below the smallest normal, rounding up to it: PTX's .ftz flushes those,
/// measured on the H200 with div.approx.ftz / div.rn.ftz: 0x3f7fffff / 0x7e800000 -> +0), decided from ref.value only
/// when its uncertainty cannot reach the smallest normal (a reference that holds just the rounded code never qualifies);
/// under a ulp claim also where a code the claim allows is subnormal (the flush of a result within the claim).
/// An infinite x (inside the claim's domain) of a unary function, and a pole (f(+-0) or f(-1) infinite), must give the
/// exact result: any other code is beyond every claim (exact_at_inf; false for binary functions, where atan2(+Inf, 1) = pi/2 is a rounded value).
FPCERT_HD inline Judged judge(std::uint32_t got, float x, const RefRn& ref, CodeFormat out, const Claim& c, bool ftz = false,
                              bool exact_at_inf = true) {
  Judged j;
  const std::uint32_t mag = out.sign_bit() - 1;
  if (ftz && (got & mag) == 0 && ((ref.code & mag) >> out.mbits) == 0) return j;
  if (ftz && (got & mag) == 0 && (ref.code & mag) == (std::uint32_t{1} << out.mbits)) {
    const double av = ref.value < 0 ? -ref.value : ref.value;
    if (av * (1 + ref.unc) < code_value(std::uint32_t{1} << out.mbits, out)) return j;
  }
  const double xd = f32_value(x), ax = xd < 0 ? -xd : xd;
  // A ulp claim on a declared domain (lo or hi finite, e.g. Highway's Log on (0, FLT_MAX]) claims nothing outside it.
  const bool ranged = c.lo > -std::numeric_limits<double>::infinity() || c.hi < std::numeric_limits<double>::infinity();
  const bool inside = xd >= c.lo && xd <= c.hi;
  // A ulp claim's limit at x: ulps + floor(ulp_slope |x|).
  const double slope = c.ulp_slope * ax;  // floor of a value below 2^63 (|x| < 2^128, slope < 2)
  const double ulp_lim = c.ulps + (slope < 0x1p62 ? static_cast<double>(static_cast<std::uint64_t>(slope)) : 0x1p62);
  // FTZ flushes the result the kernel computed, and a ulp claim lets that result be any code within ulp_lim of the
  // correctly rounded one: where such a code is subnormal, its flush (+-0) is within the claim (measured on the H200:
  // __fdividef's div.approx.ftz returns -0 for 0x3bcca0a9 / 0xfacca0a9, exactly -2^-126, 2 ulp allowed).
  if (ftz && (got & mag) == 0 && c.kind == ClaimKind::Ulp && (!ranged || inside) &&
      static_cast<double>(ref.code & mag) < static_cast<double>(std::uint32_t{1} << out.mbits) + ulp_lim)
    return j;
  j.ulps = ulp_distance(got, ref.code, out);
  // An infinite input has an exact result (IEEE 754 9.2: exp(+Inf) = +Inf, exp(-Inf) = +0, tanh(-Inf) = -1, log(+Inf) =
  // +Inf): no claim of ulps or of an error bound covers another value there (a saturating store's largest finite value
  // is 1 "ulp" from Inf by the code distance, and is wrong). Inside the claim's domain, any other code is beyond it.
  // The same at a pole, an infinite result of a finite input that is exact, not an overflow (IEEE 754 9.2: log(+-0) =
  // -Inf, rsqrt(+0) = +Inf, log1p(-1) = -Inf; no function here overflows at 0 or -1): the largest finite value there is
  // no rounding of it (measured: rsqrt's 2-ulp claim let a saturating store survive mutation on the H200).
  const double inf = std::numeric_limits<double>::infinity();
  const bool pole = (xd == 0.0 || xd == -1.0) && (ref.code & mag) == out.inf_code();
  const bool value_claim = c.kind == ClaimKind::Absolute || c.kind == ClaimKind::Relative;  // [lo, hi]: its interval, not a domain
  if (exact_at_inf && (ax == inf || pole) && (value_claim ? inside || c.ulps > 0 : !ranged || inside)) {
    j.above = j.ulps != 0;
    return j;
  }
  switch (c.kind) {
    case ClaimKind::CorrectlyRounded:
      j.claimed = !ranged || inside;
      j.above = j.ulps != 0 && j.claimed;
      break;
    case ClaimKind::Ulp: {
      j.claimed = !ranged || inside;
      j.above = static_cast<double>(j.ulps) > ulp_lim && j.claimed;
      break;
    }
    case ClaimKind::Absolute:
    case ClaimKind::Relative: {
      if (!inside) {  // outside: the ulp part, if any
        j.claimed = c.ulps > 0;
        j.above = j.claimed && static_cast<double>(j.ulps) > c.ulps;
        break;
      }
      const double g = code_value(got, out), v = ref.value;
      if (g != g || v != v) { j.above = (g != g) != (v != v); break; }
      if (g == v) break;  // equal values (also the same infinity)
      const double av = v < 0 ? -v : v;
      const double err = g > v ? g - v : v - g, unc = av * ref.unc;
      const double lim = c.kind == ClaimKind::Absolute ? c.bound : c.bound * av;
      if (err > lim + unc + (c.kind == ClaimKind::Relative ? c.bound * unc : 0)) j.above = true;
      else if (err >= lim - unc - (c.kind == ClaimKind::Relative ? c.bound * unc : 0)) j.undecided = true;
      break;
    }
  }
  return j;
}

/// The histogram's bins of ulp distances: 0, 1, 2, 3, 4, then [2^k + 1, 2^(k+1)] for k = 2 .. 30, then above 2^31,
/// and NaN on one side only (the last two).
inline constexpr int kUlpBins = 36;
FPCERT_HD inline int ulp_bin(std::uint64_t ulps) {
  if (ulps == kNanDistance) return kUlpBins - 1;
  if (ulps <= 4) return static_cast<int>(ulps);
  if (ulps > (std::uint64_t{1} << 31)) return kUlpBins - 2;
  int k = 2;  // ulps in [2^k + 1, 2^(k+1)]
  while ((std::uint64_t{1} << (k + 1)) < ulps) ++k;
  return k + 3;
}

}  // namespace fpcert::math
