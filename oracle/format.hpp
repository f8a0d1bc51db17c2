// oracle/format.hpp — one descriptor for every binary floating-point format fpcert knows.
//
// A format is sign bits, exponent bits, fraction bits, bias, whether biased exponent 0 holds
// subnormals, and what the top exponent code means (the special-value policy). Everything
// else (emin, emax, largest finite, unit roundoff, the code of Inf or NaN) is derived here
// and cross-checked against published values in tests/oracle/format_test.cpp.
//
// Bits travel as a "code": the packed S|E|M integer of total_bits() bits, low-aligned in a
// uint64_t. tf32 is 19 bits wide in code space; in a 32-bit register it lives in the top
// 19 bits of an fp32 pattern (to_container / from_container).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fpcert {

/// What a format spends its top exponent code on (CUTLASS NanInfEncoding; ml_dtypes suffixes).
enum class Specials : std::uint8_t {
  IEEE,        ///< top exponent code: Inf (fraction 0) and NaNs (fraction != 0)
  FiniteNaN,   ///< "fn": no Inf; only S.1..1.1..1 is NaN, the rest of the top binade is finite
  FiniteOnly,  ///< no Inf, no NaN: every code is a finite number (OCP MX e2m3, e3m2, e2m1)
  ScaleOnly,   ///< unsigned power of two, no zero, all ones is NaN (OCP MX ue8m0)
};

/// Class of an encoded value.
enum class FpClass : std::uint8_t { Zero, Subnormal, Normal, Inf, NaN };

std::string_view to_string(FpClass c);
std::string_view to_string(Specials s);

/// A finite value decoded exactly: (-1)^neg * sig * 2^exp (sig == 0 for zeros).
struct Unpacked {
  FpClass cls = FpClass::Zero;
  bool neg = false;
  std::uint64_t sig = 0;
  int exp = 0;
};

struct Format {
  std::string_view tag;   ///< short tag used everywhere: f32, bf16, e4m3, ...
  std::string_view name;  ///< descriptive name: fp32, bfloat16, float8_e4m3fn, ...
  int sign_bits;          ///< 1, or 0 for ue8m0
  int exp_bits;
  int frac_bits;          ///< stored fraction bits, p - 1
  int bias;
  bool subnormals;        ///< biased exponent 0 encodes 0.f * 2^emin; false: it is one more binade
  Specials specials;
  int container_bits;     ///< width of the integer a value travels in (tf32: 32, ue8m0: 8)

  // ---- derived constants (computed, never typed twice) ----
  constexpr int total_bits() const { return sign_bits + exp_bits + frac_bits; }
  constexpr int precision() const { return frac_bits + 1; }  ///< p
  constexpr int max_biased_exp() const { return (1 << exp_bits) - 1; }
  /// Exponent of the smallest normal binade.
  constexpr int emin() const { return subnormals ? 1 - bias : -bias; }
  /// Exponent of the largest finite binade.
  constexpr int emax() const {
    return (specials == Specials::IEEE || specials == Specials::ScaleOnly) ? max_biased_exp() - 1 - bias
                                                                             : max_biased_exp() - bias;
  }
  constexpr std::uint64_t frac_mask() const { return (std::uint64_t{1} << frac_bits) - 1; }
  constexpr std::uint64_t code_mask() const {
    return total_bits() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << total_bits()) - 1;
  }
  constexpr std::uint64_t sign_mask() const {
    return sign_bits ? std::uint64_t{1} << (exp_bits + frac_bits) : 0;
  }
  constexpr std::uint64_t magnitude_mask() const { return code_mask() & ~sign_mask(); }
  constexpr std::uint64_t exp_field_mask() const {
    return static_cast<std::uint64_t>(max_biased_exp()) << frac_bits;
  }
  constexpr bool has_inf() const { return specials == Specials::IEEE; }
  constexpr bool has_nan() const { return specials != Specials::FiniteOnly; }
  constexpr bool has_zero() const { return specials != Specials::ScaleOnly; }
  constexpr bool is_signed() const { return sign_bits != 0; }
  /// Magnitude code of the largest finite value.
  constexpr std::uint64_t max_finite_code() const {
    switch (specials) {
      case Specials::IEEE: return exp_field_mask() - 1;
      case Specials::FiniteNaN: return magnitude_mask() - 1;
      case Specials::FiniteOnly: return magnitude_mask();
      case Specials::ScaleOnly: return magnitude_mask() - 1;
    }
    return 0;
  }
  /// Magnitude code of +Inf (IEEE formats only).
  constexpr std::uint64_t inf_code() const { return exp_field_mask(); }
  /// The NaN fpcert writes when it must make one: positive, quiet (top fraction bit) for IEEE
  /// formats; the single NaN code for fn and ue8m0. FiniteOnly formats have none (returns 0).
  constexpr std::uint64_t canonical_nan_code() const {
    switch (specials) {
      case Specials::IEEE: return exp_field_mask() | (std::uint64_t{1} << (frac_bits - 1));
      case Specials::FiniteNaN:
      case Specials::ScaleOnly: return magnitude_mask();
      case Specials::FiniteOnly: return 0;
    }
    return 0;
  }
  /// Number of distinct codes (2^total_bits), as a 64-bit count (fp64: 0 means 2^64).
  constexpr std::uint64_t code_count() const {
    return total_bits() >= 64 ? 0 : std::uint64_t{1} << total_bits();
  }

  // ---- values (exact in double for every built-in format) ----
  double max_finite() const;
  double min_normal() const;
  double min_subnormal() const;   ///< smallest positive value (min_normal() when no subnormals)
  double unit_roundoff() const;   ///< u = 2^-p
  double epsilon() const;         ///< 2^-frac_bits, the spacing of [1, 2)

  friend constexpr bool operator==(const Format& a, const Format& b) { return a.tag == b.tag; }
};

