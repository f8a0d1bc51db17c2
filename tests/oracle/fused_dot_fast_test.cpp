// tests/oracle/fused_dot_fast_test.cpp — the fused dot product's fast path and its lanes held to the general path
// bit for bit on random and adversarial dots of every card shape, and the notes of inexact block results
// (split from fused_dot_test.cpp; the shared helpers in fused_dot_support.hpp).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "oracle/fused_dot.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/philox.hpp"
#include "tests/support/test_seed.hpp"
#include "tests/oracle/fused_dot_support.hpp"

using namespace fpcert;
using namespace fpcert::test_fused;


namespace {

/// A card shape for the fast-path tests: input format, instruction k, fused length, window bits, interleave run,
/// block rounding, how C joins; the result's fraction bits (23: fp32) and the window's floor.
struct Shape {
  const Format* in;
  int k, fused, align, interleave;
  Rounding rounding;
  CJoin join;
  int acc_bits = 23, floor = kNoAlignFloor;
};

/// The parameters of an fp32-accumulator card of this shape.
FusedDotParams params_of(const Shape& sh) {
  FusedDotParams p;
  p.a = p.b = *sh.in;
  p.acc = f32;
  p.fused_length = sh.fused;
  p.align_bits = sh.align;
  p.interleave_run = sh.interleave;
  p.block_rounding = sh.rounding;
  p.c_join = sh.join;
  p.acc_bits = sh.acc_bits;
  p.align_floor = sh.floor;
  return p;
}

/// The card shapes fused_dot's fast path takes (both fast-path tests run every one).
const std::vector<Shape> kFastShapes = {
    {&f16, 16, 16, 25, 0, Rounding::TowardZero, CJoin::InBlock},  {&bf16, 16, 16, 25, 0, Rounding::TowardZero, CJoin::InBlock},
    {&tf32, 8, 8, 25, 0, Rounding::TowardZero, CJoin::InBlock},   {&f16, 16, 8, 24, 0, Rounding::NearestEven, CJoin::InBlock},
    {&e4m3, 32, 16, 25, 2, Rounding::TowardZero, CJoin::LastRn},  {&e5m2, 32, 16, 25, 2, Rounding::TowardZero, CJoin::LastRn},
    {&f16, 16, 16, 36, 0, Rounding::NearestEven, CJoin::InBlock}, {&bf16, 16, 4, 23, 0, Rounding::TowardZero, CJoin::LastRn},
    // Hopper's FP8 wgmma (docs/tensor_cores.md: one block of 32, a 13-bit window, an e8m13 result toward zero), with
    // and without Khattak and Mikaitis' floor; windows narrower than C's 24 bits; results of few bits to nearest.
    {&e4m3, 32, 32, 13, 0, Rounding::TowardZero, CJoin::InBlock, 13},
    {&e5m2, 32, 32, 13, 0, Rounding::TowardZero, CJoin::InBlock, 13, -133},
    {&f16, 16, 16, 13, 0, Rounding::TowardZero, CJoin::InBlock},
    {&bf16, 32, 32, 2, 0, Rounding::NearestEven, CJoin::InBlock, 4, -20},
    {&f16, 16, 16, 25, 0, Rounding::NearestEven, CJoin::InBlock, 10, -21},
};

/// kFastShapes and more.
std::vector<Shape> fast_shapes_and(std::initializer_list<Shape> more) {
  std::vector<Shape> v = kFastShapes;
  v.insert(v.end(), more);
  return v;
}

}  // namespace

