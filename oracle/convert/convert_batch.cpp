// oracle/convert/convert_batch.cpp — the conversion model over arrays of codes: sources that embed in fp32
// through the model's rounding core (Highway SIMD, oracle/convert/convert_simd.cpp), wider pseudo formats
// through a branch-free rounding of double bit patterns.
#include "oracle/convert/convert_batch.hpp"

#include <bit>
#include <stdexcept>
#include <vector>

#include "base/philox.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/convert/convert_simd.hpp"

namespace fpcert {
namespace {

/// The destination's constants for the double path: the model's target and the exponents in
/// unbiased form.
struct Target {
  ConvertTarget c;
  std::int64_t frac, emin, bias_m1, emax_p1;
  Target(const Format& d, const Rounder& r)
      : c(make_convert_target(d, r)), frac(d.frac_bits), emin(d.emin()), bias_m1(d.bias - 1), emax_p1(d.emax() + 1) {}
};

inline std::uint64_t sel(bool c, std::uint64_t a, std::uint64_t b) {
  return b ^ ((a ^ b) & (std::uint64_t{0} - static_cast<std::uint64_t>(c)));
}

/// Round the double with bits u (a normal double, zero, Inf or NaN: every value of a format of at
/// most 32 bits is one) into the target. Branch-free so loops over it vectorise.
template <Rounding R>
inline std::uint32_t round_bits(const Target& t, std::uint64_t u, std::uint32_t rbits, std::uint8_t& flags_out) {
  constexpr std::uint64_t kMask52 = (std::uint64_t{1} << 52) - 1;
  const std::uint64_t neg = u >> 63;
  const std::uint64_t ax = u & 0x7FFFFFFFFFFFFFFFULL;
  const std::int64_t e = static_cast<std::int64_t>(ax >> 52) - 1023;
  const std::int64_t eq = e > t.emin ? e : t.emin;
  const std::int64_t s_raw = 52 - t.frac + (eq - e);  // low bits of the significand to drop
  const std::uint64_t s = static_cast<std::uint64_t>(s_raw < 63 ? s_raw : 63);
  const std::uint64_t m = (ax & kMask52) | (std::uint64_t{1} << 52);
  std::uint64_t r = m >> s;
  // The dropped bits, left-aligned in 64 bits (two shifts: s == 0 would make one shift by 64).
  const std::uint64_t ra = (m << (63 - s)) << 1;
  const std::uint64_t inexact = ra != 0;
  const std::uint64_t round_bit = ra >> 63;
  const std::uint64_t sticky = (ra << 1) != 0;
  std::uint64_t up;
  if constexpr (R == Rounding::NearestEven) up = round_bit & (sticky | r);
  else if constexpr (R == Rounding::NearestAway) up = round_bit;
  else if constexpr (R == Rounding::TowardZero) up = 0;
  else if constexpr (R == Rounding::Up) up = inexact & (neg ^ 1);
  else if constexpr (R == Rounding::Down) up = inexact & neg;
  else {  // stochastic: up iff D + rbits >= 2^32, D = floor(m * 2^(32 - s)) the first 32 dropped bits
    const std::uint64_t sd = static_cast<std::uint64_t>(s_raw - 32 < 63 ? s_raw - 32 : 63);
    const std::uint64_t D = sel(s_raw > 63, m >> sd, ra >> 32);
    up = (D + rbits) >> 32;
  }
  r += up & 1;
  std::uint64_t code = r + (static_cast<std::uint64_t>(eq + t.bias_m1) << t.frac);
  // Overflow: the rounded magnitude is past the largest finite code (or the exponent is).
  const bool ovf = (code > t.c.max_code) | (e > t.emax_p1);
  const std::uint64_t tz = (R == Rounding::TowardZero) ? 1 : (R == Rounding::Up) ? neg : (R == Rounding::Down) ? (neg ^ 1) : 0;
  const std::uint64_t ovf_code = sel(neg != 0, sel(tz != 0, t.c.ovf_code[1][1], t.c.ovf_code[1][0]),
                                     sel(tz != 0, t.c.ovf_code[0][1], t.c.ovf_code[0][0]));
  code = sel(ovf, ovf_code, code);
  std::uint64_t flags = inexact * kInexact;
  flags |= static_cast<std::uint64_t>((e < t.emin) & (inexact != 0)) * kUnderflow;
  flags = sel(ovf, kOverflow | kInexact, flags);
  // Specials: zero, Inf, NaN.
  const bool is_zero = ax == 0;
  const bool is_inf = ax == 0x7FF0000000000000ULL;
  const bool is_nan = ax > 0x7FF0000000000000ULL;
  code = sel(is_zero, 0, code);
  code = sel(is_inf, t.c.inf_in_code, code);
  code = sel(is_nan, ((ax & kMask52) >> (52 - t.frac) & t.c.nan_payload_mask) | t.c.nan_or, code);
  flags = sel(is_zero | is_inf | is_nan, 0, flags);
  flags_out = static_cast<std::uint8_t>(flags);
  // The sign is kept (XORed in: ml_dtypes' finite-only NaN code carries a sign bit), except where the NaN
  // convention drops it.
  const std::uint64_t keep_sign = sel(is_nan, t.c.nan_keeps_sign, 1);
  return static_cast<std::uint32_t>(code ^ ((neg & keep_sign) << t.c.sign_shift));
}

template <Rounding R, class Src>
void run(const Target t /* a private copy: the uint8_t flag stores could alias a reference */, std::uint64_t seed, std::size_t n, Src&& source_double, const std::uint32_t* codes,
         std::uint64_t first, std::uint32_t* out, std::uint8_t* flags) {
  // Straight loops with no calls or branches in them, one for listed codes and one for a range.
  std::uint8_t scratch[1024];
  for (std::size_t b = 0; b < n; b += 1024) {
    const std::size_t len = n - b < 1024 ? n - b : 1024;
    std::uint8_t* fl = flags ? flags + b : scratch;
    std::uint32_t* o = out + b;
    if constexpr (R == Rounding::Stochastic) {
      for (std::size_t i = 0; i < len; ++i) {
        const std::uint64_t code = codes ? codes[b + i] : first + b + i;
        o[i] = round_bits<R>(t, source_double(code), random_bits32(seed, code), fl[i]);
      }
    } else if (codes) {
      const std::uint32_t* c = codes + b;
      for (std::size_t i = 0; i < len; ++i) o[i] = round_bits<R>(t, source_double(c[i]), 0, fl[i]);
    } else {
      const std::uint64_t c0 = first + b;
      for (std::size_t i = 0; i < len; ++i) o[i] = round_bits<R>(t, source_double(c0 + i), 0, fl[i]);
    }
  }
}

template <class Src>
void dispatch(const Format& dst, const Rounder& r, std::uint64_t seed, std::size_t n, Src&& src_double,
              const std::uint32_t* codes, std::uint64_t first, std::uint32_t* out, std::uint8_t* flags) {
  const Target t(dst, r);
  switch (r.rounding) {
    case Rounding::NearestEven: run<Rounding::NearestEven>(t, seed, n, src_double, codes, first, out, flags); break;
    case Rounding::NearestAway: run<Rounding::NearestAway>(t, seed, n, src_double, codes, first, out, flags); break;
    case Rounding::TowardZero: run<Rounding::TowardZero>(t, seed, n, src_double, codes, first, out, flags); break;
    case Rounding::Up: run<Rounding::Up>(t, seed, n, src_double, codes, first, out, flags); break;
    case Rounding::Down: run<Rounding::Down>(t, seed, n, src_double, codes, first, out, flags); break;
    case Rounding::Stochastic: run<Rounding::Stochastic>(t, seed, n, src_double, codes, first, out, flags); break;
  }
}


/// Sources that embed in fp32 (fp32, tf32, every format of at most 16 bits): the model's core, on
/// fp32 bits. Stochastic rounding draws its bits per code, one pattern at a time.
void convert_model_path(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed,
                        const std::uint32_t* codes, std::uint64_t first, std::uint32_t* out, std::uint8_t* flags,
                        std::size_t n) {
  const ConvertModel m = make_convert_model(src, dst, r);
  if (r.rounding == Rounding::Stochastic) {
    std::uint8_t dummy = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t code = codes ? codes[i] : first + i;
      out[i] = round_f32_any<Rounding::Stochastic, true>(m.dst, m.src.f32_bits(static_cast<std::uint32_t>(code)),
                                                          random_bits32(seed, code), flags ? flags[i] : dummy);
    }
    return;
  }
  if (m.src.kind == kSourceF32) {
    convert_f32_simd(m.dst, codes, static_cast<std::uint32_t>(first), out, flags, n);
    return;
  }
  std::uint32_t bits[1024];
  for (std::size_t b = 0; b < n; b += 1024) {
    const std::size_t len = n - b < 1024 ? n - b : 1024;
    for (std::size_t j = 0; j < len; ++j)
      bits[j] = m.src.f32_bits(static_cast<std::uint32_t>(codes ? codes[b + j] : first + b + j));
    convert_f32_simd(m.dst, bits, 0, out + b, flags ? flags + b : nullptr, len);
  }
}

void convert_impl(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed, const std::uint32_t* codes,
                  std::uint64_t first, std::uint32_t* out, std::uint8_t* flags, std::size_t n) {
  if (src.total_bits() > 32 || dst.total_bits() > 32) throw std::invalid_argument("convert_codes: formats of at most 32 bits");
  if (convert_model_covers(src, dst)) {
    convert_model_path(src, dst, r, seed, codes, first, out, flags, n);
  } else if (dst.specials == Specials::ScaleOnly) {  // the generic path
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t code = codes ? codes[i] : first + i;
      const std::uint32_t rb = r.rounding == Rounding::Stochastic ? random_bits32(seed, code) : 0;
      const Rounded o = convert(src, code, dst, r, rb);
      out[i] = static_cast<std::uint32_t>(o.code);
      if (flags) flags[i] = o.flags;
    }
  } else {
    dispatch(dst, r, seed, n, [&src](std::uint64_t c) { return std::bit_cast<std::uint64_t>(to_double(src, c)); }, codes,
             first, out, flags);
  }
}

}  // namespace

void convert_codes(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed, const std::uint32_t* in,
                   std::uint32_t* out, std::uint8_t* flags, std::size_t n) {
  convert_impl(src, dst, r, seed, in, 0, out, flags, n);
}

void convert_code_range(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed, std::uint64_t first,
                        std::uint32_t* out, std::uint8_t* flags, std::size_t n) {
  convert_impl(src, dst, r, seed, nullptr, first, out, flags, n);
}

}  // namespace fpcert