// ---- built-in formats (DESIGN.md, "Format") ----
//                                   tag     name              S  E   M   bias  sub  specials             container
inline constexpr Format f64      {"f64",   "fp64",             1, 11, 52, 1023, true, Specials::IEEE,       64};
inline constexpr Format f32      {"f32",   "fp32",             1, 8,  23, 127,  true, Specials::IEEE,       32};
inline constexpr Format tf32     {"tf32",  "tf32",             1, 8,  10, 127,  true, Specials::IEEE,       32};
inline constexpr Format f16      {"f16",   "fp16",             1, 5,  10, 15,   true, Specials::IEEE,       16};
inline constexpr Format bf16     {"bf16",  "bfloat16",         1, 8,  7,  127,  true, Specials::IEEE,       16};
inline constexpr Format e4m3     {"e4m3",  "float8_e4m3fn",    1, 4,  3,  7,    true, Specials::FiniteNaN,  8};
inline constexpr Format e5m2     {"e5m2",  "float8_e5m2",      1, 5,  2,  15,   true, Specials::IEEE,       8};
inline constexpr Format e2m3     {"e2m3",  "float6_e2m3fn",    1, 2,  3,  1,    true, Specials::FiniteOnly, 8};
inline constexpr Format e3m2     {"e3m2",  "float6_e3m2fn",    1, 3,  2,  3,    true, Specials::FiniteOnly, 8};
inline constexpr Format e2m1     {"e2m1",  "float4_e2m1fn",    1, 2,  1,  1,    true, Specials::FiniteOnly, 8};
inline constexpr Format ue8m0    {"ue8m0", "float8_e8m0fnu",   0, 8,  0,  127,  false, Specials::ScaleOnly, 8};

/// Every built-in format, widest first.
std::span<const Format* const> all_formats();
/// Look a format up by tag ("f16") or name ("fp16", "float8_e4m3fn"); also accepts common
/// aliases (fp8_e4m3, half, bfloat16, ...). nullopt when unknown.
const Format* find_format(std::string_view name);
/// Comma-separated list of tags, for error messages.
std::string format_tags();

// ---- decoding ----
FpClass classify(const Format& f, std::uint64_t code);
/// Exact decode of a finite code (Inf/NaN give cls Inf/NaN and sig = payload).
Unpacked unpack(const Format& f, std::uint64_t code);
/// Exact value of a code as a double (every built-in format fits). NaN payloads are carried
/// into the double's fraction, top-aligned, quiet bit as in the source.
double to_double(const Format& f, std::uint64_t code);
/// True when the code is negative (sign bit set; ue8m0 never).
inline bool code_is_negative(const Format& f, std::uint64_t code) { return (code & f.sign_mask()) != 0; }

/// tf32 codes live in the top 19 bits of a 32-bit fp32 pattern; other formats are unchanged.
std::uint64_t to_container(const Format& f, std::uint64_t code);
std::uint64_t from_container(const Format& f, std::uint64_t bits);

/// Hex string of a code with the format's container width, e.g. 0x3c00.
std::string hex_code(const Format& f, std::uint64_t code);

}  // namespace fpcert
