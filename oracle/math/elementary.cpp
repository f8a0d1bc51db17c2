// oracle/math/elementary.cpp — tables (MPFR), special values, the Ziv bracket and the MPFR fall-back.
#include "oracle/math/elementary.hpp"

#include <gmp.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "oracle/math/activations.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/math/ziv_mpfr.hpp"

namespace fpcert::math {

std::string_view to_string(Fn f) {
  switch (f) {
    case Fn::Exp: return "exp";
    case Fn::Exp2: return "exp2";
    case Fn::Exp10: return "exp10";
    case Fn::Log: return "log";
    case Fn::Log2: return "log2";
    case Fn::Log10: return "log10";
    case Fn::Sqrt: return "sqrt";
    case Fn::Rsqrt: return "rsqrt";
    case Fn::Expm1: return "expm1";
    case Fn::Log1p: return "log1p";
    case Fn::Tanh: return "tanh";
    case Fn::Sinh: return "sinh";
    case Fn::Cosh: return "cosh";
    case Fn::Cbrt: return "cbrt";
    case Fn::Erf: return "erf";
    case Fn::Erfc: return "erfc";
    case Fn::Sigmoid: return "sigmoid";
    case Fn::Silu: return "silu";
    case Fn::Softplus: return "softplus";
    case Fn::GeluErf: return "gelu";
    case Fn::GeluTanh: return "gelu_tanh";
    case Fn::Sin: return "sin";
    case Fn::Cos: return "cos";
    case Fn::Tan: return "tan";
    case Fn::Sinpi: return "sinpi";
    case Fn::Cospi: return "cospi";
    case Fn::Div: return "div";
    case Fn::Pow: return "pow";
    case Fn::Atan2: return "atan2";
    case Fn::Fmax: return "fmax";
    case Fn::Fmin: return "fmin";
  }
  return "?";
}

std::optional<Fn> parse_fn(std::string_view s) {
  for (Fn f : kAllFns)
    if (to_string(f) == s) return f;
  for (Fn f : kBinaryFns)
    if (to_string(f) == s) return f;
  return std::nullopt;
}

namespace {

using mpfr_ref::Mpfr;

// hi: c rounded to `bits` significant bits; lo: c - hi rounded to double.
void split(mpfr_srcptr c, int bits, double& hi, double& lo) {
  Mpfr h(bits), d(256);
  mpfr_set(h, c, MPFR_RNDN);
  hi = mpfr_get_d(h, MPFR_RNDN);  // exact: bits <= 53
  mpfr_sub(d, c, h, MPFR_RNDN);    // exact at 256 bits
  lo = mpfr_get_d(d, MPFR_RNDN);
}

ExpTables make_exp_tables() {
  ExpTables t{};
  Mpfr v(256), w(256);
  for (int j = 0; j < 64; ++j) {
    mpfr_set_si(v, j, MPFR_RNDN);
    mpfr_div_ui(v, v, 64, MPFR_RNDN);  // exact
    mpfr_exp2(v, v, MPFR_RNDN);
    t.two_j64[j] = mpfr_get_d(v, MPFR_RNDN);
  }
  mpfr_const_log2(v, MPFR_RNDN);
  t.ln2 = mpfr_get_d(v, MPFR_RNDN);
  mpfr_div_ui(w, v, 64, MPFR_RNDN);
  split(w, 39, t.ln2_64_hi, t.ln2_64_lo);
  mpfr_ui_div(w, 64, v, MPFR_RNDN);
  t.inv_ln2_64 = mpfr_get_d(w, MPFR_RNDN);
  mpfr_set_ui(v, 10, MPFR_RNDN);
  mpfr_log(v, v, MPFR_RNDN);
  t.ln10 = mpfr_get_d(v, MPFR_RNDN);
  mpfr_set_ui(v, 2, MPFR_RNDN);
  mpfr_log10(v, v, MPFR_RNDN);
  mpfr_div_ui(w, v, 64, MPFR_RNDN);
  split(w, 39, t.log10_2_64_hi, t.log10_2_64_lo);
  mpfr_ui_div(w, 64, v, MPFR_RNDN);
  t.inv_log10_2_64 = mpfr_get_d(w, MPFR_RNDN);
  return t;
}

LogTables make_log_tables() {
  LogTables t{};
  Mpfr c(256), inv(12), v(256), w(256);
  for (int j = -32; j <= 64; ++j) {
    const int i = j + 32;
    mpfr_set_si(c, 128 + j, MPFR_RNDN);
    mpfr_div_ui(c, c, 128, MPFR_RNDN);  // c_j = 1 + j/128, exact
    mpfr_ui_div(inv, 1, c, MPFR_RNDN);  // 1/c_j to 12 bits
    t.inv_c[i] = mpfr_get_d(inv, MPFR_RNDN);  // exact
    mpfr_set(v, inv, MPFR_RNDN);
    mpfr_log(v, v, MPFR_RNDN);
    mpfr_neg(v, v, MPFR_RNDN);  // -log(inv_c) at 256 bits
    t.t_hi[i] = mpfr_get_d(v, MPFR_RNDN);
    mpfr_sub_d(w, v, t.t_hi[i], MPFR_RNDN);
    t.t_lo[i] = mpfr_get_d(w, MPFR_RNDN);
  }
  mpfr_const_log2(v, MPFR_RNDN);
  split(v, 45, t.ln2_hi, t.ln2_lo);
  mpfr_ui_div(w, 1, v, MPFR_RNDN);
  t.inv_ln2 = mpfr_get_d(w, MPFR_RNDN);
  mpfr_set_ui(v, 10, MPFR_RNDN);
  mpfr_log(v, v, MPFR_RNDN);
  mpfr_ui_div(w, 1, v, MPFR_RNDN);
  t.inv_ln10 = mpfr_get_d(w, MPFR_RNDN);
  return t;
}

// Beyond these the exact result lies above 2^129 (every destination overflows, as 2^200 does) or
// below 2^-182 (as 2^-200 is): under half of fp32's least subnormal 2^-149, and so far below it that
// stochastic rounding's 32 discarded bits (down to 2^-181) are all zero for both. So the stand-in lies
// on the same side of every rounding boundary of f32, f16 and bf16 and rounds like the exact value.
// exp: e^90 > 2^129, e^-127 < 2^-183; exp2: direct; exp10: 10^39 > 2^129, 10^-55 < 2^-182.
struct Clamp { double big, tiny; };
Clamp clamp_of(Fn f) {
  switch (f) {
    case Fn::Exp: return {90.0, -127.0};
    case Fn::Exp2: return {129.0, -183.0};
    case Fn::Exp10: return {39.0, -55.0};
    default: return {0, 0};
  }
}

ExpKind kind_of(Fn f) { return exp_kind(f); }

}  // namespace

const ExpTables& exp_tables() {
  static const ExpTables t = make_exp_tables();
  return t;
}

const LogTables& log_tables() {
  static const LogTables t = make_log_tables();
  return t;
}

// The log family's special values (IEEE 754 9.2; docs/elementwise.md, "log family"): NaN -> NaN; x < 0 (and -Inf) ->
// the default NaN (invalid); +-0 -> -Inf (divide by zero); +Inf -> +Inf; log(1) = +0; log2(2^n) = n exactly. The
// other exact case, log10(10^n) for n = 1..10, goes through the bracket (and MPFR's ternary value 0 where it straddles).
static std::optional<Rounded> log_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x;
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (xd < 0) return round_double(d, __builtin_nan(""), r, rbits);
  if (xd == 0) return round_double(d, -__builtin_inf(), r, rbits);
  if (xd == __builtin_inf()) return round_double(d, xd, r, rbits);
  if (xd == 1) return round_double(d, 0.0, r, rbits);
  if (f == Fn::Log2) {
    int e = 0;
    if (__builtin_frexp(xd, &e) == 0.5) return round_double(d, static_cast<double>(e - 1), r, rbits);
  }
  return std::nullopt;
}