TEST_CASE("fused_dot: the fast path equals the general path bit for bit (random and adversarial dots, every card shape)") {
  // fused_dot takes an int64 path for the parameters of fp32-accumulator cards; fused_dot_reference is the
  // general (128-bit window) code. Parameter sets on and off the fast path, operand codes drawn over the whole
  // code space (zeros, subnormals, Inf, NaN included) or from a narrow exponent band (long carries, exact
  // cancellation), C from normal, subnormal, huge, Inf and NaN codes.
  const std::vector<Shape> shapes = fast_shapes_and({
      {&f16, 64, 64, 25, 0, Rounding::TowardZero, CJoin::InBlock},  // off the fast path (a block of 64)
      {&f16, 16, 16, 25, 0, Rounding::Down, CJoin::InBlock},       // off the fast path (directed down)
  });
  std::uint64_t ctr = 0;
  int compared = 0, wrong = 0;
  for (const Shape& sh : shapes) {
    const FusedDotParams p = params_of(sh);
    REQUIRE(check(p).empty());
    const Format& f = *sh.in;
    const std::uint32_t codes = f == tf32 ? (1u << 19) : (1u << f.total_bits());
    for (int trial = 0; trial < 6000; ++trial) {
      const auto w = philox_4x32(test::seed(), 91, ctr++);
      const int mode = static_cast<int>(w[0] % 3);  // 0: any code; 1: one exponent band; 2: cancelling pairs
      std::vector<std::uint32_t> a(static_cast<std::size_t>(sh.k)), b(a.size());
      for (int i = 0; i < sh.k; ++i) {
        const auto r = philox_4x32(test::seed(), 92, ctr++);
        std::uint32_t ca = r[0] % codes, cb = r[1] % codes;
        if (mode >= 1) {  // magnitudes within a few binades of 1, so carries and cancellation happen
          const double x = std::ldexp(1.0 + (r[2] % 1024) / 1024.0, static_cast<int>(r[3] % 5) - 2) * ((r[2] >> 20) & 1 ? -1 : 1);
          ca = static_cast<std::uint32_t>(to_container(f, round_double(f, x, Rounder::nearest(f)).code));
          cb = static_cast<std::uint32_t>(to_container(f, round_double(f, mode == 2 && i % 2 ? 1.0 : x, Rounder::nearest(f)).code));
          if (mode == 2 && i % 2) ca = a[static_cast<std::size_t>(i - 1)] ^ static_cast<std::uint32_t>(to_container(f, f.sign_mask()));
        }
        if (f == tf32) ca <<= 13, cb <<= 13;
        a[static_cast<std::size_t>(i)] = ca;
        b[static_cast<std::size_t>(i)] = cb;
      }
      std::uint64_t c;
      switch (w[1] % 6) {
        case 0: c = 0; break;
        case 1: c = w[2] & 0x807FFFFFu; break;                 // subnormal (or zero)
        case 2: c = (w[2] & 0x80000000u) | 0x7F7FFFF0u; break;  // near the largest finite
        case 3: c = (w[2] & 1) ? 0x7F800000u : 0x7FC00000u; break;  // Inf, NaN
        default: c = std::bit_cast<std::uint32_t>(static_cast<float>(std::ldexp((w[2] % 2000) / 1000.0 - 1.0, static_cast<int>(w[3] % 40) - 20)));
      }
      const std::uint64_t fast = fused_dot(p, a.data(), b.data(), sh.k, c), ref = fused_dot_reference(p, a.data(), b.data(), sh.k, c);
      ++compared;
      if (fast != ref) {
        if (++wrong <= 5) MESSAGE("differs: in " << f.tag << " align " << sh.align << " mode " << mode << ": fast " << fast << " ref " << ref);
      }
    }
  }
  CHECK(compared == 6000 * static_cast<int>(shapes.size()));
  CHECK(wrong == 0);
  // Rounding to nearest that carries into the next binade: C = 1 - 2^-24 plus the product 1.5 * 2^-25 (f16 inputs
  // 1.5 * 2^-12 and 2^-13, inside a 25-bit window below C's 2^-1) is exactly 1 - 2^-26: nearest gives 1.0, toward
  // zero 1 - 2^-24.
  FusedDotParams rn = hopper_f16();
  rn.block_rounding = Rounding::NearestEven;
  Dot d = zeros(16);
  product(rn, d, 3, 1.5 * 0x1p-12, 0x1p-13);
  d.c = 0x3F7FFFFFu;
  CHECK(run(rn, d) == 1.0);
  CHECK(fused_dot_reference(rn, d.a.data(), d.b.data(), 16, d.c) == 0x3F800000u);
  CHECK(run(hopper_f16(), d) == 1.0 - 0x1p-24);
}

TEST_CASE("fused_dot notes: block results that round inexactly below fp32's normal range are counted, exact ones are not") {
  // 2^-75 * 2^-75 = 2^-150: half the smallest subnormal, so the block result (RZ) is +0 and inexact;
  // 2^-74 * 2^-75 = 2^-149 is the smallest subnormal itself: exact. bf16 inputs (fp32's exponent range).
  FusedDotParams p = hopper_f16();
  p.a = p.b = bf16;
  Dot inexact = zeros(16), exact = zeros(16);
  product(p, inexact, 0, 0x1p-75, 0x1p-75);
  product(p, exact, 0, 0x1p-74, 0x1p-75);
  FusedDotNotes n1, n2;
  CHECK(fused_dot(p, inexact.a.data(), inexact.b.data(), 16, 0, &n1) == 0u);
  CHECK(n1.subnormal_inexact == 1);
  CHECK(fused_dot(p, exact.a.data(), exact.b.data(), 16, 0, &n2) == 1u);  // 2^-149
  CHECK(n2.subnormal_inexact == 0);
  // A normal result is never counted, on the fast path either.
  Dot one = zeros(16);
  product(p, one, 0, 1.5, 1.0);
  FusedDotNotes n3;
  CHECK(fused_dot(p, one.a.data(), one.b.data(), 16, 0, &n3) == 0x3FC00000u);
  CHECK(n3.subnormal_inexact == 0);
}

