// tests/suites/emulate_test.cpp — the bitwise tier's emulator: its rounded steps against independent
// paths (the host's fmaf, one rounding of an exact double), IEEE zero signs, and its GEMMs equal to every
// built-in CPU model that declares an order, bit for bit, on data that forces rounding everywhere.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <string>

#include "base/philox.hpp"
#include "generators/generate.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/kernel.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/refvalue.hpp"
#include "suites/block_reference.hpp"
#include "suites/emulate.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// A float from Philox bits: every sign, every exponent from subnormals to 2^20, every significand.
float wild_float(std::uint64_t seed, std::uint64_t i) {
  const auto w = philox_4x32(seed, 7, i);
  const std::uint32_t exp = 1 + w[1] % 150;  // biased 1..150: 2^-126 .. 2^23 (and subnormals via the case below)
  std::uint32_t bits = (w[0] & 0x807FFFFFu) | (exp << 23);
  if (w[2] % 16 == 0) bits &= 0x807FFFFFu;  // subnormal or zero
  if (w[2] % 64 == 1) bits &= 0x80000000u;  // a signed zero
  return std::bit_cast<float>(bits);
}

/// The CPU model's output codes on the runner's inputs.
std::vector<std::uint64_t> model_codes(GemmKernel& k, const Problem& p) {
  const KernelTraits& t = k.traits();
  const auto a = round_values(p.a.data, *t.a_input, t.input_rounding), b = round_values(p.b.data, *t.b_input, t.input_rounding);
  auto& model = dynamic_cast<CpuModel&>(k);
  DecodedOperands d;
  d.m = p.m;
  d.n = p.n;
  d.k = p.k;
  d.a = a;
  d.b = b;
  return model.compute(d);
}

}  // namespace

TEST_CASE("the fp32 round-to-nearest step equals the host's fmaf bit for bit, subnormals and zero signs included") {
  const std::uint64_t seed = test::seed();
  CAPTURE(seed);
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const float a = wild_float(seed, 3 * i), b = wild_float(seed, 3 * i + 1), c = wild_float(seed, 3 * i + 2);
    const float want = std::fma(a, b, c);
    const double got = emulate_fma(f32, Rounding::NearestEven, a, b, c);
    CAPTURE(a);
    CAPTURE(b);
    CAPTURE(c);
    REQUIRE(std::bit_cast<std::uint32_t>(static_cast<float>(got)) == std::bit_cast<std::uint32_t>(want));
    const float sum = a + c;
    REQUIRE(std::bit_cast<std::uint32_t>(static_cast<float>(emulate_add(f32, Rounding::NearestEven, a, c))) ==
            std::bit_cast<std::uint32_t>(sum));
  }
}

TEST_CASE("the step in every rounding mode equals one rounding of the exact value (fp16: a b + c exact in double)") {
  // fp16 operands: a b has at most 22 bits and |a b|, |c| lie in [2^-48, 2^32], so a b + c is exact in
  // double when their exponents are within 31 of each other: round_double then rounds once, independently
  // of the emulator's two-sum path.
  const std::uint64_t seed = test::seed() + 1;
  CAPTURE(seed);
  int checked = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    auto h = [&](std::uint64_t j) {  // a finite fp16 code of any sign and exponent, subnormals included
      const auto w = philox_4x32(seed, 9, j);
      return to_double(f16, (w[0] & 0x8000u) | (w[1] % 0x7C00u));
    };
    const double a = h(3 * i), b = h(3 * i + 1), c = h(3 * i + 2);
    if (!std::isfinite(a * b + c) || a * b == 0 || c == 0 || std::abs(std::ilogb(a * b) - std::ilogb(c)) > 25) continue;
    for (Rounding r : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
      const double want = to_double(f16, round_double(f16, a * b + c, Rounder{r, Saturation::Inf, NanPayload::Preserve}).code);
      const double got = emulate_fma(f16, r, a, b, c);
      CAPTURE(a);
      CAPTURE(b);
      CAPTURE(c);
      CAPTURE(to_string(r));
      REQUIRE(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want));
    }
    ++checked;
  }
  CHECK(checked > 10000);
}