// sqrt and rsqrt (docs/elementwise.md, "sqrt and rsqrt"): special values by IEEE 754 9.2 (NaN, x < 0 -> NaN; sqrt(+-0) =
// +-0, rsqrt(+-0) = +-Inf (divide by zero: exact in every mode); sqrt(+Inf) = +Inf, rsqrt(+Inf) = +0); otherwise the value
// itself, exactly, from integer square roots (GMP's mpz: exact integer arithmetic, no MPFR): x = X 2^E with X < 2^25 and
// E even, sqrt(x) = floor(sqrt(X 2^128)) 2^(E/2 - 64) + a fraction that is nonzero iff the remainder is, 1/sqrt(x) =
// floor(sqrt(floor(2^200 / X))) 2^(-E/2 - 100) + a fraction that is nonzero iff either remainder is (floor(sqrt(floor(A)))
// = floor(sqrt(A)) for A >= 0: q^2 <= A iff q^2 <= floor(A)). The quotient, at least 2^64, is cut to its top 64 bits
// with the rest in the sticky bit, and rounded once by round_exact: every destination and mode.
static std::optional<Rounded> root_special(bool rsqrt, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x;
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (xd < 0) return round_double(d, __builtin_nan(""), r, rbits);
  if (xd == 0) return round_double(d, rsqrt ? (std::signbit(x) ? -__builtin_inf() : __builtin_inf()) : xd, r, rbits);
  if (xd == __builtin_inf()) return round_double(d, rsqrt ? 0.0 : xd, r, rbits);
  return std::nullopt;
}

