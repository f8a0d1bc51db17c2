// oracle/convert_batch.cpp — vectorisable rounding of double bit patterns into a narrow format.
#include "oracle/convert_batch.hpp"

#include <bit>
#include <stdexcept>
#include <vector>

#include "base/philox.hpp"

namespace fpcert {
namespace {

/// The destination's constants as the loop needs them, computed once per call.
struct Target {
  std::int64_t frac, emin, bias_m1, emax_p1;
  std::uint64_t max_code, sign_shift;
  std::uint64_t ovf_code[2][2];  // [neg][toward_zero]: magnitude code of an overflow
  std::uint64_t inf_in_code;     // magnitude code an Inf input becomes
  std::uint64_t nan_payload_mask, nan_or, nan_keeps_sign;  // NaN in: ((payload >> ...) & mask) | or
  explicit Target(const Format& d, const Rounder& r) {
    frac = d.frac_bits;
    emin = d.emin();
    bias_m1 = d.bias - 1;
    emax_p1 = d.emax() + 1;
    max_code = d.max_finite_code();
    sign_shift = static_cast<std::uint64_t>(d.exp_bits + d.frac_bits);
    for (int neg = 0; neg < 2; ++neg)
      for (int tz = 0; tz < 2; ++tz) {
        Rounder rr = r;
        if (tz) rr.rounding = Rounding::TowardZero;
        ovf_code[neg][tz] = detail::overflow_result(d, neg != 0, rr).code & d.magnitude_mask();
      }
    inf_in_code = detail::round_special(d, FpClass::Inf, false, 0, r).code;
    // NaN results, as detail::round_special makes them.
    const bool keep_payload = d.specials == Specials::IEEE && r.nan == NanPayload::Preserve;
    nan_payload_mask = keep_payload ? d.frac_mask() : 0;
    nan_or = keep_payload ? (d.inf_code() | (std::uint64_t{1} << (d.frac_bits - 1)))
             : d.specials == Specials::FiniteOnly ? d.max_finite_code() : d.canonical_nan_code();
    nan_keeps_sign = (d.specials != Specials::FiniteOnly && r.nan == NanPayload::Preserve) ? 1 : 0;
  }
};

/// a where c, else b: a mask select the vectoriser turns into blends.
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
  const bool ovf = (code > t.max_code) | (e > t.emax_p1);
  const std::uint64_t tz = (R == Rounding::TowardZero) ? 1 : (R == Rounding::Up) ? neg : (R == Rounding::Down) ? (neg ^ 1) : 0;
  const std::uint64_t ovf_code = sel(neg != 0, sel(tz != 0, t.ovf_code[1][1], t.ovf_code[1][0]),
                                     sel(tz != 0, t.ovf_code[0][1], t.ovf_code[0][0]));
  code = sel(ovf, ovf_code, code);
  std::uint64_t flags = inexact * kInexact;
  flags |= static_cast<std::uint64_t>((e < t.emin) & (inexact != 0)) * kUnderflow;
  flags = sel(ovf, kOverflow | kInexact, flags);
  // Specials: zero, Inf, NaN.
  const bool is_zero = ax == 0;
  const bool is_inf = ax == 0x7FF0000000000000ULL;
  const bool is_nan = ax > 0x7FF0000000000000ULL;
  code = sel(is_zero, 0, code);
  code = sel(is_inf, t.inf_in_code, code);
  code = sel(is_nan, ((ax & kMask52) >> (52 - t.frac) & t.nan_payload_mask) | t.nan_or, code);
  flags = sel(is_zero | is_inf | is_nan, 0, flags);
  flags_out = static_cast<std::uint8_t>(flags);
  // The sign is kept, except for NaNs made canonical and NaN into finite-only formats (+max).
  const std::uint64_t keep_sign = sel(is_nan, t.nan_keeps_sign, 1);
  return static_cast<std::uint32_t>(code | ((neg & keep_sign) << t.sign_shift));
}

/// Round the fp32 with bits x into the target, in 32-bit lanes (eight to an AVX2 vector). The
/// significand is not normalised: an fp32 subnormal is m * 2^-149 with the binade slot of
/// -126, and only max(E, emin) decides where the destination's quantum falls, so the shift is
/// right for it too. Destinations up to 32 bits and never fp64 (whose emin is below -126).
template <Rounding R, bool kFlags>
inline std::uint32_t round_f32_bits(const Target& t, std::uint32_t x, std::uint32_t rbits, std::uint8_t& flags_out) {
  const std::uint32_t neg = x >> 31;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  const std::uint32_t biased = ax >> 23;
  const std::int32_t e = static_cast<std::int32_t>(biased == 0 ? 1u : biased) - 127;
  const std::int32_t emin = static_cast<std::int32_t>(t.emin);
  const std::int32_t eq = e > emin ? e : emin;
  const std::int32_t frac = static_cast<std::int32_t>(t.frac);
  const std::int32_t s_raw = 23 - frac + (eq - e);  // dropped bits, >= 0 for destinations up to fp32
  const std::uint32_t s = static_cast<std::uint32_t>(s_raw < 31 ? s_raw : 31);
  const std::uint32_t m = (ax & 0x7FFFFFu) | (biased != 0 ? 0x800000u : 0u);
  std::uint32_t r = m >> s;
  const std::uint32_t ra = (m << (31 - s)) << 1;  // dropped bits, left-aligned (s <= 31 loses none: m < 2^24)
  const std::uint32_t inexact = ra != 0;
  const std::uint32_t round_bit = ra >> 31;
  const std::uint32_t sticky = (ra << 1) != 0;
  std::uint32_t up;
  if constexpr (R == Rounding::NearestEven) up = round_bit & (sticky | r);
  else if constexpr (R == Rounding::NearestAway) up = round_bit;
  else if constexpr (R == Rounding::TowardZero) up = 0;
  else if constexpr (R == Rounding::Up) up = inexact & (neg ^ 1);
  else if constexpr (R == Rounding::Down) up = inexact & neg;
  else {  // stochastic: D = floor(m * 2^(32 - s)) is the first 32 dropped bits, for any s
    const std::uint32_t sd = static_cast<std::uint32_t>(s_raw - 32 < 31 ? s_raw - 32 : 31);
    const std::uint32_t D = s_raw >= 32 ? (m >> sd) : ra;
    up = static_cast<std::uint32_t>((static_cast<std::uint64_t>(D) + rbits) >> 32);
  }
  r += up & 1u;
  std::uint32_t code = r + (static_cast<std::uint32_t>(eq + static_cast<std::int32_t>(t.bias_m1)) << frac);
  // e <= 128 keeps the code below 2^32, so the code comparison alone detects overflow.
  const bool ovf = code > static_cast<std::uint32_t>(t.max_code);
  const std::uint32_t tz = (R == Rounding::TowardZero) ? 1u : (R == Rounding::Up) ? neg : (R == Rounding::Down) ? (neg ^ 1u) : 0u;
  const std::uint32_t ovf_code = static_cast<std::uint32_t>(
      neg ? (tz ? t.ovf_code[1][1] : t.ovf_code[1][0]) : (tz ? t.ovf_code[0][1] : t.ovf_code[0][0]));
  code = ovf ? ovf_code : code;
  const bool is_zero = ax == 0;
  const bool is_inf = ax == 0x7F800000u;
  const bool is_nan = ax > 0x7F800000u;
  code = is_zero ? 0u : code;
  code = is_inf ? static_cast<std::uint32_t>(t.inf_in_code) : code;
  const std::uint32_t nan_code = static_cast<std::uint32_t>((((ax & 0x7FFFFFu) >> (23 - frac)) & t.nan_payload_mask) | t.nan_or);
  code = is_nan ? nan_code : code;
  if constexpr (kFlags) {
    std::uint32_t flags = inexact * kInexact;
    // Tiny: below 2^emin; an fp32 subnormal is below 2^-126, which no destination here undercuts.
    flags |= static_cast<std::uint32_t>(((e < emin) | (biased == 0)) & (inexact != 0)) * kUnderflow;
    flags = ovf ? (kOverflow | kInexact) : flags;
    flags = (is_zero | is_inf | is_nan) ? 0u : flags;
    flags_out = static_cast<std::uint8_t>(flags);
  }
  const std::uint32_t keep_sign = is_nan ? static_cast<std::uint32_t>(t.nan_keeps_sign) : 1u;
  return code | ((neg & keep_sign) << t.sign_shift);
}

template <Rounding R, bool kFlags>
void run_f32_loop(const Target t, std::uint64_t seed, std::size_t n, const std::uint32_t* codes, std::uint64_t first,
                  std::uint32_t* out, std::uint8_t* flags) {
  std::uint8_t dummy;
  auto fl = [&](std::size_t i) -> std::uint8_t& { if constexpr (kFlags) return flags[i]; else return dummy; };
  if constexpr (R == Rounding::Stochastic) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t code = codes ? codes[i] : static_cast<std::uint32_t>(first + i);
      out[i] = round_f32_bits<R, kFlags>(t, code, random_bits32(seed, code), fl(i));
    }
  } else if (codes) {
    for (std::size_t i = 0; i < n; ++i) out[i] = round_f32_bits<R, kFlags>(t, codes[i], 0, fl(i));
  } else {
    const auto c0 = static_cast<std::uint32_t>(first);
    for (std::size_t i = 0; i < n; ++i) out[i] = round_f32_bits<R, kFlags>(t, c0 + static_cast<std::uint32_t>(i), 0, fl(i));
  }
}