TEST_CASE("the integer rounding of an exact two-sum equals the oracle's, every mode, ties, subnormals, overflow") {
  // Formats of every width the fast path takes (fp32's range with 13 fraction bits is the FP8 MMA
  // accumulator model); x + y formed exactly as a two-sum, rounded by the emulator and by round_ref.
  static constexpr Format f32r13{"f32r13", "test", 1, 8, 13, 127, true, Specials::IEEE, 32};
  const std::uint64_t seed = test::seed() + 5;
  CAPTURE(seed);
  std::uint64_t n = 0;
  for (const Format* f : {&f32, &f16, &bf16, &e5m2, &f32r13}) {
    const double ulp1 = std::ldexp(1.0, -f->frac_bits);  // the spacing of [1, 2)
    for (std::uint64_t i = 0; i < 40000; ++i) {
      const auto w = philox_4x32(seed, 11, i + 100000 * static_cast<std::uint64_t>(f->frac_bits));
      const int e = static_cast<int>(w[0] % static_cast<std::uint32_t>(f->emax() - f->emin() + 6)) + f->emin() - 3;
      double x;
      switch (w[1] % 4) {
        case 0: x = std::ldexp(1 + std::ldexp(static_cast<double>(w[2]), -32), e); break;                                      // anywhere
        case 1: x = std::ldexp(1 + ulp1 * (std::floor(static_cast<double>(w[2] % 1024)) + 0.5), e); break;                    // a tie
        case 2: x = std::ldexp(1 + ulp1 * static_cast<double>(w[2] % 1024), e); break;                                         // on the grid
        default: x = std::ldexp(2 - std::ldexp(static_cast<double>(w[2] % 7), -40), e); break;                                 // just below 2^(e+1)
      }
      if (w[3] & 1) x = -x;
      const double y = (w[3] & 2 ? 1 : -1) * std::ldexp(static_cast<double>(w[3] >> 4), e - 60 - static_cast<int>(w[2] % 8));  // a small tail, or 0
      for (Rounding r : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
        const double want = to_double(*f, round_ref(*f, ref_from_two_sum(x, y), Rounder{r, default_saturation(*f), NanPayload::Preserve}).code);
        const double got = emulate_add(*f, r, x, y);
        CAPTURE(f->tag);
        CAPTURE(x);
        CAPTURE(y);
        CAPTURE(to_string(r));
        REQUIRE(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want));
        ++n;
      }
    }
  }
  CHECK(n == 5 * 40000 * 5);
}