static Rounded root_exact(bool rsqrt, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  if (auto s = root_special(rsqrt, x, d, r, rbits)) return *s;
  const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t ef = b >> 23;
  unsigned long X = ef ? (b & 0x7fffffu) | 0x800000u : b & 0x7fffffu;
  long E = ef ? static_cast<long>(ef) - 150 : -149;  // x = X 2^E
  if (E & 1) {
    X <<= 1;
    --E;
  }
  mpz_t n, q, rem;
  mpz_inits(n, q, rem, nullptr);
  bool inexact;
  long qexp;
  if (!rsqrt) {
    mpz_set_ui(n, X);
    mpz_mul_2exp(n, n, 128);
    mpz_sqrtrem(q, rem, n);
    inexact = mpz_sgn(rem) != 0;
    qexp = E / 2 - 64;
  } else {
    mpz_set_ui(n, 1);
    mpz_mul_2exp(n, n, 200);
    const unsigned long r1 = mpz_tdiv_q_ui(n, n, X);  // n = floor(2^200 / X), r1 the remainder
    mpz_sqrtrem(q, rem, n);
    inexact = r1 != 0 || mpz_sgn(rem) != 0;
    qexp = -E / 2 - 100;
  }
  const auto bits = static_cast<long>(mpz_sizeinbase(q, 2));  // exact in base 2; >= 65: q >= 2^64 (sqrt), > 2^87 (rsqrt)
  const long cut = bits - 64;
  inexact = inexact || mpz_scan1(q, 0) < static_cast<mp_bitcnt_t>(cut);
  mpz_tdiv_q_2exp(q, q, static_cast<mp_bitcnt_t>(cut));
  Exact e{FpClass::Normal, false, 0, static_cast<int>(qexp + cut), inexact};
  e.sig = static_cast<std::uint64_t>(mpz_getlimbn(q, 0));  // 64 bits (GMP limbs are 64 bits on this platform)
  static_assert(GMP_LIMB_BITS == 64);
  mpz_clears(n, q, rem, nullptr);
  return round_exact(d, e, r, rbits);
}

