// tests/oracle/fused_dot_support.hpp — what the fused dot product tests share (fused_dot_test.cpp,
// fused_dot_fast_test.cpp): exact codes of test inputs, a dot in the formats of a card, the Hopper cards.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/fused_dot.hpp"

namespace fpcert::test_fused {

using namespace fpcert;


/// The code of x in f; x must be exactly representable (a test input, not a rounding).
inline std::uint32_t code(const Format& f, double x) {
  const Rounded r = round_double(f, x, Rounder::nearest(f));
  REQUIRE(to_double(f, r.code) == x);
  return static_cast<std::uint32_t>(to_container(f, r.code));
}
inline double value(const Format& f, std::uint64_t c) { return to_double(f, c); }

/// Hopper's mma.sync f16 -> f32 as MMA-Sim and Khattak-Mikaitis describe it: blocks of 16, 25
/// fraction bits below the largest e_a + e_b, C in the block, truncation, RZ into fp32.
inline FusedDotParams hopper_f16() {
  FusedDotParams p;
  p.a = p.b = f16;
  p.acc = f32;
  p.fused_length = 16;
  p.align_bits = 25;
  p.acc_bits = 23;
  return p;
}

struct Dot {
  std::vector<std::uint32_t> a, b;
  std::uint64_t c = 0;
};
/// k zero products and C = 0 in the formats of p.
inline Dot zeros(int k) { return Dot{std::vector<std::uint32_t>(k, 0), std::vector<std::uint32_t>(k, 0), 0}; }
inline double run(const FusedDotParams& p, const Dot& d) {
  const std::string bad = check(p);
  REQUIRE_MESSAGE(bad.empty(), bad);
  return value(p.acc, fused_dot(p, d.a.data(), d.b.data(), static_cast<int>(d.a.size()), d.c));
}
inline void product(const FusedDotParams& p, Dot& d, int i, double a, double b) {
  d.a[i] = code(p.a, a);
  d.b[i] = code(p.b, b);
}

/// Hopper's FP8 mma.sync m16n8k32 (docs/tensor_cores.md, "FP8 mma.sync on Hopper"): the k = 32 inputs
/// dealt to two blocks of 16 in runs of 2 (block 0: k mod 4 < 2), each block the f16 HMMA's (25
/// fraction bits, truncation), the first from +0, the second from the first's result; C added last.
inline FusedDotParams hopper_fp8(const Format& acc) {
  FusedDotParams p;
  p.a = p.b = e4m3;
  p.acc = acc;
  p.fused_length = 16;
  p.interleave_run = 2;
  p.c_join = CJoin::LastRn;
  p.align_bits = 25;
  if (acc == f16) {
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.align_floor = -21;
    p.nan_code = 0x7FFF;
  } else {
    p.acc_bits = 23;
  }
  return p;
}

}  // namespace fpcert::test_fused
