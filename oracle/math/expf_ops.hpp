// oracle/math/expf_ops.hpp — a binary32 exp written as a fixed sequence of IEEE 754 binary32 operations (additions,
// multiplications and fused multiply-adds, each rounded to nearest even, no other library call), so that the same
// source gives the same bits on any conforming host and on a GPU built without contraction (fpcert builds CUDA with
// --fmad=false and the host with -ffp-contract=off; the FMAs here are explicit fmaf calls). It is the exp a kernel can
// declare EXACTLY: the softmax's bitwise tier (oracle/softmax/softmax_emulate.hpp) evaluates it on the host and expects
// the kernel's bits (docs/softmax.md, "Bitwise tier"). Its accuracy is a claim checked like any elementwise subject's
// (the CPU subject fpcert_expf_ops and the CUDA one cuda_fpcert_expf_ops, docs/elementwise.md): kExpfOpsUlps below.
//
// Steps, for x in [-104, 89] (outside: 0 below, +Inf above, both what exp rounds to there; NaN returns NaN):
//  1. k = nearest integer to x log2(e), by the 1.5 * 2^23 shifter: t = fma(x, log2e, 1.5 * 2^23), k = t - 1.5 * 2^23
//     (exact: |x log2 e| < 2^8, so t's unit is 1 and the subtraction is exact).
//  2. r = x - k ln2 by Cody and Waite's two constants: hi = 0x1.62e4p-1 has 15 significant bits, so k hi (|k| <= 151:
//     8 bits) is exact and r1 = fma(-k, hi, x) is exact (r1 is a multiple of min(ulp(x), 2^-15) below 0.36 in
//     magnitude, which 24 bits hold); r = fma(-k, lo, r1), one rounding, |r| <= 0.3466 + 2^-18.
//  3. p = 1 + r + r^2/2! + ... + r^7/7! by Horner with fmaf (the coefficients 1/j! rounded to binary32); the Taylor
//     remainder is below r^8/8! e^|r| < 2^-26.6 relative on |r| <= 0.347.
//  4. y = (p 2^k1) 2^k2 with k1 = floor(k/2), k2 = k - k1: both powers normal, p 2^k1 exact, so the last product is the
//     only rounding of the scaling (to a subnormal, to zero or to +Inf as IEEE rounds the exact product).
#pragma once

#include <cstdint>
#include <math.h>

#ifndef FPCERT_HD
#define FPCERT_HD
#endif

namespace fpcert::math {

/// The accuracy claimed for expf_ops (ulps of the binary32 result, subnormal results in the subnormal grid), measured
/// over all 2^32 inputs (bench/bench_expf_ops; the elementwise suite checks the claim, docs/elementwise.md).
inline constexpr double kExpfOpsUlps = 1.0;

/// 2^e as binary32 for -126 <= e <= 127, exact.
FPCERT_HD inline float pow2f_ops(int e) {
  const std::uint32_t bits = static_cast<std::uint32_t>(e + 127) << 23;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

/// exp(x) in binary32 by the steps above.
FPCERT_HD inline float expf_ops(float x) {
  if (!(x == x)) return x + x;  // NaN in, quiet NaN out
  if (x < -104.0f) return 0.0f;  // exp(-104) < 2^-150: rounds to +0 (and -Inf gives +0)
  if (x > 89.0f) return __builtin_inff();  // exp(89) > the largest binary32
  constexpr float kLog2e = static_cast<float>(1.4426950408889634);
  constexpr float kShift = 0x1.8p23f;
  constexpr float kLn2Hi = 0x1.62e4p-1f;
  constexpr float kLn2Lo = static_cast<float>(0.6931471805599453094 - 0.693145751953125);
  const float t = fmaf(x, kLog2e, kShift);
  const float kf = t - kShift;
  const float r1 = fmaf(-kf, kLn2Hi, x);
  const float r = fmaf(-kf, kLn2Lo, r1);
  constexpr float c7 = static_cast<float>(1.0 / 5040), c6 = static_cast<float>(1.0 / 720), c5 = static_cast<float>(1.0 / 120);
  constexpr float c4 = static_cast<float>(1.0 / 24), c3 = static_cast<float>(1.0 / 6);
  float p = fmaf(c7, r, c6);
  p = fmaf(p, r, c5);
  p = fmaf(p, r, c4);
  p = fmaf(p, r, c3);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const int k = static_cast<int>(kf);
  const int k1 = k >= 0 ? k / 2 : -((1 - k) / 2);  // floor(k / 2)
  return (p * pow2f_ops(k1)) * pow2f_ops(k - k1);
}

}  // namespace fpcert::math