// expm1 and log1p (docs/elementwise.md, "expm1 and log1p"): NaN -> NaN; +-0 -> +-0 exactly. expm1: +Inf -> +Inf, x > 90
// -> the stand-in 2^200 (the exact value exceeds 2^129: overflows alike), -Inf -> -1 exactly, x < -40 -> the stand-in
// -(2^64 - 1 + f) 2^-64 (the exact value -1 + e^x, 0 < e^x < 2^-57.7, and the stand-in both lie in (-1, -1 + 2^-56), where
// no boundary of f32/f16/bf16 nor of stochastic rounding's 32 bits lies). log1p: x < -1 (and -Inf) -> NaN, -1 -> -Inf
// (divide by zero: exact in every mode), +Inf -> +Inf.
// tanh: +-Inf -> +-1 exactly; |x| > 20 -> the stand-in +-(2^64 - 1 + f) 2^-64 (1 - tanh|x| < 2 e^-40 < 2^-56: both in
// (1 - 2^-56, 1), as for expm1 above).
static std::optional<Rounded> near_zero_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x, inf = __builtin_inf();
  if (xd != xd || xd == 0) return round_double(d, xd, r, rbits);
  if (f == Fn::Sinh) {  // +-Inf -> +-Inf; |x| > 90 -> the stand-in +-2^200 (sinh 90 > 2^128.8: overflows alike)
    if (xd > 90.0 || xd < -90.0) return round_double(d, xd == inf || xd == -inf ? xd : (xd > 0 ? 0x1p200 : -0x1p200), r, rbits);
    return std::nullopt;
  }
  if (f == Fn::Tanh) {
    if (xd == inf || xd == -inf) return round_double(d, xd > 0 ? 1.0 : -1.0, r, rbits);
    if (xd > 20.0 || xd < -20.0) return round_exact(d, Exact{FpClass::Normal, xd < 0, ~std::uint64_t{0}, -64, true}, r, rbits);
    return std::nullopt;
  }
  if (f == Fn::Expm1) {
    if (xd == inf || xd == -inf) return round_double(d, xd == inf ? inf : -1.0, r, rbits);
    if (xd > 90.0) return round_double(d, 0x1p200, r, rbits);
    if (xd < -40.0) return round_exact(d, Exact{FpClass::Normal, true, ~std::uint64_t{0}, -64, true}, r, rbits);
    return std::nullopt;
  }
  if (xd < -1.0) return round_double(d, __builtin_nan(""), r, rbits);
  if (xd == -1.0) return round_double(d, -inf, r, rbits);
  if (xd == inf) return round_double(d, inf, r, rbits);
  return std::nullopt;
}

// cosh: NaN -> NaN; +-0 -> 1 exactly; +-Inf -> +Inf; |x| > 90 -> the stand-in 2^200; 0 < |x| < 2^-30 -> the stand-in
// (2^63 + f) 2^-63: cosh x = 1 + x^2/2 + ... and the stand-in both lie in (1, 1 + 2^-55), free of boundaries (as exp's).
static std::optional<Rounded> cosh_special(float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x, a = xd < 0 ? -xd : xd;
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (a == 0) return round_double(d, 1.0, r, rbits);
  if (a == __builtin_inf()) return round_double(d, a, r, rbits);
  if (a > 90.0) return round_double(d, 0x1p200, r, rbits);
  if (a < 0x1p-30) return round_exact(d, Exact{FpClass::Normal, false, std::uint64_t{1} << 63, -63, true}, r, rbits);
  return std::nullopt;
}

