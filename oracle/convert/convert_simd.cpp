// oracle/convert/convert_simd.cpp — the conversion model's rounding core in Highway vectors, once per target
// (hwy/foreach_target.h recompiles this file for each), and the dispatch. Each vector statement is
// the lane-wise form of a line of round_f32_bits / round_f32_ue8m0 (oracle/convert/convert_model.hpp); the
// tail of an array goes through those functions themselves.

// Targets: every one attainable on this architecture (on x86 with GCC 12: AVX3 = AVX-512, AVX2,
// SSE4, SSSE3 and HWY_SCALAR, Highway's scalar fallback), dispatched at run time; see
// docs/conversions.md, "What runs where".
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "oracle/convert/convert_simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include "oracle/convert/convert_model.hpp"
#include "oracle/convert/convert_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace fpcert {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Lane-wise round_f32_bits<R, kFlags> over in[0, n) (kCodes) or first + [0, n), whole vectors only;
/// returns how many patterns it did.
template <Rounding R, bool kFlags, bool kCodes>
HWY_NOINLINE std::size_t RoundIeee(const ConvertTarget& t, const std::uint32_t* HWY_RESTRICT in, std::uint32_t first,
                                   std::uint32_t* HWY_RESTRICT out, std::uint8_t* HWY_RESTRICT flags, std::size_t n) {
  const hn::ScalableTag<std::uint32_t> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<std::uint8_t, decltype(d)> d8;
  const std::size_t N = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1u);
  const auto k31 = hn::Set(d, 31u);
  const auto abs_mask = hn::Set(d, 0x7FFFFFFFu);
  const auto sign_bit = hn::Set(d, 0x80000000u);
  const auto mant = hn::Set(d, 0x7FFFFFu);
  const auto hidden = hn::Set(d, 0x800000u);
  const auto inf = hn::Set(d, 0x7F800000u);
  const auto emin_b = hn::Set(d, t.emin_b);
  const auto code_off = hn::Set(d, t.code_off);
  const auto max_code = hn::Set(d, t.max_code);
  const auto drop0 = hn::Set(d, 23u - t.frac);
  // Overflow codes: toward zero is a compile-time function of the sign (round_f32_bits' tz).
  constexpr unsigned tz_pos = (R == Rounding::TowardZero || R == Rounding::Down) ? 1 : 0;
  constexpr unsigned tz_neg = (R == Rounding::TowardZero || R == Rounding::Up) ? 1 : 0;
  const auto ovf_pos = hn::Set(d, t.ovf_code[0][tz_pos]);
  const auto ovf_neg = hn::Set(d, t.ovf_code[1][tz_neg]);
  const auto inf_in = hn::Set(d, t.inf_in_code);
  const auto nan_mask = hn::Set(d, t.nan_payload_mask);
  const auto nan_or = hn::Set(d, t.nan_or);
  const bool nan_keeps_sign = t.nan_keeps_sign != 0;
  const bool zero_free = t.emin_b + t.code_off == 0;
  const int frac = static_cast<int>(t.frac);
  const int nan_shift = 23 - frac;
  const int sign_down = 31 - static_cast<int>(t.sign_shift);
  // The fast path's constants: drop = 23 - frac fraction bits dropped (at least one: fp32 itself
  // takes the general path), the rounding increments, and the rebias (127 - bias) << frac.
  const int drop = 23 - frac;
  const bool fast_ok = drop >= 1;
  const auto normal_below = hn::Set(d, (t.emin_b << 23) - 1u);  // the largest pattern below 2^emin
  const auto low_mask = hn::Set(d, drop >= 1 ? (1u << drop) - 1u : 0u);
  const auto half_m1 = hn::Set(d, drop >= 1 ? (1u << (drop - 1)) - 1u : 0u);
  const auto rebias = hn::Set(d, (0u - t.code_off - 1u) << frac);
  // The tiny path's limit: 2^k as fp32 bits, k = emin - frac - 1 (rn, rna) or emin - frac (rz), the
  // destination having subnormals (zero_free); other roundings take the general path.
  constexpr bool kTinyRounding = R == Rounding::NearestEven || R == Rounding::NearestAway || R == Rounding::TowardZero;
  const int tiny_k = static_cast<int>(t.emin_b) - 127 - frac - (R == Rounding::TowardZero ? 0 : 1);
  const bool tiny_ok = kTinyRounding && zero_free && tiny_k >= -149;
  const auto tiny_lim = hn::Set(d, tiny_k >= -126 ? static_cast<std::uint32_t>(tiny_k + 127) << 23
                                   : tiny_k >= -149 ? 1u << (tiny_k + 149) : 0u);
  auto codes = hn::Iota(d, first);
  const auto step = hn::Set(d, static_cast<std::uint32_t>(N));
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    decltype(codes) x;
    if constexpr (kCodes) {
      x = hn::LoadU(d, in + i);
    } else {
      x = codes;
      codes = hn::Add(codes, step);
    }
    const auto ax = hn::And(x, abs_mask);
    const auto is_neg = hn::Ne(hn::And(x, sign_bit), zero);
    const auto sgn = hn::ShiftRightSame(hn::And(x, sign_bit), sign_down);
    // Fast path: every lane finite and normal in the destination (ax in [2^emin, Inf)), the common
    // case of a sweep. Then the code is the fp32 pattern shifted: (ax + rounding increment) >> drop
    // rounds (a carry out of the fraction moves into the exponent, as it must), and subtracting the
    // bias difference rebiases; overflow as in the general path.
    if (fast_ok && hn::AllTrue(d, hn::And(hn::Gt(ax, normal_below), hn::Lt(ax, inf)))) {
      decltype(codes) inc;
      if constexpr (R == Rounding::NearestEven) inc = hn::Add(half_m1, hn::And(hn::ShiftRightSame(ax, drop), one));
      else if constexpr (R == Rounding::NearestAway) inc = hn::Add(half_m1, one);
      else if constexpr (R == Rounding::TowardZero) inc = zero;
      else if constexpr (R == Rounding::Up) inc = hn::IfThenZeroElse(is_neg, low_mask);
      else inc = hn::IfThenElseZero(is_neg, low_mask);
      auto code = hn::Sub(hn::ShiftRightSame(hn::Add(ax, inc), drop), rebias);
      const auto ovf = hn::Gt(code, max_code);
      if constexpr (tz_pos == tz_neg) code = hn::IfThenElse(ovf, ovf_pos, code);
      else code = hn::IfThenElse(ovf, hn::IfThenElse(is_neg, ovf_neg, ovf_pos), code);
      hn::StoreU(hn::Or(code, sgn), d, out + i);
      if constexpr (kFlags) {
        auto f = hn::IfThenElseZero(hn::Ne(hn::And(ax, low_mask), zero), hn::Set(d, static_cast<std::uint32_t>(kInexact)));
        f = hn::IfThenElse(ovf, hn::Set(d, static_cast<std::uint32_t>(kOverflow | kInexact)), f);
        hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, f)), d8, flags + i);
      }
      continue;
    }
    // Second fast path: every lane so small that it rounds to a signed zero (below half the smallest
    // subnormal of the destination for rn and rna, below the smallest for rz): the other common case.
    if (tiny_ok && hn::AllTrue(d, hn::Lt(ax, tiny_lim))) {
      hn::StoreU(sgn, d, out + i);
      if constexpr (kFlags) {
        const auto f = hn::IfThenElseZero(hn::Ne(ax, zero), hn::Set(d, static_cast<std::uint32_t>(kInexact | kUnderflow)));
        hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, f)), d8, flags + i);
      }
      continue;
    }
    const auto biased = hn::ShiftRight<23>(ax);
    const auto normal = hn::Ne(biased, zero);
    const auto eb = hn::Max(biased, one);
    const auto eqb = hn::Max(eb, emin_b);
    const auto s = hn::Min(hn::Add(drop0, hn::Sub(eqb, eb)), k31);
    const auto m = hn::Or(hn::And(ax, mant), hn::IfThenElseZero(normal, hidden));
    auto r = hn::Shr(m, s);
    const auto ra = hn::ShiftLeft<1>(hn::Shl(m, hn::Sub(k31, s)));
    const auto inexact = hn::Ne(ra, zero);
    if constexpr (R == Rounding::NearestEven) {
      const auto round_bit = hn::ShiftRight<31>(ra);
      const auto sticky = hn::IfThenElseZero(hn::Ne(hn::ShiftLeft<1>(ra), zero), one);
      r = hn::Add(r, hn::And(round_bit, hn::And(hn::Or(sticky, r), one)));
    } else if constexpr (R == Rounding::NearestAway) {
      r = hn::Add(r, hn::ShiftRight<31>(ra));
    } else if constexpr (R == Rounding::Up) {
      r = hn::Add(r, hn::IfThenElseZero(hn::AndNot(is_neg, inexact), one));
    } else if constexpr (R == Rounding::Down) {
      r = hn::Add(r, hn::IfThenElseZero(hn::And(is_neg, inexact), one));
    }
    auto code = hn::Add(r, hn::ShiftLeftSame(hn::Add(eqb, code_off), frac));
    const auto ovf = hn::Gt(code, max_code);
    // Overflow magnitudes differ by sign only where the direction toward zero does (ru, rd).
    if constexpr (tz_pos == tz_neg) code = hn::IfThenElse(ovf, ovf_pos, code);
    else code = hn::IfThenElse(ovf, hn::IfThenElse(is_neg, ovf_neg, ovf_pos), code);
    const auto is_inf = hn::Eq(ax, inf);
    const auto is_nan = hn::Gt(ax, inf);
    // Zero: the general path already gives code 0 and no flags where the lowest binade's exponent
    // part is 0 (every format with subnormals).
    if (!zero_free) code = hn::IfThenZeroElse(hn::Eq(ax, zero), code);
    code = hn::IfThenElse(is_inf, inf_in, code);
    const auto nan_code = hn::Or(hn::And(hn::ShiftRightSame(hn::And(ax, mant), nan_shift), nan_mask), nan_or);
    code = hn::IfThenElse(is_nan, nan_code, code);
    code = hn::Xor(code, nan_keeps_sign ? sgn : hn::IfThenZeroElse(is_nan, sgn));  // XOR: ml_dtypes' NaN code has its sign bit
    hn::StoreU(code, d, out + i);
    if constexpr (kFlags) {
      const auto tiny = hn::And(hn::Or(hn::Lt(eb, emin_b), hn::Not(normal)), inexact);
      auto f = hn::Or(hn::IfThenElseZero(inexact, hn::Set(d, static_cast<std::uint32_t>(kInexact))),
                      hn::IfThenElseZero(tiny, hn::Set(d, static_cast<std::uint32_t>(kUnderflow))));
      f = hn::IfThenElse(ovf, hn::Set(d, static_cast<std::uint32_t>(kOverflow | kInexact)), f);
      f = hn::IfThenZeroElse(hn::Or(hn::Eq(ax, zero), hn::Or(is_inf, is_nan)), f);
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, f)), d8, flags + i);
    }
  }
  return i;
}

