// oracle/convert/convert_model.hpp — fpcert's correctly rounding conversion model, one pattern at a time, in
// one source for the host and the GPU.
//
// A source code becomes its fp32 bits exactly (every source of at most 16 bits embeds in fp32; tf32
// is the top 19 bits of an fp32 pattern), and one rounding core turns fp32 bits into a destination
// code and its RoundFlag bits, with the semantics of round_double() (oracle/round.hpp). The batch
// path (oracle/convert/convert_batch.cpp), its Highway version (oracle/convert/convert_simd.cpp) and the device
// check kernel (kernels/convert/cuda/convert_check_kernel.cuh) all call the functions below, which is what
// makes the three agree: tests/oracle/convert_simd_test.cpp holds them equal to round_double() and MPFR.
//
// No CUDA header here: under nvcc FPCERT_MODEL_HD expands to __host__ __device__ (the emu_arith
// pattern); the builders (make_convert_model and friends) are host code in oracle/convert/convert_model.cpp.
#pragma once

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

#if defined(__CUDACC__)
#define FPCERT_MODEL_HD __host__ __device__ __forceinline__
#else
#define FPCERT_MODEL_HD inline
#endif

namespace fpcert {

/// Outcome keys: source class * 40 + destination class * 8 + RoundFlag bits. The outcome class is a
/// function of the key (oracle/convert/convert_check.cpp fills the table with classify_outcome()).
inline constexpr int kOutcomeKeys = 5 * 5 * 8;

/// The class of a code (FpClass as an integer), branch-free from descriptor constants; the same
/// answer as classify() for formats of at most 32 bits (tests/oracle/convert_check_test.cpp).
struct CodeClass {
  std::uint32_t mag_mask, frac_bits, nan_lo, inf_code, zero_sub;
  FPCERT_MODEL_HD std::uint32_t operator()(std::uint32_t code) const {
    const std::uint32_t mag = code & mag_mask;
    const std::uint32_t e0 = (mag >> frac_bits) == 0;
    std::uint32_t c = static_cast<std::uint32_t>(FpClass::Normal);
    c = (zero_sub & e0 & (mag != 0)) ? static_cast<std::uint32_t>(FpClass::Subnormal) : c;
    c = (zero_sub & (mag == 0)) ? static_cast<std::uint32_t>(FpClass::Zero) : c;
    c = mag == inf_code ? static_cast<std::uint32_t>(FpClass::Inf) : c;
    c = mag >= nan_lo ? static_cast<std::uint32_t>(FpClass::NaN) : c;
    return c;
  }
};

/// A destination format and Rounder as the rounding core needs them (magnitude codes; fp32 biased
/// exponents, so that every quantity is an unsigned 32-bit lane). Destinations of at most 32 bits
/// whose emin is at least fp32's (every built-in format but fp64).
struct ConvertTarget {
  std::uint32_t frac;           ///< fraction bits of the destination
  std::uint32_t emin_b;         ///< emin + 127 (>= 1)
  std::uint32_t code_off;       ///< bias - 1 - 127, mod 2^32: (biased fp32 exponent + code_off) << frac is the code's exponent part
  std::uint32_t max_code;       ///< largest finite magnitude code
  std::uint32_t sign_shift;     ///< position of the sign bit
  std::uint32_t ovf_code[2][2]; ///< [neg][toward zero]: magnitude code of an overflow
  std::uint32_t inf_in_code;    ///< code an Inf input becomes (ue8m0: 0xFE or 0xFF)
  std::uint32_t nan_payload_mask, nan_or, nan_keeps_sign;  ///< NaN in: ((payload >> (23 - frac)) & mask) | or, sign XORed in if kept
  std::uint32_t scale_only;     ///< ue8m0: a power of two, |x| rounded, no zero
  Rounding rounding;
};

/// How a source code becomes fp32 bits: itself (fp32), shifted (tf32), or looked up (every source
/// of at most 16 bits; the table is f32_decode_table(), in host or device memory).
enum : std::uint32_t { kSourceF32 = 0, kSourceTf32 = 1, kSourceTable = 2 };
struct ConvertSource {
  std::uint32_t kind;
  const std::uint32_t* table;
  FPCERT_MODEL_HD std::uint32_t f32_bits(std::uint32_t code) const {
    return kind == kSourceF32 ? code : kind == kSourceTf32 ? code << 13 : table[code];
  }
};

/// Everything one pattern's model needs, trivially copyable (a kernel argument).
struct ConvertModel {
  ConvertSource src;
  CodeClass src_class, dst_class;
  ConvertTarget dst;
};

/// The rounding core for IEEE, fn and finite-only destinations: the fp32 with bits x rounded into
/// the target, in 32-bit lanes. The significand is not normalised: an fp32 subnormal is m * 2^-149
/// with the binade slot of -126, and only max(E, emin) decides where the destination's quantum
/// falls, so the shift is right for it too. rbits: stochastic rounding's 32 random bits (round away
/// from zero iff D + rbits >= 2^32, D the first 32 dropped bits).
template <Rounding R, bool kFlags>
FPCERT_MODEL_HD std::uint32_t round_f32_bits(const ConvertTarget& t, std::uint32_t x, std::uint32_t rbits,
                                             std::uint8_t& flags_out) {
  const std::uint32_t neg = x >> 31;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  const std::uint32_t biased = ax >> 23;
  const std::uint32_t eb = biased == 0 ? 1u : biased;   // biased exponent of the binade slot
  const std::uint32_t eqb = eb > t.emin_b ? eb : t.emin_b;
  const std::uint32_t s_raw = 23u - t.frac + (eqb - eb);  // dropped bits, >= 0 for destinations up to fp32
  const std::uint32_t s = s_raw < 31u ? s_raw : 31u;
  const std::uint32_t m = (ax & 0x7FFFFFu) | (biased != 0 ? 0x800000u : 0u);
  std::uint32_t r = m >> s;
  const std::uint32_t ra = (m << (31u - s)) << 1;  // dropped bits, left-aligned (s <= 31 loses none: m < 2^24)
  const std::uint32_t inexact = ra != 0;
  const std::uint32_t round_bit = ra >> 31;
  const std::uint32_t sticky = (ra << 1) != 0;
  std::uint32_t up;
  if constexpr (R == Rounding::NearestEven) up = round_bit & (sticky | r);
  else if constexpr (R == Rounding::NearestAway) up = round_bit;
  else if constexpr (R == Rounding::TowardZero) up = 0;
  else if constexpr (R == Rounding::Up) up = inexact & (neg ^ 1u);
  else if constexpr (R == Rounding::Down) up = inexact & neg;
  else {  // stochastic: D = floor(m * 2^(32 - s)) is the first 32 dropped bits, for any s
    const std::uint32_t sd = s_raw - 32u < 31u ? s_raw - 32u : 31u;
    const std::uint32_t D = s_raw >= 32u ? (m >> sd) : ra;
    up = static_cast<std::uint32_t>((static_cast<std::uint64_t>(D) + rbits) >> 32);
  }
  r += up & 1u;
  std::uint32_t code = r + ((eqb + t.code_off) << t.frac);
  // e <= 128 keeps the code below 2^32, so the code comparison alone detects overflow.
  const bool ovf = code > t.max_code;
  const std::uint32_t tz = (R == Rounding::TowardZero) ? 1u : (R == Rounding::Up) ? neg : (R == Rounding::Down) ? (neg ^ 1u) : 0u;
  code = ovf ? t.ovf_code[neg][tz] : code;
  const bool is_zero = ax == 0;
  const bool is_inf = ax == 0x7F800000u;
  const bool is_nan = ax > 0x7F800000u;
  code = is_zero ? 0u : code;
  code = is_inf ? t.inf_in_code : code;
  code = is_nan ? ((((ax & 0x7FFFFFu) >> (23u - t.frac)) & t.nan_payload_mask) | t.nan_or) : code;
  if constexpr (kFlags) {
    std::uint32_t flags = inexact * kInexact;
    // Tiny: below 2^emin; an fp32 subnormal is below 2^-126, which no destination here undercuts.
    flags |= static_cast<std::uint32_t>(((eb < t.emin_b) | (biased == 0)) & (inexact != 0)) * kUnderflow;
    flags = ovf ? static_cast<std::uint32_t>(kOverflow | kInexact) : flags;
    flags = (is_zero | is_inf | is_nan) ? 0u : flags;
    flags_out = static_cast<std::uint8_t>(flags);
  }
  const std::uint32_t keep_sign = is_nan ? t.nan_keeps_sign : 1u;
  return code ^ ((neg & keep_sign) << t.sign_shift);  // XOR: only ml_dtypes' NaN code carries a sign bit here
}

/// The rounding core for ue8m0 (detail::round_scale_only): |x| to a power of two 2^e, code e + 127.
/// A normal fp32 is 2^(biased - 127) * (1 + f / 2^23); a subnormal in [2^-127, 2^-126) is 2^-127 *
/// (1 + (2f mod 2^23) / 2^23); below 2^-127 (zero included) the result is code 0 (2^-127: ue8m0 has
/// no zero), inexact and underflowing. Ties of rn go to the even code.
template <Rounding R, bool kFlags>
FPCERT_MODEL_HD std::uint32_t round_f32_ue8m0(const ConvertTarget& t, std::uint32_t x, std::uint32_t rbits,
                                              std::uint8_t& flags_out) {
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  const std::uint32_t biased = ax >> 23;
  const std::uint32_t f = ax & 0x7FFFFFu;
  const bool sub = biased == 0;
  const std::uint32_t fr = sub ? (f << 1) & 0x7FFFFFu : f;  // the fraction below the leading bit
  const std::uint32_t base = sub ? 0u : biased;            // e + 127 before rounding
  constexpr std::uint32_t kHalf = 0x400000u;
  std::uint32_t up;
  if constexpr (R == Rounding::NearestEven) up = (fr > kHalf) | ((fr == kHalf) & (base & 1u));
  else if constexpr (R == Rounding::NearestAway) up = fr >= kHalf;
  else if constexpr (R == Rounding::Up) up = fr != 0;
  else if constexpr (R == Rounding::Stochastic) up = static_cast<std::uint32_t>((static_cast<std::uint64_t>(fr << 9) + rbits) >> 32);
  else up = 0;  // toward zero and down act on |x|
  std::uint32_t code = base + up;
  const bool ovf = code > 254u;
  const bool tiny = sub & (f < kHalf);
  const bool is_inf = ax == 0x7F800000u;
  const bool is_nan = ax > 0x7F800000u;
  code = ovf ? t.inf_in_code : code;  // overflow and Inf: 0xFE with satfinite, else NaN 0xFF
  code = tiny ? 0u : code;
  code = is_inf ? t.inf_in_code : code;
  code = is_nan ? 0xFFu : code;
  if constexpr (kFlags) {
    std::uint32_t flags = fr != 0 ? static_cast<std::uint32_t>(kInexact) : 0u;
    flags = ovf ? static_cast<std::uint32_t>(kOverflow | kInexact) : flags;
    flags = tiny ? static_cast<std::uint32_t>(kInexact | kUnderflow) : flags;
    flags = (is_inf | is_nan) ? 0u : flags;
    flags_out = static_cast<std::uint8_t>(flags);
  }
  return code;
}

template <Rounding R, bool kFlags>
FPCERT_MODEL_HD std::uint32_t round_f32_any(const ConvertTarget& t, std::uint32_t x, std::uint32_t rbits, std::uint8_t& flags) {
  return t.scale_only ? round_f32_ue8m0<R, kFlags>(t, x, rbits, flags) : round_f32_bits<R, kFlags>(t, x, rbits, flags);
}

/// One pattern with the target's rounding picked at run time (the device check; rbits only for
/// stochastic rounding).
FPCERT_MODEL_HD std::uint32_t model_round_f32(const ConvertTarget& t, std::uint32_t x, std::uint32_t rbits, std::uint8_t& flags) {
  switch (t.rounding) {
    case Rounding::NearestEven: return round_f32_any<Rounding::NearestEven, true>(t, x, rbits, flags);
    case Rounding::NearestAway: return round_f32_any<Rounding::NearestAway, true>(t, x, rbits, flags);
    case Rounding::TowardZero: return round_f32_any<Rounding::TowardZero, true>(t, x, rbits, flags);
    case Rounding::Up: return round_f32_any<Rounding::Up, true>(t, x, rbits, flags);
    case Rounding::Down: return round_f32_any<Rounding::Down, true>(t, x, rbits, flags);
    case Rounding::Stochastic: return round_f32_any<Rounding::Stochastic, true>(t, x, rbits, flags);
  }
  return 0;
}

/// The model's code for one source code, its flags, and its outcome key.
struct ModelResult {
  std::uint32_t code;
  std::uint8_t flags;
  std::uint32_t key;
};
FPCERT_MODEL_HD ModelResult model_convert(const ConvertModel& m, std::uint32_t code, std::uint32_t rbits = 0) {
  ModelResult r{0, 0, 0};
  r.code = model_round_f32(m.dst, m.src.f32_bits(code), rbits, r.flags);
  r.key = m.src_class(code) * 40u + m.dst_class(r.code) * 8u + (r.flags & 7u);
  return r;
}

// ---- builders (host) ----

/// Whether every value of f is exactly an fp32 value (then the model applies to it as a source).
bool embeds_in_f32(const Format& f);
/// fp32 bits of every code of a source of at most 16 bits that embeds_in_f32 (NaN payloads
/// top-aligned, as to_double() carries them); built once per format, never freed.
const std::uint32_t* f32_decode_table(const Format& f);
CodeClass make_code_class(const Format& f);
ConvertTarget make_convert_target(const Format& dst, const Rounder& r);
/// Whether the model covers src -> dst: src embeds in fp32 and is fp32, tf32 or at most 16 bits;
/// dst is at most 32 bits and not fp64.
bool convert_model_covers(const Format& src, const Format& dst);
/// The model for src -> dst (convert_model_covers must hold; the decode table is host memory).
ConvertModel make_convert_model(const Format& src, const Format& dst, const Rounder& r);

}  // namespace fpcert