// cbrt, erf, erfc (docs/elementwise.md, "cbrt, erf, erfc"; IEEE 754 9.2): NaN -> NaN. cbrt: +-0 -> +-0, +-Inf -> +-Inf (the
// perfect cubes go to MPFR, whose ternary value 0 says exact). erf: +-0 -> +-0; +-Inf -> +-1 exactly; |x| > 7 -> the stand-in
// +-(2^64 - 1 + f) 2^-64 (0 < f < 1): 1 - erf|x| = erfc|x| <= erfc 7 < 2^-74, so the exact value and the stand-in both lie in
// (1 - 2^-56, 1), which holds no boundary of f32, f16, bf16 nor of stochastic rounding's 32 bits (their finest grid in
// [1/2, 1) is 2^-56): as tanh's. erfc: +-0 -> 1 exactly; +Inf -> +0; -Inf -> 2 exactly; x > 12 -> the stand-in 2^-200
// (erfc 12 < 2^-211: below half of fp32's least subnormal and with all 32 stochastic bits zero, as exp's underflow stand-in;
// it also keeps MPFR away from an underflow of its own exponent range for huge x); x < -7 -> the stand-in (2^64 - 1 + f) 2^-63:
// 2 - erfc|x| and it both lie in (2 - 2^-55, 2), free of boundaries (the finest grid in [1, 2) is 2^-55).
static std::optional<Rounded> mpfr_only_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x, inf = __builtin_inf();
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (f == Fn::Cbrt) {
    if (xd == 0 || xd == inf || xd == -inf) return round_double(d, xd, r, rbits);
    return std::nullopt;
  }
  if (f == Fn::Erf) {
    if (xd == 0) return round_double(d, xd, r, rbits);
    if (xd == inf || xd == -inf) return round_double(d, xd > 0 ? 1.0 : -1.0, r, rbits);
    if (xd > 7.0 || xd < -7.0) return round_exact(d, Exact{FpClass::Normal, xd < 0, ~std::uint64_t{0}, -64, true}, r, rbits);
    return std::nullopt;
  }
  if (xd == 0) return round_double(d, 1.0, r, rbits);
  if (xd == inf) return round_double(d, 0.0, r, rbits);
  if (xd == -inf) return round_double(d, 2.0, r, rbits);
  if (xd > 12.0) return round_double(d, 0x1p-200, r, rbits);
  if (xd < -7.0) return round_exact(d, Exact{FpClass::Normal, false, ~std::uint64_t{0}, -63, true}, r, rbits);
  return std::nullopt;
}

// sin, cos, tan, sinpi, cospi (IEEE 754 9.2): NaN -> NaN; +-Inf -> NaN (invalid); sin, tan, sinpi of +-0 -> +-0; cos(+-0) = 1.
// sinpi(n) = +0 for an integer n > 0 and -0 for n < 0 (every fp32 value of magnitude >= 2^23 is an integer); cospi(n + 1/2) = +0;
// cospi(n) = (-1)^n (1 for |x| >= 2^24: even). The other exact results (sinpi of a half-integer, +-1) come from MPFR's ternary
// value 0; sin, cos, tan of a nonzero float are never exact (Lindemann).
static std::optional<Rounded> trig_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  const double xd = x, inf = __builtin_inf();
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (xd == inf || xd == -inf) return round_double(d, __builtin_nan(""), r, rbits);
  if (xd == 0) return round_double(d, f == Fn::Cos || f == Fn::Cospi ? 1.0 : xd, r, rbits);
  if (f == Fn::Sinpi && xd == std::floor(xd)) return round_double(d, xd > 0 ? 0.0 : -0.0, r, rbits);
  if (f == Fn::Cospi) {
    if (xd == std::floor(xd)) return round_double(d, std::fmod(std::fabs(xd), 2.0) == 0 ? 1.0 : -1.0, r, rbits);
    if (xd + 0.5 == std::floor(xd + 0.5)) return round_double(d, 0.0, r, rbits);  // exact: |x| < 2^23 here
  }
  return std::nullopt;
}