TEST_CASE("fused_dot_lanes: kFusedLanes chained instructions equal the general path bit for bit, notes as fused_dot's") {
  // fused_dot_lanes computes one row of A with kFusedLanes columns of B in binary64 (oracle/fused_dot.cpp) and hands
  // the lanes it does not decide to fused_dot. Each lane is compared with fused_dot_reference (the general 128-bit
  // window code, independent of both fast paths) chained over `steps` instructions, and its notes with fused_dot's.
  // Every card shape the fast path takes; operands drawn per lane from: any code (zeros, subnormals, Inf, NaN), a band
  // near 1 (carries), pairs that cancel exactly (A's pairs equal, B's opposite), one large product and negative ones
  // beyond the window (toward zero vs down), a band near 2^-63 (bf16/tf32: sums at fp32's subnormal boundary) and one
  // near 2^63 (sums beyond fp32's range); C from zero, -0, subnormal, huge, Inf, NaN and ordinary codes.
  const std::vector<Shape> shapes = fast_shapes_and({
      {&bf16, 16, 16, 25, 0, Rounding::NearestEven, CJoin::InBlock}, {&tf32, 8, 8, 23, 0, Rounding::NearestEven, CJoin::InBlock},
  });
  constexpr int W = 2 * kFusedLanes, ld = W + 3, steps = 3;  // two groups of lanes, a panel wider than them
  const std::uint64_t seed = test::seed();
  CAPTURE(seed);
  std::uint64_t ctr = 0;
  int compared = 0, wrong = 0, special = 0, subnormal = 0, zero = 0, noted = 0;
  for (const Shape& sh : shapes) {
    const FusedDotParams p = params_of(sh);
    REQUIRE(check(p).empty());
    REQUIRE(fused_lanes_apply(p, sh.k));
    const Format& f = *sh.in;
    const bool wide = f.emax() == 127;  // bf16, tf32: fp32's exponent range
    const std::uint32_t ncodes = f == tf32 ? (1u << 19) : (1u << f.total_bits());
    auto enc = [&](double x) {
      auto c = static_cast<std::uint32_t>(to_container(f, round_double(f, x, Rounder::nearest(f)).code));
      return c;
    };
    const int K = sh.k * steps;
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<std::uint32_t> a(static_cast<std::size_t>(K)), b(static_cast<std::size_t>(K * ld), 0u);
      const auto wa = philox_4x32(seed, 93, ctr++);
      const int amode = static_cast<int>(wa[0] % 5);
      for (int i = 0; i < K; ++i) {
        const auto r = philox_4x32(seed, 94, ctr++);
        const double band = std::ldexp(1.0 + (r[2] % 1024) / 1024.0, static_cast<int>(r[3] % 5) - 2) * ((r[2] >> 20) & 1 ? -1 : 1);
        std::uint32_t ca = r[0] % ncodes;
        if (f == tf32) ca <<= 13;
        switch (amode) {
          case 0: break;                                                                   // any code
          case 1: ca = enc(band); break;                                                   // near 1
          case 2: ca = i % 2 ? a[static_cast<std::size_t>(i - 1)] : enc(band); break;    // equal pairs (B cancels them)
          case 3: ca = enc(wide ? std::ldexp(band, -60 - static_cast<int>(r[1] % 8)) : band); break;  // near 2^-63 (bf16, tf32)
          default: ca = enc(wide ? std::ldexp(band, 62) : band * 64);                      // near 2^62
        }
        a[static_cast<std::size_t>(i)] = ca;
      }
      int bmodes[W];
      for (int w = 0; w < W; ++w) {
        const auto wb = philox_4x32(seed, 95, ctr++);
        const int bmode = amode == 3 && wb[1] % 2 ? 4 : static_cast<int>(wb[0] % 6);  // tiny with tiny: half the lanes
        bmodes[w] = bmode;
        for (int i = 0; i < K; ++i) {
          const auto r = philox_4x32(seed, 96, ctr++);
          const double band = std::ldexp(1.0 + (r[2] % 1024) / 1024.0, static_cast<int>(r[3] % 5) - 2) * ((r[2] >> 20) & 1 ? -1 : 1);
          std::uint32_t cb = r[0] % ncodes;
          if (f == tf32) cb <<= 13;
          const std::uint32_t sign = static_cast<std::uint32_t>(to_container(f, f.sign_mask()));
          switch (bmode) {
            case 0: break;
            case 1: cb = enc(band); break;
            case 2: cb = i % 2 ? b[static_cast<std::size_t>((i - 1) * ld + w)] ^ sign : enc(band); break;  // opposite pairs
            // One large input per instruction, the rest small and negative: their products fall below the window
            // (f16: 2^15 vs 2^-14, 29 binades) and truncate toward zero, not down.
            case 3: cb = i % sh.k == 0 ? enc(wide ? 0x1p40 : 0x1p15) : enc(-std::fabs(band) * (wide ? 0x1p-40 : 0x1p-13)); break;
            case 4: cb = enc(wide ? std::ldexp(band, -66 - static_cast<int>(r[1] % 8)) : band); break;  // products near 2^-130
            default: cb = enc(wide ? std::ldexp(band, 63) : band * 512);
          }
          b[static_cast<std::size_t>(i * ld + w)] = cb;
        }
      }
      std::uint32_t c[W];
      for (int w = 0; w < W; ++w) {
        const auto r = philox_4x32(seed, 97, ctr++);
        switch (bmodes[w] == 4 && wide ? 2 : r[1] % 8) {  // tiny lanes start from a subnormal or zero C
          case 0: c[w] = 0; break;
          case 1: c[w] = 0x80000000u; break;                          // -0
          case 2: c[w] = r[2] & 0x807FFFFFu; break;                   // subnormal (or zero)
          case 3: c[w] = (r[2] & 0x80000000u) | 0x7F7FFFF0u; break;  // near the largest finite
          case 4: c[w] = (r[2] & 1) ? 0x7F800000u : 0x7FC00000u; break;  // Inf, NaN
          default: c[w] = std::bit_cast<std::uint32_t>(static_cast<float>(std::ldexp((r[2] % 2000) / 1000.0 - 1.0, static_cast<int>(r[3] % 40) - 20)));
        }
      }
      // The lanes' decoding and the batched call.
      std::vector<float> av(a.size()), bv(b.size());
      std::vector<std::int16_t> ar(a.size()), br(b.size());
      fused_lane_operands(p, false, a.data(), a.size(), av.data(), ar.data());
      fused_lane_operands(p, true, b.data(), b.size(), bv.data(), br.data());
      // The build's version (AVX2 where compiled for it) and the plain-loop one.
      std::uint32_t d[W], dp[W];
      std::copy(c, c + W, d);
      std::copy(c, c + W, dp);
      FusedDotNotes lane_notes, portable_notes;
      const FusedLaneRow ra{a.data(), av.data(), ar.data()};
      const FusedLanePanel pb{b.data(), bv.data(), br.data(), ld};
      fused_dot_lanes(p, sh.k, steps, ra, pb, W, d, &lane_notes);
      fused_dot_lanes(p, sh.k, steps, ra, pb, W, dp, &portable_notes, true);
      CHECK(portable_notes.subnormal_inexact == lane_notes.subnormal_inexact);
      FusedDotNotes scalar_notes;
      for (int w = 0; w < W; ++w) {
        std::vector<std::uint32_t> col(static_cast<std::size_t>(K));
        for (int i = 0; i < K; ++i) col[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i * ld + w)];
        std::uint64_t ref = c[w], fast = c[w];
        for (int s = 0; s < steps; ++s) {
          ref = fused_dot_reference(p, a.data() + s * sh.k, col.data() + s * sh.k, sh.k, ref);
          fast = fused_dot(p, a.data() + s * sh.k, col.data() + s * sh.k, sh.k, fast, &scalar_notes);
        }
        ++compared;
        const FpClass cls = classify(f32, ref);
        special += cls == FpClass::Inf || cls == FpClass::NaN;
        subnormal += cls == FpClass::Subnormal;
        zero += cls == FpClass::Zero;
        if (d[w] != ref || dp[w] != ref || fast != ref) {
          if (++wrong <= 5) {
            std::string as, bs;
            for (int i = 0; i < K; ++i) {
              char buf[32];
              std::snprintf(buf, sizeof buf, "%x ", a[static_cast<std::size_t>(i)]);
              as += buf;
              std::snprintf(buf, sizeof buf, "%x ", col[static_cast<std::size_t>(i)]);
              bs += buf;
            }
            MESSAGE("differs: " << f.tag << " align " << sh.align << " lane " << w << " C " << c[w] << ": lanes " << d[w] << " portable " << dp[w] << " fused_dot "
                                << fast << " reference " << ref << "\n a: " << as << "\n b: " << bs);
          }
        }
      }
      CHECK(lane_notes.subnormal_inexact == scalar_notes.subnormal_inexact);
      noted += lane_notes.subnormal_inexact > 0;
    }
  }
  CHECK(wrong == 0);
  // The draws reach every regime the lanes hand over (non-finite and subnormal results, notes) and exact zeros.
  MESSAGE(compared << " lanes: " << special << " Inf/NaN, " << subnormal << " subnormal, " << zero << " zero results; " << noted
                   << " calls with notes");
  CHECK(compared == static_cast<int>(shapes.size()) * 400 * W);
  CHECK(special > 100);
  CHECK(subnormal > 200);
  CHECK(zero > 100);
  CHECK(noted > 50);
}