TEST_CASE("a narrow accumulator hosted in fp32 (round to odd, then into the format) equals the scalar step, every element") {
  // emulate_gemm with K = 3 runs the row loop's fp32-hosted path (f16 and f32r13 accumulators with products
  // exact in fp32); emulate_fma chains the same three steps through the integer rounding. Operands: every
  // value of the operand format, so subnormal products, sums that cancel to zero, ties and overflow occur.
  static constexpr Format f32r13{"f32r13", "test", 1, 8, 13, 127, true, Specials::IEEE, 32};
  struct Config {
    const Format *acc, *operand;
  };
  const std::uint64_t seed = test::seed() + 6;
  CAPTURE(seed);
  std::int64_t compared = 0;
  for (const Config c : {Config{&f16, &f16}, Config{&f16, &e4m3}, Config{&f32r13, &e4m3}, Config{&f32r13, &e5m2}, Config{&e5m2, &e5m2}}) {
    for (Rounding r : {Rounding::NearestEven, Rounding::TowardZero}) {
      KernelTraits t = make_cpu_model("model_gemm_f16_f16acc")->traits();
      t.a_input = t.a_operand = t.b_input = t.b_operand = c.operand;
      t.acc = t.out = c.acc;
      t.acc_rounding = r;
      t.promote_every = 0;
      t.sum_order = SummationOrder::sequential();
      CAPTURE(c.acc->tag);
      CAPTURE(c.operand->tag);
      CAPTURE(to_string(r));
      const std::int64_t n = 20000, k = 3;
      std::vector<double> a(static_cast<std::size_t>(k)), b(static_cast<std::size_t>(k * n));
      const std::uint64_t codes = c.operand->code_count();
      auto value = [&](std::uint64_t i) {
        const auto w = philox_4x32(seed, 13, i);
        double v = to_double(*c.operand, w[0] % codes);
        return std::isfinite(v) ? v : 0.0;
      };
      std::int64_t done = 0;
      for (std::int64_t rep = 0; rep < 4; ++rep) {
        for (std::int64_t q = 0; q < k; ++q) a[static_cast<std::size_t>(q)] = value(static_cast<std::uint64_t>(rep * 1000000 + q));
        for (std::size_t x = 0; x < b.size(); ++x) b[x] = value(static_cast<std::uint64_t>(rep * 1000000 + 100 + static_cast<std::int64_t>(x)));
        const auto got = emulate_gemm(t, 1, n, k, a, b);
        for (std::int64_t j = 0; j < n; ++j) {
          double want = 0.0;
          for (std::int64_t q = 0; q < k; ++q) want = emulate_fma(*c.acc, r, a[static_cast<std::size_t>(q)], b[static_cast<std::size_t>(q * n + j)], want);
          const double g = to_double(*c.acc, got[static_cast<std::size_t>(j)]);
          if (std::isnan(want)) {
            CHECK(std::isnan(g));
            continue;
          }
          if (std::bit_cast<std::uint64_t>(g) != std::bit_cast<std::uint64_t>(want)) {
            CAPTURE(j);
            CAPTURE(a[0]);
            CAPTURE(a[1]);
            CAPTURE(a[2]);
            CAPTURE(b[static_cast<std::size_t>(j)]);
            CAPTURE(b[static_cast<std::size_t>(n + j)]);
            CAPTURE(b[static_cast<std::size_t>(2 * n + j)]);
            REQUIRE(g == want);
            REQUIRE(std::signbit(g) == std::signbit(want));
          }
          ++done;
        }
      }
      CHECK(done == 4 * n);
      compared += done;
    }
  }
  CHECK(compared == 5 * 2 * 4 * 20000);
}

TEST_CASE("exact zero sums take IEEE 754's signs: +0 except toward -Inf, and -0 + -0 = -0") {
  for (Rounding r : {Rounding::NearestEven, Rounding::TowardZero, Rounding::Up}) {
    CHECK_FALSE(std::signbit(emulate_add(f32, r, 1.5, -1.5)));
    CHECK_FALSE(std::signbit(emulate_add(f32, r, 0.0, -0.0)));
    CHECK(std::signbit(emulate_add(f32, r, -0.0, -0.0)));
  }
  CHECK(std::signbit(emulate_add(f32, Rounding::Down, 1.5, -1.5)));
  CHECK(std::signbit(emulate_add(f32, Rounding::Down, 0.0, -0.0)));
  CHECK_FALSE(std::signbit(emulate_add(f32, Rounding::Down, 0.0, 0.0)));
  CHECK(std::signbit(emulate_fma(f32, Rounding::NearestEven, -0.0, 1.0, -0.0)));  // (-0 * 1) + -0
  CHECK(std::isnan(emulate_add(f32, Rounding::NearestEven, INFINITY, -INFINITY)));
  CHECK(emulate_fma(f16, Rounding::NearestEven, 300.0, 300.0, 0.0) == INFINITY);  // 90000 overflows fp16
}

