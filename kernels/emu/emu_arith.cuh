// kernels/emu/emu_arith.cuh — the scalar arithmetic of the emulated-precision kernels, one description
// for the device and the host: tf32 / bf16 slices and split products (3xTF32, nxBF16), bf16 -> fp16
// with a power-of-two scale and its exactness flags, exponent windows, exact power-of-two rescaling.
//
// Without nvcc this header includes no CUDA header and compiles as plain C++: the CPU models of the
// BF16-on-FP16 strategies (kernels/emu/bf16_on_fp16.cpp) and the host emulation tests use the same
// functions as the device code (the CUTLASS half_t::convert pattern: intrinsic and software model
// in one function, split by __CUDA_ARCH__). Every operation rounds once, as written: device code
// uses __fmaf_rn / __fadd_rn / __fsub_rn / __fmul_rn (never contracted), host code std::fma and
// plain operators under -ffp-contract=off.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#define FPCERT_HD __host__ __device__ __forceinline__
#else
#define FPCERT_HD inline
#endif

namespace fpcert::emu {

// ---- bits and single-rounding fp32 operations ----
FPCERT_HD std::uint32_t f32_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
#endif
}
FPCERT_HD float bits_f32(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, 4);
  return x;
#endif
}
FPCERT_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
FPCERT_HD float fadd_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FPCERT_HD float fsub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
FPCERT_HD float fmul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/// 2^m as an fp32 value, m in [-149, 127] (exact: subnormal powers below -126).
FPCERT_HD float pow2f(int m) {
  return m >= -126 ? bits_f32(static_cast<std::uint32_t>(m + 127) << 23) : bits_f32(1u << (m + 149));
}

/// RN(x * 2^m) with one rounding, for any int m in [-1000, 1000]. In the common case 2^m is an fp32
/// value and one IEEE multiplication is the single rounding (exact unless the result is subnormal,
/// where it rounds once, correctly). Otherwise the product is formed exactly in fp64 (x has 24 bits,
/// 2^m is an fp64 normal) and rounded once to fp32.
FPCERT_HD float ldexp_rn(float x, int m) {
  if (m >= -149 && m <= 127) return fmul_rn(x, pow2f(m));
  const std::uint64_t p2_bits = static_cast<std::uint64_t>(m + 1023) << 52;
#if defined(__CUDA_ARCH__)
  const double p2 = __longlong_as_double(static_cast<long long>(p2_bits));
#else
  double p2;
  std::memcpy(&p2, &p2_bits, 8);
#endif
#if defined(__CUDA_ARCH__)
  return __double2float_rn(__dmul_rn(static_cast<double>(x), p2));
#else
  return static_cast<float>(static_cast<double>(x) * p2);
#endif
}

// ---- slices of split products ----

/// How one slice is rounded from fp32: the split table's (slice format, rounding) pairs.
enum class SliceKind : std::uint8_t { Tf32NearestEven, Tf32TowardZero, Bf16NearestEven };

/// fp32 -> tf32 (10 fraction bits: the top 19 bits of the pattern), nearest-even, on the bits. The
/// same integer rounding is right for normal and subnormal fp32 (tf32 shares fp32's exponent field
/// and subnormal spacing); a carry out of the fraction moves into the next binade (or to Inf, the
/// correct nearest result above the largest tf32). NaN stays NaN.
FPCERT_HD std::uint32_t tf32_rn_bits(std::uint32_t b) {
  if ((b & 0x7F800000u) == 0x7F800000u) return (b & 0x007FFFFFu) ? (b | 0x00400000u) & ~0x1FFFu : b;
  return (b + 0x0FFFu + ((b >> 13) & 1u)) & ~0x1FFFu;
}
/// fp32 -> tf32 toward zero: the low 13 bits dropped (NaN kept quiet).
FPCERT_HD std::uint32_t tf32_rz_bits(std::uint32_t b) {
  if ((b & 0x7F800000u) == 0x7F800000u) return (b & 0x007FFFFFu) ? (b | 0x00400000u) & ~0x1FFFu : b;
  return b & ~0x1FFFu;
}
/// fp32 -> bf16 nearest-even. Device: __float2bfloat16_rn (cvt.rn.bf16.f32); host: the same rounding
/// on the bits (the carry rule as tf32's, at bit 16). tests/kernels/emu/emulation_gpu_test.cpp checks that both
/// equal the split table's rounding (kernels/emu/split.cpp, through the oracle) bit for bit.
FPCERT_HD std::uint16_t bf16_rn_code(float x) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
#else
  const std::uint32_t b = f32_bits(x);
  if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu)) return static_cast<std::uint16_t>((b >> 16) | 0x40u);
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
#endif
}
FPCERT_HD float bf16_value(std::uint16_t code) { return bits_f32(static_cast<std::uint32_t>(code) << 16); }