// Special values, clamps and exact cases (docs/elementwise.md, "Special values"): shared by both paths.
// exact_roots false (MPFR's path): sqrt and rsqrt answer their special values only.
static std::optional<Rounded> evaluate_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits,
                                               bool exact_roots = true) {
  if (is_root(f)) return exact_roots ? root_exact(f == Fn::Rsqrt, x, d, r, rbits) : root_special(f == Fn::Rsqrt, x, d, r, rbits);
  if (is_log(f)) return log_special(f, x, d, r, rbits);
  if (is_activation(f)) return activation_special(f, x, d, r, rbits);
  if (is_trig(f)) return trig_special(f, x, d, r, rbits);
  if (is_mpfr_only(f)) return mpfr_only_special(f, x, d, r, rbits);
  if (f == Fn::Expm1 || f == Fn::Log1p || f == Fn::Tanh || f == Fn::Sinh) return near_zero_special(f, x, d, r, rbits);
  if (f == Fn::Cosh) return cosh_special(x, d, r, rbits);
  const double xd = x;  // exact (a NaN stays a NaN with its payload, quieted)
  if (xd != xd) return round_double(d, xd, r, rbits);
  if (xd == 0) return round_double(d, 1.0, r, rbits);  // f(+-0) = 1 exactly (IEEE 754 9.2)
  if (xd < 0x1p-60 && xd > -0x1p-60) {
    // f(x) = 1 + c x (1 + O(x)), |c x| < 2^-58 (c <= ln 10): strictly between 1 and 1 +- 2^-56, where no
    // rounding boundary of f32/f16/bf16 lies, and no change of stochastic rounding's 32 discarded bits
    // (they reach 2^-56 below 1, 2^-55 above). A stand-in on the same side of 1 rounds alike:
    // (2^63 + f) 2^-63 or (2^64 - 1 + f) 2^-64, 0 < f < 1.
    const Exact e = xd > 0 ? Exact{FpClass::Normal, false, std::uint64_t{1} << 63, -63, true}
                           : Exact{FpClass::Normal, false, ~std::uint64_t{0}, -64, true};
    return round_exact(d, e, r, rbits);
  }
  const Clamp c = clamp_of(f);
  if (xd > c.big) return round_double(d, 0x1p200, r, rbits);  // also +Inf: +Inf stays +Inf below
  if (xd < c.tiny) {
    if (xd == -__builtin_inf()) return round_double(d, 0.0, r, rbits);  // f(-Inf) = +0 exactly
    return round_double(d, 0x1p-200, r, rbits);
  }
  if (f == Fn::Exp2 && xd == static_cast<double>(static_cast<long>(xd)))  // 2^n exactly
    return round_double(d, pow2i(static_cast<int>(xd)), r, rbits);
  return std::nullopt;
}

std::optional<Rounded> evaluate_fast(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits,
                                     const ExpTables& t, double bracket) {
  if (is_binary(f)) throw std::invalid_argument("evaluate_fast: " + std::string(to_string(f)) + " takes two inputs (oracle/math/binary.hpp)");
  if (auto s = evaluate_special(f, x, d, r, rbits)) return s;
  if (is_mpfr_only(f)) return std::nullopt;  // no fast path yet: MPFR decides
  const double xd = x;
  double y, own;
  if (f == Fn::Expm1) y = expm1_fast(xd, t), own = kExpm1Bracket;
  else if (f == Fn::Log1p) y = log1p_fast(xd, log_tables()), own = kLog1pBracket;
  else if (f == Fn::Tanh) y = xd < 0 ? -tanh_fast(-xd, t) : tanh_fast(xd, t), own = kTanhBracket;
  else if (f == Fn::Sinh) y = xd < 0 ? -sinh_fast(-xd, t) : sinh_fast(xd, t), own = kSinhBracket;
  else if (f == Fn::Cosh) y = cosh_fast(xd < 0 ? -xd : xd, t), own = kCoshBracket;
  else if (is_log(f)) y = log_fast(log_kind(f), xd, log_tables()), own = kLogBracket;
  else y = exp_fast(kind_of(f), xd, t), own = kExpBracket;
  if (bracket <= 0) bracket = own;
  const Rounded lo = round_double(d, y * (1.0 - bracket), r, rbits);
  const Rounded hi = round_double(d, y * (1.0 + bracket), r, rbits);
  if (lo.code != hi.code) return std::nullopt;
  // Same code: the exact value, inside the bracket, rounds to it too (rounding is monotone in the
  // value). The code is the contract; the flags are those of the bracket's ends (docs/elementwise.md).
  Rounded out = lo;
  out.flags = static_cast<std::uint8_t>(lo.flags | hi.flags);
  return out;
}