/// Lane-wise round_f32_ue8m0<R, kFlags>, whole vectors only.
template <Rounding R, bool kFlags, bool kCodes>
HWY_NOINLINE std::size_t RoundUe8m0(const ConvertTarget& t, const std::uint32_t* HWY_RESTRICT in, std::uint32_t first,
                                    std::uint32_t* HWY_RESTRICT out, std::uint8_t* HWY_RESTRICT flags, std::size_t n) {
  const hn::ScalableTag<std::uint32_t> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<std::uint8_t, decltype(d)> d8;
  const std::size_t N = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1u);
  const auto abs_mask = hn::Set(d, 0x7FFFFFFFu);
  const auto mant = hn::Set(d, 0x7FFFFFu);
  const auto half = hn::Set(d, 0x400000u);
  const auto inf = hn::Set(d, 0x7F800000u);
  const auto inf_in = hn::Set(d, t.inf_in_code);
  auto codes = hn::Iota(d, first);
  const auto step = hn::Set(d, static_cast<std::uint32_t>(N));
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    decltype(codes) x;
    if constexpr (kCodes) {
      x = hn::LoadU(d, in + i);
    } else {
      x = codes;
      codes = hn::Add(codes, step);
    }
    const auto ax = hn::And(x, abs_mask);
    const auto biased = hn::ShiftRight<23>(ax);
    const auto f = hn::And(ax, mant);
    const auto sub = hn::Eq(biased, zero);
    const auto fr = hn::IfThenElse(sub, hn::And(hn::ShiftLeft<1>(f), mant), f);
    const auto base = hn::IfThenZeroElse(sub, biased);
    auto code = base;
    if constexpr (R == Rounding::NearestEven) {
      const auto tie_odd = hn::And(hn::Eq(fr, half), hn::Ne(hn::And(base, one), zero));
      code = hn::Add(code, hn::IfThenElseZero(hn::Or(hn::Gt(fr, half), tie_odd), one));
    } else if constexpr (R == Rounding::NearestAway) {
      code = hn::Add(code, hn::IfThenElseZero(hn::Not(hn::Lt(fr, half)), one));
    } else if constexpr (R == Rounding::Up) {
      code = hn::Add(code, hn::IfThenElseZero(hn::Ne(fr, zero), one));
    }
    const auto ovf = hn::Gt(code, hn::Set(d, 254u));
    const auto tiny = hn::And(sub, hn::Lt(f, half));
    const auto is_inf = hn::Eq(ax, inf);
    const auto is_nan = hn::Gt(ax, inf);
    code = hn::IfThenElse(ovf, inf_in, code);
    code = hn::IfThenZeroElse(tiny, code);
    code = hn::IfThenElse(is_inf, inf_in, code);
    code = hn::IfThenElse(is_nan, hn::Set(d, 0xFFu), code);
    hn::StoreU(code, d, out + i);
    if constexpr (kFlags) {
      auto fl = hn::IfThenElseZero(hn::Ne(fr, zero), hn::Set(d, static_cast<std::uint32_t>(kInexact)));
      fl = hn::IfThenElse(ovf, hn::Set(d, static_cast<std::uint32_t>(kOverflow | kInexact)), fl);
      fl = hn::IfThenElse(tiny, hn::Set(d, static_cast<std::uint32_t>(kInexact | kUnderflow)), fl);
      fl = hn::IfThenZeroElse(hn::Or(is_inf, is_nan), fl);
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, fl)), d8, flags + i);
    }
  }
  return i;
}