/// One slice: x rounded to the slice format, as an fp32 value.
FPCERT_HD float slice_round(SliceKind k, float x) {
  switch (k) {
    case SliceKind::Tf32NearestEven: return bits_f32(tf32_rn_bits(f32_bits(x)));
    case SliceKind::Tf32TowardZero: return bits_f32(tf32_rz_bits(f32_bits(x)));
    case SliceKind::Bf16NearestEven: break;
  }
  return bf16_value(bf16_rn_code(x));
}

/// The largest finite value of the slice format, with x's sign: 0x7f7fe000 (tf32), 0x7f7f0000 (bf16).
FPCERT_HD float slice_max(SliceKind k, float x) {
  const std::uint32_t mag = k == SliceKind::Bf16NearestEven ? 0x7F7F0000u : 0x7F7FE000u;
  return bits_f32((f32_bits(x) & 0x80000000u) | mag);
}
/// A finite x truncated (rounded toward zero) into the slice format.
FPCERT_HD float slice_truncate(SliceKind k, float x) {
  return bits_f32(f32_bits(x) & (k == SliceKind::Bf16NearestEven ? 0xFFFF0000u : ~0x1FFFu));
}

/// x_0 = Q(x), x_l = Q(x - x_0 - ... - x_{l-1}); each difference is exact in fp32 (kernels/emu/split.hpp).
/// Overflow guard: a finite x above the slice format's largest value (fp32's top binade holds values
/// that tf32 and bf16 round to Inf) gets x_0 = that largest value, not Inf (where x - x_0 = -Inf would
/// make every product with the operand NaN, zero included), and its last slice is truncated, so the
/// slices never sum past |x| into an fp32 overflow (kernels/emu/split.hpp gives the error bounds).
FPCERT_HD void split_slices(SliceKind k, int slices, float x, float* out) {
  float rest = x;
  bool saturated = false;
  for (int l = 0; l < slices; ++l) {
    float q = saturated && l == slices - 1 ? slice_truncate(k, rest) : slice_round(k, rest);
    if ((f32_bits(q) & 0x7FFFFFFFu) == 0x7F800000u && (f32_bits(rest) & 0x7F800000u) != 0x7F800000u) {
      q = slice_max(k, rest);
      saturated = true;
    }
    out[l] = q;
    rest = fsub_rn(rest, q);
  }
}

/// The kept slice products of a scheme, in the split table's merge order (smallest first).
struct TermList {
  int count = 0;
  std::int8_t i[9] = {}, j[9] = {};
};

/// A scheme's scalar product: each kept slice product rounded once (fma(x, y, +0): exact unless it
/// underflows), summed in fp32 in the table's order — split_product() of kernels/emu/split.cpp.
FPCERT_HD float split_product(SliceKind k, int slices, const TermList& t, float a, float b) {
  float as[3] = {0, 0, 0}, bs[3] = {0, 0, 0};
  split_slices(k, slices, a, as);
  split_slices(k, slices, b, bs);
  float c = 0.0f;
  for (int q = 0; q < t.count; ++q) {
    const float p = fma_rn(as[t.i[q]], bs[t.j[q]], 0.0f);
    c = q == 0 ? p : fadd_rn(c, p);
  }
  return c;
}

