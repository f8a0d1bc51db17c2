// tests/oracle/fused_dot_test.cpp — the block fused dot product model: hand-derived cases (each
// states its arithmetic) and, where the window cannot lose a bit, equality with MPFR's correctly
// rounded sum in every rounding mode.
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


TEST_CASE("fused_dot: hand-derived window cases (f16 inputs, fp32 accumulator)") {
  FusedDotParams p = hopper_f16();
  SUBCASE("2^-24 in C beside a product 1: kept by the window, lost by the RZ rounding") {
    // Window: the largest exponent is 0 (product 1), 25 fraction bits: 2^-24 is kept, the exact sum
    // 1 + 2^-24 needs 24 fraction bits; RZ to 23 gives 1.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    d.c = code(f32, 0x1p-24);
    CHECK(run(p, d) == 1.0);
  }
  SUBCASE("cancellation exposes the window: C = 2^-25 survives 1 - 1, 2^-26 does not") {
    // 1 - 1 + 2^-j: exact result 2^-j, kept iff 2^-j >= 2^(0 - 25).
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 1, -1.0, 1.0);
    d.c = code(f32, 0x1p-25);
    CHECK(run(p, d) == 0x1p-25);
    d.c = code(f32, 0x1p-26);
    CHECK(run(p, d) == 0.0);
    p.align_bits = 23;  // V100 (Fasi et al.): 23 fraction bits
    d.c = code(f32, 0x1p-24);
    CHECK(run(p, d) == 0.0);
    d.c = code(f32, 0x1p-23);
    CHECK(run(p, d) == 0x1p-23);
  }
  SUBCASE("the window hangs from e_a + e_b, not from the product's leading bit") {
    // 1.5 * 1.5 = 2.25 = 1.001b * 2^1 but e_a + e_b = 0: with ProductExponents the last kept bit is
    // 2^-25; aligned to the leading bit (exponent 1) it is 2^-24 and C = 2^-25 is lost.
    Dot d = zeros(16);
    product(p, d, 0, 1.5, 1.5);
    product(p, d, 1, -1.5, 1.5);
    d.c = code(f32, 0x1p-25);
    CHECK(run(p, d) == 0x1p-25);
    p.reference = AlignReference::LeadingBit;
    CHECK(run(p, d) == 0.0);
    d.c = code(f32, 0x1p-24);
    CHECK(run(p, d) == 0x1p-24);
  }
  SUBCASE("how alignment discards: -0.75 of the last kept bit") {
    // 1 - 1 - 0.75 * 2^-25 (= -1.5 * 2^-26 = (-1.5 * 2^-13) * 2^-13):
    // toward zero 0; toward -Inf -2^-25; nearest -2^-25 (0.75 rounds up); +0.75: nearest +2^-25, down 0.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 1, -1.0, 1.0);
    product(p, d, 2, -1.5 * 0x1p-13, 0x1p-13);
    CHECK(run(p, d) == 0.0);
    p.align_rounding = AlignRounding::Down;
    CHECK(run(p, d) == -0x1p-25);
    p.align_rounding = AlignRounding::NearestEven;
    CHECK(run(p, d) == -0x1p-25);
    product(p, d, 2, 1.5 * 0x1p-13, 0x1p-13);
    CHECK(run(p, d) == 0x1p-25);
    p.align_rounding = AlignRounding::Down;
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("alignment truncates each term: two half-bits make nothing") {
    // 1 - 1 + 2^-26 + 2^-26: each 2^-26 is below the last kept bit 2^-25 and truncated to 0 on its own.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 1, -1.0, 1.0);
    product(p, d, 2, 0x1p-13, 0x1p-13);
    product(p, d, 3, 0x1p-13, 0x1p-13);
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("C after the block: its own alignment with the block sum") {
    // Products 1 - 1 cancel to a zero sum whose exponent (0) still aligns C: 2^-26 is lost as in the
    // block; with the block sum absent (all products zero) C is exact.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 1, -1.0, 1.0);
    d.c = code(f32, 0x1p-26);
    p.c_join = CJoin::After;
    CHECK(run(p, d) == 0.0);
    Dot z = zeros(16);
    z.c = code(f32, 0x1p-40);
    CHECK(run(p, z) == 0x1p-40);
    // Eight products 2^-28 (= 2^-14 * 2^-14) and C = 2^-2: in the block each is half the last kept
    // bit 2^-27 and truncated: D = 0.25. After the block: the block (ref -28) sums them exactly to
    // 2^-25, which the second alignment (ref -2, last bit 2^-27) keeps: 0.25 + 2^-25, an fp32 value.
    Dot e = zeros(16);
    for (int i = 0; i < 8; ++i) product(p, e, i, 0x1p-14, 0x1p-14);
    e.c = code(f32, 0.25);
    CHECK(run(p, e) == 0.25 + 0x1p-25);
    p.c_join = CJoin::InBlock;
    CHECK(run(p, e) == 0.25);
  }
  SUBCASE("non-monotonic (Fasi et al.): raising C by 2^-24 lowers D") {
    // C = 1 - 2^-24 (exponent -1): twelve products 2^-26 are kept (last bit 2^-26): exact sum
    // 1 - 2^-24 + 12 * 2^-26 = 1 + 2^-23, RZ: 1 + 2^-23. C = 1 (exponent 0): last bit 2^-25, every
    // 2^-26 truncated: D = 1.
    Dot d = zeros(16);
    for (int i = 0; i < 12; ++i) product(p, d, i, 0x1p-13, 0x1p-13);
    d.c = code(f32, 1.0 - 0x1p-24);
    CHECK(run(p, d) == 1.0 + 0x1p-23);
    d.c = code(f32, 1.0);
    CHECK(run(p, d) == 1.0);
  }
  SUBCASE("blocks of 8 chained (Ampere's halves of k = 16)") {
    // C = 2^-24, product 1 at 0, -1 at 8. One block: exact 2^-24. Two blocks: RZ(2^-24 + 1) = 1, then
    // 1 - 1 = 0.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 8, -1.0, 1.0);
    d.c = code(f32, 0x1p-24);
    CHECK(run(p, d) == 0x1p-24);
    p.fused_length = 8;
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("interleaved groups align separately") {
    // 1 (group 0), 2^-26 at 1 and 3 (group 1), C = -1. Groups: group 1 keeps 2^-26 + 2^-26 = 2^-25
    // exactly; the second alignment (ref 0) keeps 2^-25: D = 2^-25. One window: both truncated: 0.
    Dot d = zeros(16);
    product(p, d, 0, 1.0, 1.0);
    product(p, d, 1, 0x1p-13, 0x1p-13);
    product(p, d, 3, 0x1p-13, 0x1p-13);
    d.c = code(f32, -1.0);
    CHECK(run(p, d) == 0.0);
    p.grouping = Grouping::Interleaved;
    p.groups = 2;
    CHECK(run(p, d) == 0x1p-25);
    p.grouping = Grouping::Contiguous;  // groups {0..7}, {8..15}: 0, 1 and 3 share group 0
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("inexact products") {
    // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20; minus 1: 2^-9 + 2^-20 (kept: 20 < 25). Products truncated to
    // 10 fraction bits: 1 + 2^-9, minus 1: 2^-9.
    Dot d = zeros(16);
    product(p, d, 0, 1.0 + 0x1p-10, 1.0 + 0x1p-10);
    product(p, d, 1, -1.0, 1.0);
    CHECK(run(p, d) == 0x1p-9 + 0x1p-20);
    p.product_frac_bits = 10;
    CHECK(run(p, d) == 0x1p-9);
  }
  SUBCASE("subnormal inputs") {
    // 2^-24 (the smallest fp16 subnormal) * 2^10 = 2^-14, or 0 when subnormal inputs read as zero.
    Dot d = zeros(16);
    product(p, d, 0, 0x1p-24, 0x1p10);
    CHECK(run(p, d) == 0x1p-14);
    p.input_subnormals = false;
    CHECK(run(p, d) == 0.0);
  }
}

TEST_CASE("fused_dot: bf16 range — subnormal results, overflow, no overflow inside the block") {
  FusedDotParams p = hopper_f16();
  p.a = p.b = bf16;
  SUBCASE("subnormal result") {
    // C = 2^-126 (smallest normal) minus the product 2^-127: 2^-127, an fp32 subnormal (code 0x00400000).
    Dot d = zeros(16);
    product(p, d, 0, -0x1p-63, 0x1p-64);
    d.c = code(f32, 0x1p-126);
    CHECK(run(p, d) == 0x1p-127);
    p.output_subnormals = false;
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("overflow of the block result") {
    // FLT_MAX + 2^127: exact 2^128 + (2^127 - 2^104), beyond the largest finite value.
    Dot d = zeros(16);
    product(p, d, 0, 0x1p64, 0x1p63);
    d.c = code(f32, 0x1.fffffep127);
    CHECK(std::isinf(run(p, d)));
    p.overflow = OverflowTo::MaxFinite;
    CHECK(run(p, d) == 0x1.fffffep127);
  }
  SUBCASE("products beyond fp32's range cancel exactly in a wide block") {
    // 2^200 - 2^200 + 1: the window hangs from 2^200, so C = 1 (200 binades below its last kept bit
    // 2^175) is truncated and the cancellation leaves exactly 0 — a finite result; with products
    // beyond 2^128 read as Inf: Inf - Inf = NaN.
    Dot d = zeros(16);
    product(p, d, 0, 0x1p100, 0x1p100);
    product(p, d, 1, -0x1p100, 0x1p100);
    d.c = code(f32, 1.0);
    CHECK(run(p, d) == 0.0);
    Dot e = d;
    e.c = code(f32, 0x1p120);
    CHECK(run(p, e) == 0.0);  // 2^120: 80 binades below 2^200, still truncated
    p.wide_block = false;
    CHECK(std::isnan(run(p, d)));
  }
}

TEST_CASE("fused_dot: specials, tf32 reading, fp16 and 13-bit accumulators") {
  SUBCASE("Inf and NaN") {
    FusedDotParams p = hopper_f16();
    Dot d = zeros(16);
    product(p, d, 0, INFINITY, 1.0);
    CHECK(run(p, d) == INFINITY);
    product(p, d, 1, -INFINITY, 1.0);  // Inf - Inf
    const std::uint64_t nan = fused_dot(p, d.a.data(), d.b.data(), 16, 0);
    CHECK(nan == p.nan_code);
    product(p, d, 1, 0.0, 1.0);
    d.b[0] = 0;  // Inf * 0
    CHECK(fused_dot(p, d.a.data(), d.b.data(), 16, 0) == p.nan_code);
  }
  SUBCASE("tf32 in fp32 containers") {
    // Container 1 + 2^-11 + 2^-20: read toward zero it is 1; rounded to nearest 1 + 2^-10 (above half).
    FusedDotParams p = hopper_f16();
    p.a = p.b = tf32;
    p.fused_length = 8;
    std::vector<std::uint32_t> a(8, 0), b(8, 0);
    a[0] = std::bit_cast<std::uint32_t>(1.0f + 0x1p-11f + 0x1p-20f);
    b[0] = std::bit_cast<std::uint32_t>(1.0f);
    CHECK(value(f32, fused_dot(p, a.data(), b.data(), 8, 0)) == 1.0);
    p.operand_read = Rounding::NearestEven;
    CHECK(value(f32, fused_dot(p, a.data(), b.data(), 8, 0)) == 1.0 + 0x1p-10);
  }
  SUBCASE("fp16 accumulator rounds to nearest even") {
    // C = 1 (fp16), product 2^-11 (half an fp16 ulp at 1): a tie, to even: 1; with 2^-11 + 2^-13 above
    // the tie: 1 + 2^-10.
    FusedDotParams p = hopper_f16();
    p.acc = f16;
    p.acc_bits = 10;
    p.block_rounding = Rounding::NearestEven;
    p.nan_code = 0x7FFF;
    Dot d = zeros(16);
    d.c = code(f16, 1.0);
    product(p, d, 0, 0x1p-11, 1.0);
    CHECK(run(p, d) == 1.0);
    product(p, d, 1, 0x1p-13, 1.0);
    CHECK(run(p, d) == 1.0 + 0x1p-10);
  }
  SUBCASE("13 fraction bits (the FP8 path of Ada and Hopper)") {
    // e4m3: C = 1 + products 2^-13 + 2^-14 (window 13 bits below exponent 0: 2^-14 truncated):
    // 1 + 2^-13, which has 13 fraction bits: exact in the 13-bit accumulator.
    FusedDotParams p = hopper_f16();
    p.a = p.b = e4m3;
    p.fused_length = 32;
    p.align_bits = 13;
    p.acc_bits = 13;
    Dot d = zeros(32);
    product(p, d, 0, 0x1p-6, 0x1p-7);
    product(p, d, 1, 0x1p-6, 0x1p-8);
    d.c = code(f32, 1.0);
    CHECK(run(p, d) == 1.0 + 0x1p-13);
    // 1 + 2^-12 + 2^-13 + 2^-13 (two products 2^-13): exact 1 + 2^-11, kept.
    product(p, d, 1, 0x1p-6, 0x1p-6);
    product(p, d, 2, 0x1p-6, 0x1p-7);
    CHECK(run(p, d) == 1.0 + 0x1p-12 + 0x1p-13 + 0x1p-13);
  }
}

TEST_CASE("fused_dot: a window that loses nothing gives MPFR's correctly rounded sum in every mode") {
  // fp16 inputs with exponents in [-8, 8]: products have e_a + e_b in [-16, 16] and 20 fraction
  // bits, C (fp32) exponents in [-8, 8] with 23: every term's last bit is within 16 + 20 + 8 = 44 <
  // 56 bits of the largest exponent, so the 56-bit window is exact and the one rounding is a correct
  // rounding of the exact sum — which MPFR computes independently.
  const std::uint64_t key = test::seed();
  std::printf("fused_dot vs MPFR: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(key));
  FusedDotParams p = hopper_f16();
  p.align_bits = 56;
  const int k = 16;
  int checked = 0, inexact = 0;
  for (Rounding mode : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
    p.block_rounding = mode;
    for (std::uint64_t t = 0; t < 400; ++t) {
      std::vector<std::uint32_t> a(k), b(k);
      mpfr_ref::Mpfr sum(400), prod(400), x(64), y(64);
      mpfr_set_zero(sum, 1);
      for (int i = 0; i < k; ++i) {
        const auto w = philox_4x32(key, t * 64 + static_cast<std::uint64_t>(mode), static_cast<std::uint64_t>(i));
        const auto f16_code = [](std::uint32_t r) {
          const std::uint32_t e = 15 + (r % 17) - 8;                   // biased exponent, exponent in [-8, 8]
          return ((r >> 8) & 0x8000u) | (e << 10) | ((r >> 12) & 0x3FFu);
        };
        a[i] = f16_code(w[0]);
        b[i] = f16_code(w[1]);
        mpfr_ref::set_code(x, f16, a[i]);
        mpfr_ref::set_code(y, f16, b[i]);
        mpfr_mul(prod, x, y, MPFR_RNDN);  // exact at 400 bits
        mpfr_add(sum, sum, prod, MPFR_RNDN);
      }
      const auto wc = philox_4x32(key, t * 64 + 32 + static_cast<std::uint64_t>(mode), 0);
      const std::uint64_t c = ((wc[0] & 1u) << 31) | ((127u + (wc[1] % 17) - 8) << 23) | (wc[2] & 0x7FFFFFu);
      mpfr_ref::set_code(x, f32, c);
      mpfr_add(sum, sum, x, MPFR_RNDN);  // exact
      const Rounded want = mpfr_ref::round(f32, sum, Rounder{mode, Saturation::Inf, NanPayload::Preserve});
      const std::uint64_t got = fused_dot(p, a.data(), b.data(), k, c);
      if (got != want.code) {
        std::printf("mode %s case %llu: model 0x%08llx, MPFR 0x%08llx\n", std::string(to_string(mode)).c_str(),
                    static_cast<unsigned long long>(t), static_cast<unsigned long long>(got),
                    static_cast<unsigned long long>(want.code));
      }
      CHECK(got == want.code);
      inexact += (want.flags & kInexact) != 0;
      ++checked;
    }
  }
  // The sums must need rounding, or the comparison proves nothing about the rounding path.
  CHECK(inexact > checked * 9 / 10);
}

TEST_CASE("fused_dot: check() refuses parameters the model cannot honour") {
  FusedDotParams p = hopper_f16();
  CHECK(check(p).empty());
  p.align_bits = 57;
  CHECK_FALSE(check(p).empty());
  p = hopper_f16();
  p.acc_bits = 24;
  CHECK_FALSE(check(p).empty());
  p = hopper_f16();
  p.grouping = Grouping::Contiguous;
  p.groups = 3;
  CHECK_FALSE(check(p).empty());
  p = hopper_f16();
  p.nan_code = 0x3f800000;
  CHECK_FALSE(check(p).empty());
}

TEST_CASE("fused_dot: every code of every input format decodes as unpack() says") {
  // The model's own decoder (fused_product) against oracle/format's unpack: product with 1 is the
  // input itself, with e_a + e_b = e_a (1 has exponent 0), subnormals at emin.
  for (const Format* f : {&f16, &bf16, &e4m3, &e5m2, &tf32}) {
    FusedDotParams p = hopper_f16();
    p.a = p.b = *f;
    const std::uint32_t one = code(*f, 1.0);
    const std::uint64_t n = *f == tf32 ? 1u << 19 : f->code_count();
    std::uint64_t bad = 0;
    for (std::uint64_t c = 0; c < n; ++c) {
      const std::uint32_t container = static_cast<std::uint32_t>(to_container(*f, c));
      const FusedTerm t = fused_product(p, container, one);
      const Unpacked u = unpack(*f, c);
      const FpClass want = u.cls == FpClass::Subnormal ? FpClass::Normal : u.cls;
      bool ok = t.cls == want && t.neg == u.neg;
      if (ok && want == FpClass::Normal)
        ok = std::ldexp(static_cast<double>(t.sig), t.lsb) == std::ldexp(static_cast<double>(u.sig), u.exp) && t.ref == u.exp + f->frac_bits;
      bad += !ok;
    }
    INFO("format " << f->tag);
    CHECK(bad == 0);
  }
}

TEST_CASE("fused_kloop: instruction steps chained in ascending K, the tail zero-padded") {
  // K = 40 with steps of 16: D = dot(24..39 padded) o dot(16..31) o dot(0..15) from C. The same by hand:
  // fused_dot over each step with the previous D as C. And a K-loop can differ from one long block:
  // 1 at k = 0, -1 at k = 16, C = 2^-24: the first step rounds 1 + 2^-24 to 1 (RZ), so D = 0, while
  // a block of 32 would keep 2^-24.
  FusedDotParams p = hopper_f16();
  std::vector<std::uint32_t> a(40, 0), b(40, 0);
  const std::uint64_t key = test::seed();
  for (int i = 0; i < 40; ++i) {
    const auto w = philox_4x32(key, 99, static_cast<std::uint64_t>(i));
    a[i] = code(f16, std::ldexp(1.0 + (w[0] % 1024) / 1024.0, static_cast<int>(w[1] % 9) - 4) * ((w[2] & 1) ? -1 : 1));
    b[i] = code(f16, std::ldexp(1.0 + (w[3] % 1024) / 1024.0, static_cast<int>(w[1] % 7) - 3));
  }
  const std::uint64_t c = code(f32, 0.375);
  std::uint64_t want = c;
  for (int k0 = 0; k0 < 40; k0 += 16) {
    std::vector<std::uint32_t> xa(16, 0), xb(16, 0);
    for (int i = 0; i < 16 && k0 + i < 40; ++i) xa[i] = a[k0 + i], xb[i] = b[k0 + i];
    want = fused_dot(p, xa.data(), xb.data(), 16, want);
  }
  CHECK(fused_kloop(p, a.data(), b.data(), 40, 16, c) == want);
  std::vector<std::uint32_t> u(32, 0), v(32, 0);
  u[0] = code(f16, 1.0), v[0] = code(f16, 1.0);
  u[16] = code(f16, -1.0), v[16] = code(f16, 1.0);
  CHECK(value(f32, fused_kloop(p, u.data(), v.data(), 32, 16, code(f32, 0x1p-24))) == 0.0);
  p.fused_length = 32;
  CHECK(value(f32, fused_dot(p, u.data(), v.data(), 32, code(f32, 0x1p-24))) == 0x1p-24);
}


TEST_CASE("fused_dot: interleaved blocks and C added last (Hopper's FP8 mma.sync)") {
  SUBCASE("runs of 2: k = 2 joins the second block, so X - X does not swallow it") {
    // X = 2^8 at k = 0, -X at k = 1, t = 2^-18 (the smallest e4m3 product) at k = 2. Interleaved: block 0
    // = {0, 1, 4, 5, ...} sums X - X = 0; block 1 = {2, 3, 6, ...} is t alone, exact: D = t. Contiguous
    // halves: k = 0..2 share block 0, aligned 25 bits below 2^8 (last kept bit 2^-17): t is truncated,
    // D = 0.
    FusedDotParams p = hopper_fp8(f32);
    Dot d = zeros(32);
    product(p, d, 0, 16, 16);
    product(p, d, 1, -16, 16);
    product(p, d, 2, 0x1p-9, 0x1p-9);
    CHECK(run(p, d) == 0x1p-18);
    p.interleave_run = 0;
    CHECK(run(p, d) == 0.0);
  }
  SUBCASE("C added last rounds to nearest where the block's RZ would not") {
    // C = 2^7 (ulp 2^-16) and one product 3 * 2^-18 = 0.75 ulp. Last-rn: the blocks give 3 * 2^-18 exactly,
    // then 2^7 + 0.75 ulp rounds to nearest: 2^7 + 2^-16. C in the block: 2^7 + 3 * 2^-18 is kept by the
    // window (last bit 2^-18) and rounded toward zero: 2^7.
    FusedDotParams p = hopper_fp8(f32);
    Dot d = zeros(32);
    product(p, d, 0, 3 * 0x1p-9, 0x1p-9);
    d.c = code(f32, 128.0);
    CHECK(run(p, d) == 128.0 + 0x1p-16);
    p.c_join = CJoin::InBlock;
    CHECK(run(p, d) == 128.0);
  }
  SUBCASE("f16 accumulator: the blocks' f16 result overflows, and C cannot bring it back") {
    // One product 2^8 * 2^8 = 2^16 rounds (nearest) beyond f16's 65504: the block gives +Inf, and
    // Inf + (-1024) = Inf. With C in the block, 2^16 - 1024 = 64512 is finite.
    FusedDotParams p = hopper_fp8(f16);
    Dot d = zeros(32);
    product(p, d, 0, 256, 256);
    d.c = code(f16, -1024.0);
    CHECK(run(p, d) == INFINITY);
    p.c_join = CJoin::InBlock;
    CHECK(run(p, d) == 64512.0);
  }
  SUBCASE("NaN results are the canonical NaN: a NaN C, and Inf - Inf in the final addition") {
    FusedDotParams p = hopper_fp8(f32);
    Dot d = zeros(32);
    product(p, d, 0, 1, 1);
    d.c = 0xFFC00001u;  // a negative NaN with a payload
    CHECK(fused_dot(p, d.a.data(), d.b.data(), 32, d.c) == 0x7FFFFFFFu);
    FusedDotParams h = hopper_fp8(f16);
    Dot e = zeros(32);
    product(h, e, 0, 256, 256);  // the block: +Inf (as above)
    e.c = 0xFC00;                // C = -Inf
    CHECK(fused_dot(h, e.a.data(), e.b.data(), 32, e.c) == 0x7FFFu);
  }
  SUBCASE("the IEEE addition: signed zeros, exact cancellation, a far smaller addend, subnormals") {
    const FusedDotParams p = hopper_fp8(f32);
    CHECK(ieee_add_rn(p, 0x80000000u, 0x80000000u) == 0x80000000u);           // -0 + -0 = -0
    CHECK(ieee_add_rn(p, 0x80000000u, 0) == 0u);                               // -0 + +0 = +0
    CHECK(ieee_add_rn(p, code(f32, 3.0), code(f32, -3.0)) == 0u);              // x - x = +0
    CHECK(ieee_add_rn(p, code(f32, 1.0), code(f32, 0x1p-60)) == code(f32, 1.0));  // 2^-60 is far below half an ulp
    CHECK(ieee_add_rn(p, code(f32, 1.0), code(f32, -0x1p-60)) == code(f32, 1.0));
    CHECK(ieee_add_rn(p, code(f32, 1.0), code(f32, 0x1p-24)) == code(f32, 1.0));  // a tie: to even
    CHECK(ieee_add_rn(p, code(f32, 1.0 + 0x1p-23), code(f32, 0x1p-24)) == code(f32, 1.0 + 0x1p-22));  // a tie: odd goes up
    CHECK(ieee_add_rn(p, 1u, 2u) == 3u);                                       // subnormals kept
    CHECK(ieee_add_rn(p, code(f32, 0x1p127 * 1.5), code(f32, 0x1p127)) == 0x7F800000u);  // overflow to Inf
  }
  SUBCASE("check, names and the existing cards' behaviour") {
    FusedDotParams p = hopper_fp8(f32);
    CHECK(check(p).empty());
    p.interleave_run = -1;
    CHECK_FALSE(check(p).empty());
    CHECK(parse_c_join("last-rn") == CJoin::LastRn);
    CHECK(to_string(CJoin::LastRn) == "last-rn");
    const std::string s = describe(hopper_fp8(f32));
    CHECK(s.find("interleaved in runs of 2") != std::string::npos);
    CHECK(s.find("C added last by an IEEE addition") != std::string::npos);
    // interleave_run with one block is contiguous: k = 16 with blocks of 16 is unchanged.
    FusedDotParams q = hopper_f16();
    q.interleave_run = 2;
    Dot d = zeros(16);
    product(q, d, 0, 1, 1);
    product(q, d, 1, -1, 1);
    product(q, d, 2, 0x1p-24, 1);
    d.c = code(f32, 0x1p-30);
    const double with = run(q, d);
    q.interleave_run = 0;
    CHECK(run(q, d) == with);
  }
}