template <Rounding R, bool kFlags, bool kCodes>
void RunOne(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out, std::uint8_t* flags,
            std::size_t n) {
  const std::size_t done = t.scale_only ? RoundUe8m0<R, kFlags, kCodes>(t, in, first, out, flags, n)
                                        : RoundIeee<R, kFlags, kCodes>(t, in, first, out, flags, n);
  std::uint8_t dummy = 0;
  for (std::size_t i = done; i < n; ++i) {  // the tail: the one-pattern core itself
    const std::uint32_t x = kCodes ? in[i] : first + static_cast<std::uint32_t>(i);
    out[i] = round_f32_any<R, kFlags>(t, x, 0, kFlags ? flags[i] : dummy);
  }
}

template <Rounding R>
void RunRounding(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                 std::uint8_t* flags, std::size_t n) {
  if (flags) {
    if (in) RunOne<R, true, true>(t, in, first, out, flags, n);
    else RunOne<R, true, false>(t, in, first, out, flags, n);
  } else {
    if (in) RunOne<R, false, true>(t, in, first, out, flags, n);
    else RunOne<R, false, false>(t, in, first, out, flags, n);
  }
}

void ConvertF32(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                std::uint8_t* flags, std::size_t n) {
  switch (t.rounding) {
    case Rounding::NearestEven: RunRounding<Rounding::NearestEven>(t, in, first, out, flags, n); break;
    case Rounding::NearestAway: RunRounding<Rounding::NearestAway>(t, in, first, out, flags, n); break;
    case Rounding::TowardZero: RunRounding<Rounding::TowardZero>(t, in, first, out, flags, n); break;
    case Rounding::Up: RunRounding<Rounding::Up>(t, in, first, out, flags, n); break;
    case Rounding::Down: RunRounding<Rounding::Down>(t, in, first, out, flags, n); break;
    case Rounding::Stochastic: break;  // refused by the caller
  }
}