// ---- bf16 -> fp16 with a power-of-two scale (the BF16-on-FP16 strategies) ----

/// Binades: floor(log2 |x|) of a finite nonzero bf16 value, in [-133, 127]; kNoBinade for +-0, Inf, NaN.
constexpr int kNoBinade = -32768;
constexpr int kBinadeMin = -133, kBinadeMax = 127;
constexpr int kBinadeBins = kBinadeMax - kBinadeMin + 1;  // 261 histogram bins: index binade - kBinadeMin
/// fp16's exact window for bf16 values: a bf16 value of binade e has 8 significant bits, the lowest
/// at 2^(e-7) (or above, for bf16 subnormals); scaled by 2^s it is exact in fp16 when e + s lies in
/// [kF16Low, kF16High] = [-17, 15]: its lowest bit 2^(e+s-7) >= 2^-24 (fp16's smallest subnormal)
/// and it stays <= 2^15 (2 - 2^-7) = 65280 <= 65504. 33 binades: spans up to kSpanLossless = 32.
constexpr int kF16High = 15, kF16Low = -17, kSpanLossless = kF16High - kF16Low;
/// The same without fp16 subnormals (a flush-to-zero path): [-14, 15], spans up to 29.
constexpr int kF16LowNormal = -14;

FPCERT_HD int bit_length(std::uint32_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}

FPCERT_HD int bf16_binade(std::uint16_t code) {
  const int e = (code >> 7) & 0xFF;
  const int f = code & 0x7F;
  if (e == 0xFF || (e == 0 && f == 0)) return kNoBinade;
  if (e == 0) return -134 + bit_length(static_cast<std::uint32_t>(f));  // subnormal f * 2^-133
  return e - 127;
}

/// Flags of one conversion.
enum F16Flag : std::uint8_t {
  kF16Inexact = 1,     ///< the fp16 value differs from x * 2^s (any of the below, or an ordinary rounding)
  kF16Overflow = 2,    ///< became +-Inf
  kF16Underflow = 4,   ///< a nonzero x became +-0
  kF16Subnormal = 8,   ///< the result is a nonzero fp16 subnormal (a flush-to-zero path would lose it)
};
struct F16Conv {
  std::uint16_t code;
  std::uint8_t flags;
};

/// RN_f16(x * 2^s) for a bf16 code x and any int s, with one rounding (nearest-even, IEEE overflow to
/// Inf), computed on integers: x = M * 2^q exactly (M < 2^8), normalised to an 11-bit significand,
/// then placed at fp16's exponent; below 2^-14 the significand is shifted right with round-to-even.
/// +-0 stays +-0; Inf stays Inf; NaN becomes the quiet fp16 NaN of its sign.
FPCERT_HD F16Conv bf16_to_f16_scaled(std::uint16_t x, int s) {
  const std::uint16_t sign = static_cast<std::uint16_t>((x & 0x8000u) ? 0x8000u : 0u);
  const int e = (x >> 7) & 0xFF;
  const std::uint32_t f = x & 0x7Fu;
  if (e == 0xFF) return {static_cast<std::uint16_t>(sign | (f ? 0x7E00u : 0x7C00u)), 0};
  if (e == 0 && f == 0) return {sign, 0};
  std::uint32_t M = e ? (0x80u | f) : f;  // |x| = M * 2^q
  int q = e ? e - 127 - 7 : -133;
  // Normalise M to exactly 11 bits: N in [2^10, 2^11), |x| 2^s = N * 2^r.
  const int L = bit_length(M);
  const std::uint32_t N = M << (11 - L);
  const int r = q + s - (11 - L);
  // fp16: a normal value is N * 2^r with r = E - 25, E in [1, 30]: r in [-24, 5].
  if (r > 5) return {static_cast<std::uint16_t>(sign | 0x7C00u), kF16Overflow | kF16Inexact};  // >= 2^16 > 65520
  if (r >= -24) return {static_cast<std::uint16_t>(sign | ((r + 25) << 10) | (N - 0x400u)), 0};
  // Below the normal range: the subnormal significand N / 2^d at 2^-24 (d >= 1), rounded to even.
  const int d = -24 - r;
  std::uint32_t m = 0;
  bool inexact = true;
  if (d <= 12) {
    const std::uint32_t rem = N & ((1u << d) - 1u), half = 1u << (d - 1);
    m = N >> d;
    inexact = rem != 0;
    if (rem > half || (rem == half && (m & 1u))) ++m;
  }  // d > 12: N < 2^11 <= 2^(d-1), below half the smallest subnormal: rounds to 0
  std::uint8_t flags = inexact ? kF16Inexact : 0;
  if (m == 0) flags |= kF16Underflow;
  else if (m < 0x400u) flags |= kF16Subnormal;  // m == 2^10 is the smallest normal (rounded up)
  return {static_cast<std::uint16_t>(sign | m), flags};
}