template <Rounding R>
void run_f32(const Target& t, std::uint64_t seed, std::size_t n, const std::uint32_t* codes, std::uint64_t first,
             std::uint32_t* out, std::uint8_t* flags) {
  if (flags) run_f32_loop<R, true>(t, seed, n, codes, first, out, flags);
  else run_f32_loop<R, false>(t, seed, n, codes, first, out, flags);
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

void convert_impl(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed, const std::uint32_t* codes,
                  std::uint64_t first, std::uint32_t* out, std::uint8_t* flags, std::size_t n) {
  if (src.total_bits() > 32 || dst.total_bits() > 32) throw std::invalid_argument("convert_codes: formats of at most 32 bits");
  if (dst.specials == Specials::ScaleOnly) {  // the generic path
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t code = codes ? codes[i] : first + i;
      const std::uint32_t rb = r.rounding == Rounding::Stochastic ? random_bits32(seed, code) : 0;
      const Rounded o = convert(src, code, dst, r, rb);
      out[i] = static_cast<std::uint32_t>(o.code);
      if (flags) flags[i] = o.flags;
    }
    return;
  }
  if (src == f32) {
    const Target t(dst, r);
    switch (r.rounding) {
      case Rounding::NearestEven: run_f32<Rounding::NearestEven>(t, seed, n, codes, first, out, flags); break;
      case Rounding::NearestAway: run_f32<Rounding::NearestAway>(t, seed, n, codes, first, out, flags); break;
      case Rounding::TowardZero: run_f32<Rounding::TowardZero>(t, seed, n, codes, first, out, flags); break;
      case Rounding::Up: run_f32<Rounding::Up>(t, seed, n, codes, first, out, flags); break;
      case Rounding::Down: run_f32<Rounding::Down>(t, seed, n, codes, first, out, flags); break;
      case Rounding::Stochastic: run_f32<Rounding::Stochastic>(t, seed, n, codes, first, out, flags); break;
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