TEST_CASE("the emulation equals every CPU model that declares its order, bit for bit, on rounding-forcing data") {
  const std::uint64_t seed = test::seed() + 2;
  CAPTURE(seed);
  std::vector<Problem> problems;
  problems.push_back(test::uniform_problem(9, 7, 300, f32, seed));
  problems.push_back(test::uniform_problem(5, 6, 1, f32, seed + 1));  // K = 1
  for (const char* spec : {"normal:m=6,n=5,k=257,seed=", "exp_uniform:m=5,n=6,k=130,emin=-40,emax=40,seed=", "ozaki:m=4,n=7,k=200,phi=2,seed=",
                           "uniform:m=6,n=6,k=96,lo=0,hi=1,seed="})
    problems.push_back(generate(spec + std::to_string(seed % 100000)));
  int compared = 0;
  for (const auto& info : kernel_registry()) {
    if (info.backend != Backend::Cpu || info.mutant || info.operation != Operation::Gemm) continue;
    const auto k = make_gemm_kernel(info.name);
    if (!emulation_unavailable(k->traits()).empty()) continue;
    const std::string kname = info.name;
    CAPTURE(kname);
    for (const Problem& p : problems) {
      CAPTURE(p.spec);
      const KernelTraits& t = k->traits();
      // A block-scaled model's inputs are its quantizer's operands (as the runner passes them to the tiers).
      std::optional<BlockReference> q;
      if (t.block.active()) q = block_reference(t, p);
      const auto a = q ? q->a.data : round_values(p.a.data, *t.a_input, t.input_rounding);
      const auto b = q ? q->b.data : round_values(p.b.data, *t.b_input, t.input_rounding);
      bool finite = true;
      for (double v : a) finite = finite && std::isfinite(v);
      for (double v : b) finite = finite && std::isfinite(v);
      if (!finite) continue;  // the case is outside this kernel's storage range (the runner says "not supported")
      const auto want = model_codes(*k, p);
      const auto got = emulate_gemm(t, p.m, p.n, p.k, a, b, q ? TensorScales{q->a_tensor_scale, q->b_tensor_scale} : TensorScales{});
      REQUIRE(got.size() == want.size());
      std::int64_t diff = 0, first = -1;
      for (std::size_t x = 0; x < got.size(); ++x)
        if (got[x] != want[x] && !(std::isnan(to_double(*t.out, got[x])) && std::isnan(to_double(*t.out, want[x])))) {
          ++diff;
          if (first < 0) first = static_cast<std::int64_t>(x);
        }
      CHECK_MESSAGE(diff == 0, diff, " differ, first at ", first);
      ++compared;
    }
  }
  CHECK(compared >= 40 * 5);
}

namespace {

/// bf16 data for the pow2_scaled order: uniform [-1, 1) (source bf16), then row i of A times 2^40 over
/// K-block 1 (k = 64..127) for every i % 61 == 3 (lines spanning > 32 binades: outlier windows, K-block
/// tiles under auto), and column j of B times 2^-30 over k < 20 for every j % 53 == 7.
Problem scaled_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed, bool spread) {
  Problem p = test::uniform_problem(m, n, k, bf16, seed);
  if (!spread) return p;
  for (std::int64_t i = 3; i < m; i += 61)
    for (std::int64_t q = 64; q < std::min<std::int64_t>(k, 128); ++q) p.a.data[static_cast<std::size_t>(i * k + q)] *= 0x1p40;
  for (std::int64_t j = 7; j < n; j += 53)
    for (std::int64_t q = 0; q < std::min<std::int64_t>(k, 20); ++q) p.b.data[static_cast<std::size_t>(q * n + j)] *= 0x1p-30;
  return p;
}

}  // namespace