Rounded ziv_mpfr(const Format& d, const Rounder& r, std::uint32_t rbits, const std::function<int(mpfr_ptr)>& eval) {
  for (mpfr_prec_t p = 64;; p *= 2) {
    Mpfr y(p), lo(p), hi(p);
    const int inex = eval(y);
    if (inex == 0) return mpfr_ref::round(d, y, r, rbits);  // exact (MPFR's ternary value says so)
    // |y - f(x)| < ulp_p(y)/2: f(x) lies strictly between y's neighbours at p bits.
    mpfr_set(lo, y, MPFR_RNDN);
    mpfr_nextbelow(lo);
    mpfr_set(hi, y, MPFR_RNDN);
    mpfr_nextabove(hi);
    const Rounded a = mpfr_ref::round(d, lo, r, rbits), b = mpfr_ref::round(d, hi, r, rbits);
    if (a.code == b.code) return mpfr_ref::round(d, y, r, rbits);  // y lies inside the bracket too
    if (p > 1 << 16) return mpfr_ref::round(d, y, r, rbits);  // never reached for binary32 inputs
  }
}

Rounded evaluate_mpfr(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  if (is_binary(f)) throw std::invalid_argument("evaluate_mpfr: " + std::string(to_string(f)) + " takes two inputs (oracle/math/binary.hpp)");
  // Out of the clamped range MPFR's own exponent range would underflow to 0 (and the bracket then
  // straddle zero): the special cases answer first, as on the fast path.
  if (auto s = evaluate_special(f, x, d, r, rbits, false)) return *s;
  if (is_activation(f)) return activation_mpfr(f, x, d, r, rbits);  // composite: Ziv over a proved bound
  Mpfr in(24);
  mpfr_set_flt(in, x, MPFR_RNDN);  // exact
  return ziv_mpfr(d, r, rbits, [&](mpfr_ptr y) {
    switch (f) {
      case Fn::Exp: return mpfr_exp(y, in, MPFR_RNDN);
      case Fn::Exp2: return mpfr_exp2(y, in, MPFR_RNDN);
      case Fn::Exp10: return mpfr_exp10(y, in, MPFR_RNDN);
      case Fn::Log: return mpfr_log(y, in, MPFR_RNDN);
      case Fn::Log2: return mpfr_log2(y, in, MPFR_RNDN);
      case Fn::Log10: return mpfr_log10(y, in, MPFR_RNDN);
      case Fn::Sqrt: return mpfr_sqrt(y, in, MPFR_RNDN);
      case Fn::Rsqrt: return mpfr_rec_sqrt(y, in, MPFR_RNDN);
      case Fn::Expm1: return mpfr_expm1(y, in, MPFR_RNDN);
      case Fn::Log1p: return mpfr_log1p(y, in, MPFR_RNDN);
      case Fn::Tanh: return mpfr_tanh(y, in, MPFR_RNDN);
      case Fn::Sinh: return mpfr_sinh(y, in, MPFR_RNDN);
      case Fn::Cosh: return mpfr_cosh(y, in, MPFR_RNDN);
      case Fn::Cbrt: return mpfr_cbrt(y, in, MPFR_RNDN);
      case Fn::Erf: return mpfr_erf(y, in, MPFR_RNDN);
      case Fn::Erfc: return mpfr_erfc(y, in, MPFR_RNDN);
      case Fn::Sin: return mpfr_sin(y, in, MPFR_RNDN);
      case Fn::Cos: return mpfr_cos(y, in, MPFR_RNDN);
      case Fn::Tan: return mpfr_tan(y, in, MPFR_RNDN);
      case Fn::Sinpi: return mpfr_sinpi(y, in, MPFR_RNDN);
      case Fn::Cospi: return mpfr_cospi(y, in, MPFR_RNDN);
      default: return 0;  // the activations: activation_mpfr above; binary functions refused above
    }
  });
}

MathResult evaluate(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits, const ExpTables* tables,
                    double bracket) {
  if (auto fast = evaluate_fast(f, x, d, r, rbits, tables ? *tables : exp_tables(), bracket)) return {*fast, false};
  return {evaluate_mpfr(f, x, d, r, rbits), true};
}

}  // namespace fpcert::math