std::int64_t CurrentTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace fpcert
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>

namespace fpcert {

HWY_EXPORT(ConvertF32);
HWY_EXPORT(CurrentTarget);

void convert_f32_simd(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                      std::uint8_t* flags, std::size_t n) {
  if (t.rounding == Rounding::Stochastic) throw std::invalid_argument("convert_f32_simd: stochastic rounding draws per-code bits");
  HWY_DYNAMIC_DISPATCH(ConvertF32)(t, in, first, out, flags, n);
}

namespace {
template <Rounding R>
void loop_rounding(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                   std::uint8_t* flags, std::size_t n) {
  std::uint8_t dummy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t x = in ? in[i] : first + static_cast<std::uint32_t>(i);
    out[i] = flags ? round_f32_any<R, true>(t, x, 0, flags[i]) : round_f32_any<R, false>(t, x, 0, dummy);
  }
}
}  // namespace

void convert_f32_loop(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                      std::uint8_t* flags, std::size_t n) {
  switch (t.rounding) {
    case Rounding::NearestEven: loop_rounding<Rounding::NearestEven>(t, in, first, out, flags, n); break;
    case Rounding::NearestAway: loop_rounding<Rounding::NearestAway>(t, in, first, out, flags, n); break;
    case Rounding::TowardZero: loop_rounding<Rounding::TowardZero>(t, in, first, out, flags, n); break;
    case Rounding::Up: loop_rounding<Rounding::Up>(t, in, first, out, flags, n); break;
    case Rounding::Down: loop_rounding<Rounding::Down>(t, in, first, out, flags, n); break;
    case Rounding::Stochastic: throw std::invalid_argument("convert_f32_loop: stochastic rounding draws per-code bits");
  }
}

std::vector<std::int64_t> simd_supported_targets() { return hwy::SupportedAndGeneratedTargets(); }

std::vector<std::int64_t> simd_compiled_targets() {
  std::vector<std::int64_t> r;
  for (std::int64_t t = HWY_TARGETS; t != 0; t &= t - 1) r.push_back(t & -t);
  return r;
}

std::string simd_target_name(std::int64_t target) { return hwy::TargetName(target); }

std::int64_t simd_dispatched_target() { return HWY_DYNAMIC_DISPATCH(CurrentTarget)(); }

void simd_force_targets(std::int64_t targets) { hwy::SetSupportedTargetsForTest(targets); }

}  // namespace fpcert
#endif  // HWY_ONCE