TEST_CASE("pow2_scaled: the emulation equals every bf16-on-fp16 model across tiles of both modes, outliers and lossy spans") {
  // 200 x 150: two tiles of 128 each way, so auto mixes row-mode and K-block tiles.
  const Problem p = scaled_problem(200, 150, 200, test::seed() + 11, true);
  for (const char* tag : {"cast", "tensor", "rowcol", "kblock64", "kblock128", "outlier", "auto"}) {
    CAPTURE(tag);
    const auto k = make_gemm_kernel(std::string("model_gemm_bf16_on_f16_") + tag);
    const KernelTraits& t = k->traits();
    REQUIRE(t.sum_order.kind == OrderKind::Pow2Scaled);
    REQUIRE(emulation_unavailable(t).empty());
    const auto want = model_codes(*k, p);
    const auto got = emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data);
    std::int64_t diff = 0;
    for (std::size_t x = 0; x < got.size(); ++x)
      diff += got[x] != want[x] && !(std::isnan(to_double(f32, got[x])) && std::isnan(to_double(f32, want[x])));
    CHECK(diff == 0);
  }
}

TEST_CASE("pow2_scaled within its domain: the scaling is exact, so row mode is the fp32 sequential order and K-block mode "
          "the fp32 blocked one") {
  // Independent of the scaling: the emulator's sequential and blocked fp32 paths on the bf16 values. With
  // every line inside one window and no fp32 underflow, a' b' = 2^(s_A + s_B) a b exactly, every partial sum
  // is scaled alike, and the rescale is exact.
  const Problem p = scaled_problem(40, 30, 300, test::seed() + 12, false);
  KernelTraits seq = make_gemm_kernel("model_gemm_bf16_on_f16_rowcol")->traits();
  seq.sum_order = SummationOrder::sequential(StepKind::Fma);
  seq.a_operand = seq.b_operand = &bf16;
  const auto want_seq = emulate_gemm(seq, p.m, p.n, p.k, p.a.data, p.b.data);
  for (const char* tag : {"tensor", "rowcol", "outlier", "auto"}) {
    CAPTURE(tag);
    const KernelTraits t = make_gemm_kernel(std::string("model_gemm_bf16_on_f16_") + tag)->traits();
    CHECK(emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data) == want_seq);
  }
  for (int block : {64, 128}) {
    CAPTURE(block);
    const KernelTraits t = make_gemm_kernel("model_gemm_bf16_on_f16_kblock" + std::to_string(block))->traits();
    KernelTraits blk = seq;
    blk.sum_order = SummationOrder::blocked(block);
    CHECK(emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data) == emulate_gemm(blk, p.m, p.n, p.k, p.a.data, p.b.data));
    CHECK(emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data) != want_seq);  // the orders differ: the test can fail
  }
}