/// The exact value of an fp16 code as fp32 (every fp16 value is an fp32 value).
FPCERT_HD float f16_value(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1F, f = h & 0x3FFu;
  if (e == 0x1F) return bits_f32(sign | 0x7F800000u | (f << 13));
  if (e == 0) return f ? (sign ? -1.0f : 1.0f) * fmul_rn(static_cast<float>(f), pow2f(-24)) : bits_f32(sign);
  return bits_f32(sign | ((e + 112u) << 23) | (f << 13));
}

/// The window [top - 32, top] of 33 binades holding the most entries of a histogram (bins indexed by
/// binade - kBinadeMin), top chosen among binades that occur; ties go to the highest top. Returns
/// kNoBinade for an empty histogram. (With a span <= 32 this is the maximum binade: every entry fits.)
template <typename Count>
FPCERT_HD int best_window_top(const Count* hist) {
  int best_top = kNoBinade;
  long long best = -1, run = 0;
  for (int b = 0; b < kBinadeBins; ++b) {
    run += static_cast<long long>(hist[b]);
    if (b > kSpanLossless) run -= static_cast<long long>(hist[b - kSpanLossless - 1]);
    if (hist[b] > 0 && run >= best) {
      best = run;
      best_top = b + kBinadeMin;
    }
  }
  return best_top;
}

/// Bit of split term (i, j) (slice i of A times slice j of B) in a term mask, and the masks of the table's schemes
/// (kernels/emu/split.cpp): three terms (3xTF32, 3xBF16), six (6xBF16), nine (9xBF16). Every split kernel's
/// instantiations use these (emu_scheme.cuh's term_mask_of derives a scheme's mask and must meet one of them).
constexpr unsigned term_bit(int i, int j) { return 1u << (3 * i + j); }
constexpr unsigned kTermMask3 = term_bit(0, 0) | term_bit(0, 1) | term_bit(1, 0);
constexpr unsigned kTermMask6 = kTermMask3 | term_bit(2, 0) | term_bit(1, 1) | term_bit(0, 2);
constexpr unsigned kTermMask9 = kTermMask6 | term_bit(2, 1) | term_bit(1, 2) | term_bit(2, 2);

/// How the MMA treats a 128 x 128 tile of C (the BF16-on-FP16 kernels): one scale per line, the fragment
/// accumulating all of K with one rescale at the end; or a fresh partial per K-block, rescaled and
/// added in fp32.
constexpr std::uint8_t kModeRow = 0, kModeKBlock = 1;
constexpr int kModeTile = 128;

/// Whether a binade lies in the window of top t: e in [t - 32, t].
FPCERT_HD bool in_window(int e, int top) { return e <= top && e >= top - kSpanLossless; }
/// The scale that puts a window's top at fp16's top binade 15 (0 for an empty line or segment).
FPCERT_HD int scale_for_top(int top) { return top == kNoBinade ? 0 : kF16High - top; }

}  // namespace fpcert::emu