TEST_CASE("blocked with an exact inner sum: each block's products summed exactly, rounded once, blocks added in order") {
  // Independent reference: per element and block, ExactSum of the products rounded once into fp32 by the
  // oracle, then fp32 additions from +0. Operands: fp32 values spread over 2^-60 .. 2^60 (block sums that
  // round, double sums that are not exact) and a block of 7 (a short last block).
  const std::uint64_t seed = test::seed() + 13;
  Problem p = test::uniform_problem(6, 9, 45, f32, seed);
  std::uint64_t ctr = 0;
  for (auto* v : {&p.a.data, &p.b.data})
    for (double& x : *v) x = static_cast<float>(std::ldexp(x, static_cast<int>(philox_4x32(seed, 9, ctr++)[0] % 121) - 60));
  KernelTraits t = make_cpu_model("model_gemm_f32")->traits();
  t.sum_order = SummationOrder::blocked(7, Combine::Exact, Combine::Sequential);
  REQUIRE(emulation_unavailable(t).empty());
  const auto got = emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data);
  const Rounder rn = Rounder::nearest(f32);
  std::int64_t inexact_blocks = 0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t q = 0; q < p.k; q += 7) {
        ExactSum s;
        for (std::int64_t x = q; x < std::min<std::int64_t>(p.k, q + 7); ++x) s.add_product(p.a(i, x), p.b(x, j));
        std::uint8_t st = 0;
        const RefValue exact = s.finalize(st);
        const float blk = static_cast<float>(to_double(f32, round_ref(f32, exact, rn).code));
        inexact_blocks += exact.lo != 0 || exact.tail != 0;  // no double holds this block's sum
        acc = acc + blk;
      }
      CHECK(got[static_cast<std::size_t>(i * p.n + j)] == std::bit_cast<std::uint32_t>(acc));
    }
  CHECK(inexact_blocks > 0);  // some block sums are no double: the exact fallback is exercised
  // final_scale=tensor: the scales leave the operands and come back as RN(acc * RN(s_A s_B)).
  t.sum_order.final_scale = FinalScale::Tensor;
  const double sa = 0x1.8p-3, sb = 0x1.4p5;
  std::vector<double> as = p.a.data, bs = p.b.data;
  for (double& x : as) x *= sa;
  for (double& x : bs) x *= sb;
  const auto scaled = emulate_gemm(t, p.m, p.n, p.k, as, bs, {sa, sb});
  const float tt = static_cast<float>(sa * sb);
  for (std::size_t x = 0; x < got.size(); ++x)
    CHECK(scaled[x] == std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(got[x]))) * tt)));
  CHECK_THROWS_AS(emulate_gemm(t, p.m, p.n, p.k, as, bs, {0, sb}), std::invalid_argument);
}

TEST_CASE("the emulation tells orders apart: a model's output differs from the emulation of another order") {
  const Problem p = test::uniform_problem(8, 8, 512, f32, test::seed() + 3);
  const auto seq = make_cpu_model("model_gemm_f32");
  const auto a = p.a.data, b = p.b.data;
  for (SummationOrder o : {SummationOrder::split_k(4), SummationOrder::pairwise(), SummationOrder::blocked(32),
                           SummationOrder::sequential(StepKind::MulAdd)}) {
    KernelTraits t = seq->traits();
    t.sum_order = o;
    CAPTURE(order_spec(o));
    const auto emu = emulate_gemm(t, p.m, p.n, p.k, a, b);
    CHECK(emu != model_codes(*seq, p));
  }
}

TEST_CASE("a measured tensor-core block model: each block of exact products and C rounded once") {
  // Independent reference: per element, blocks of 4 products summed exactly (ExactSum) with the running
  // value, rounded toward zero into fp32 once per block.
  const Problem p = test::uniform_problem(4, 5, 37, f16, test::seed() + 4);
  KernelTraits t = make_cpu_model("model_gemm_f16_f32acc")->traits();
  BlockModel bm;
  bm.fused_length = 4;
  bm.measured = true;
  bm.block_rounding = Rounding::TowardZero;
  t.sum_order = SummationOrder::tensor_core(8, bm);
  t.acc_rounding = Rounding::TowardZero;
  REQUIRE(emulation_unavailable(t).empty());
  const auto got = emulate_gemm(t, p.m, p.n, p.k, p.a.data, p.b.data);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double run = 0;
      for (std::int64_t q = 0; q < p.k; q += 4) {
        ExactSum s;
        s.add(run);
        for (std::int64_t x = q; x < std::min<std::int64_t>(p.k, q + 4); ++x) s.add_product(p.a(i, x), p.b(x, j));
        std::uint8_t st = 0;
        run = to_double(f32, round_ref(f32, s.finalize(st), Rounder{Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve}).code);
      }
      CHECK(to_double(f32, got[static_cast<std::size_t>(i * p.n + j)]) == run);
    }
  t.sum_order.block_model.measured = false;
  CHECK(emulation_unavailable(t).find("not measured") != std::string::npos);
  KernelTraits u = t;
  u.sum_order = SummationOrder::unknown();
  CHECK(emulation_unavailable(u) == "the kernel declares no summation order");
}
