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
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/emulate/emulate_schemes.hpp"
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

TEST_CASE("round_values equals the oracle's rounding in every format and mode: ties, subnormals, saturation") {
  // round_values rounds floats on their bit pattern into bf16 and tf32, and into the other formats of fp32's
  // normal grid (f16, FP8, FP6, FP4) within their normal range; it takes the integer path for formats of at most
  // 26 bits in fp32's range, up to the largest finite value when the format has no Inf (e4m3, the MX formats);
  // everything else goes to the oracle. Values:
  // each code's value, the midpoints between neighbouring codes (ties) and values just off them, and random
  // doubles from below the smallest subnormal to twice the largest finite value.
  const std::uint64_t seed = test::seed() + 21;
  CAPTURE(seed);
  std::int64_t compared = 0;
  for (const Format* f : {&f32, &tf32, &f16, &bf16, &e4m3, &e5m2, &e2m3, &e3m2, &e2m1}) {
    CAPTURE(f->tag);
    std::vector<double> x;
    const std::uint64_t half = f->code_count() / 2;  // the positive codes
    for (std::uint64_t i = 0; i < 4000; ++i) {
      const auto w = philox_4x32(seed, 31, i);
      const std::uint64_t c = w[0] % half;
      const double v = to_double(*f, c), next = to_double(*f, c + 1);
      const double sign = (w[1] & 1) ? -1.0 : 1.0;
      if (!std::isfinite(v)) continue;
      x.push_back(sign * v);
      if (std::isfinite(next) && c + 1 < half) {
        const double mid = (v + next) / 2;  // exact: at most 27 bits
        x.push_back(sign * mid);
        x.push_back(sign * std::nextafter(mid, 0.0));
        x.push_back(sign * std::nextafter(mid, INFINITY));
      }
      const double span = std::log2(f->max_finite() * 2 / f->min_subnormal());
      x.push_back(sign * f->min_subnormal() / 4 * std::exp2(span * (w[2] * 0x1p-32)));
      // fp32 values (round_values rounds them on their bit pattern into bf16 and tf32): any pattern, and the
      // floats next to a midpoint.
      x.push_back(static_cast<double>(wild_float(seed, i)));
      const auto mf = static_cast<float>(sign * (v + next) / 2);
      x.push_back(static_cast<double>(std::nextafter(mf, 0.0f)));
      x.push_back(static_cast<double>(std::nextafter(mf, INFINITY)));
    }
    for (std::uint32_t bits : {0x7F7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x807FFFFFu, 0x00008000u, 0x00000001u, 0x7F800000u})
      x.push_back(static_cast<double>(std::bit_cast<float>(bits)));  // fp32's largest, bf16 overflow ties, subnormals, Inf
    for (Rounding r : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
      CAPTURE(to_string(r));
      const auto got = round_values(x, *f, r);
      const Rounder rr{r, default_saturation(*f), NanPayload::Preserve};
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = to_double(*f, round_double(*f, x[i], rr).code);
        if (std::isnan(want) && std::isnan(got[i])) continue;
        if (std::bit_cast<std::uint64_t>(want) != std::bit_cast<std::uint64_t>(got[i])) {
          CAPTURE(x[i]);
          REQUIRE(got[i] == want);
          REQUIRE(std::signbit(got[i]) == std::signbit(want));
        }
        ++compared;
      }
    }
  }
  CHECK(compared > 9 * 5 * 10000);
}

namespace {

/// Codes as raw bits for comparison, NaNs of any payload equal (the nan_policy check judges payloads).
std::int64_t count_differences(const Format& out, const std::vector<std::uint64_t>& x, const std::vector<std::uint64_t>& y,
                               std::int64_t* first) {
  std::int64_t diff = 0;
  *first = -1;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i] && !(std::isnan(to_double(out, x[i])) && std::isnan(to_double(out, y[i])))) {
      if (*first < 0) *first = static_cast<std::int64_t>(i);
      ++diff;
    }
  return diff;
}

}  // namespace

TEST_CASE("card_operand_code: a card operand's code from its float bits equals round_double's, every code of every format") {
  // card_operand_code encodes a float of a format's normal range (or a zero) from the float's bit pattern, and
  // anything else through round_double. Every code's value (signed zeros, subnormals, the largest finite, Inf and
  // NaN included) and random doubles (not values of the format: rounded to nearest) against round_double.
  const std::uint64_t seed = test::seed() + 23;
  CAPTURE(seed);
  std::int64_t compared = 0;
  for (const Format* f : {&f16, &bf16, &e4m3, &e5m2, &e2m3, &e3m2, &e2m1}) {
    CAPTURE(f->tag);
    std::vector<double> x;
    for (std::uint64_t c = 0; c < f->code_count(); ++c) x.push_back(to_double(*f, c));
    for (std::uint64_t i = 0; i < 20000; ++i) {
      x.push_back(static_cast<double>(wild_float(seed, i)));
      const auto w = philox_4x32(seed, 33, i);
      x.push_back(std::ldexp(1.0 + w[0] * 0x1p-32, static_cast<int>(w[1] % 60) - 30) * ((w[2] & 1) ? -1 : 1));
    }
    for (const double v : x) {
      const auto want = static_cast<std::uint32_t>(round_double(*f, v, Rounder::nearest(*f)).code);
      const std::uint32_t got = emulate_detail::card_operand_code(*f, v);
      if (got != want) {
        CAPTURE(v);
        REQUIRE(got == want);
      }
      ++compared;
    }
  }
  CHECK(compared > 7 * 40000);
}

TEST_CASE("the fast paths equal the generic path bit for bit, every built-in model's declared arithmetic") {
  // EmulationPath::Generic runs every step through the scalar rounding and every conversion through the oracle;
  // Fast runs the host-float loops (fmaf rows, the fp32-hosted accumulators, toward zero by the rounding mode,
  // fp32 pairwise rows) and pow2_scaled's shortcuts. Data: uniform, normal and exponent-spread values (products
  // underflow, cancel and round in every format), and for the bf16-on-fp16 models lines spanning more than 32
  // binades (outliers in rows of A and columns of B, K-block tiles).
  const std::uint64_t seed = test::seed() + 22;
  CAPTURE(seed);
  std::vector<Problem> problems;
  problems.push_back(test::uniform_problem(9, 33, 300, f32, seed));
  for (const char* spec : {"normal:m=5,n=17,k=257,seed=", "exp_uniform:m=6,n=19,k=130,emin=-40,emax=40,seed=",
                           "exp_uniform:m=4,n=21,k=200,emin=-12,emax=12,seed="})
    problems.push_back(generate(spec + std::to_string(seed % 100000)));
  // Near fp32's largest value (one entry per row of A: the row's products stay finite): a bf16 or tf32 slice
  // of it overflows and split_value saturates it.
  Problem huge = test::uniform_problem(5, 11, 24, f32, seed + 2);
  for (std::int64_t i = 0; i < huge.m; ++i)
    huge.a.data[static_cast<std::size_t>(i * huge.k + 3 * i)] = (i % 2 ? -1.0 : 1.0) * (i < 3 ? 0x1.fffffep127 : 0x1.ffp127 + i * 0x1p110);
  problems.push_back(huge);
  const Problem spread = scaled_problem(200, 150, 200, seed + 1, true);
  int compared = 0;
  for (const auto& info : kernel_registry()) {
    if (info.backend != Backend::Cpu || info.mutant || info.operation != Operation::Gemm) continue;
    const auto k = make_gemm_kernel(info.name);
    const KernelTraits& t = k->traits();
    if (!emulation_unavailable(t).empty()) continue;
    const std::string kname = info.name;
    CAPTURE(kname);
    std::vector<const Problem*> cases;
    for (const Problem& p : problems) cases.push_back(&p);
    if (t.sum_order.kind == OrderKind::Pow2Scaled) cases.push_back(&spread);
    for (const Problem* p : cases) {
      CAPTURE(p->spec);
      std::optional<BlockReference> q;
      if (t.block.active()) q = block_reference(t, *p);
      const auto a = q ? q->a.data : round_values(p->a.data, *t.a_input, t.input_rounding);
      const auto b = q ? q->b.data : round_values(p->b.data, *t.b_input, t.input_rounding);
      const TensorScales ts = q ? TensorScales{q->a_tensor_scale, q->b_tensor_scale} : TensorScales{};
      const auto fast = emulate_gemm(t, p->m, p->n, p->k, a, b, ts, EmulationPath::Fast);
      const auto generic = emulate_gemm(t, p->m, p->n, p->k, a, b, ts, EmulationPath::Generic);
      REQUIRE(fast.size() == generic.size());
      std::int64_t first = -1;
      const std::int64_t diff = count_differences(*t.out, fast, generic, &first);
      CHECK_MESSAGE(diff == 0, diff, " differ, first at ", first, ": fast ", first >= 0 ? fast[static_cast<std::size_t>(first)] : 0,
                    ", generic ", first >= 0 ? generic[static_cast<std::size_t>(first)] : 0);
      ++compared;
    }
  }
  CHECK(compared >= 40 * 4);
}

TEST_CASE("a truncating 14-bit accumulator (f32r13, toward zero): carries, ties, sign changes, subnormals, overflow") {
  // The fast path adds in fp32 with the rounding mode toward zero and truncates to 13 fraction bits; RN_f32 then
  // truncation is not RZ of the exact sum, which the cases marked (*) tell apart. Operands: a format of 14-bit
  // values over 2^-141 .. 2^126 (fa) times b in {1, 1.5} (fb), so one product is any such value, and fp32-hosted
  // steps reach every binade of f32r13 (normal grid 2^(e-13), subnormal 2^-139). Each case is one row: c =
  // RZ(RZ(0 + a_0 b) + a_1 b) + ..., compared with the value derived here and with the generic path.
  static constexpr Format f32r13{"f32r13", "test", 1, 8, 13, 127, true, Specials::IEEE, 32};
  static constexpr Format fa{"fa", "test: 14-bit values, emax 125", 1, 8, 13, 129, true, Specials::IEEE, 32};
  static constexpr Format fb{"fb", "test: 2-bit values up to 1.5", 1, 2, 1, 2, true, Specials::IEEE, 8};
  KernelTraits t = make_cpu_model("model_gemm_e4m3_lpacc")->traits();
  t.a_input = t.a_operand = &fa;
  t.b_input = t.b_operand = &fb;
  t.acc = t.out = &f32r13;
  t.acc_rounding = Rounding::TowardZero;
  t.promote_every = 0;
  t.promote_format = nullptr;
  t.sum_order = SummationOrder::sequential();
  REQUIRE(emulation_unavailable(t).empty());
  struct Case {
    const char* what;
    std::vector<double> a;
    double b, want;
  };
  const double big = 0x1.fffp125;  // (2 - 2^-12) 2^125 (a 13-bit value of fa)
  const std::vector<Case> cases = {
      {"(2 - 2^-13) + 2^-13 = 2: the carry crosses the 13-bit boundary", {2 - 0x1p-13, 0x1p-13}, 1, 2},
      {"(*) (2 - 2^-13) + (2^-13 - 2^-27) = 2 - 2^-27 truncates to 2 - 2^-13 (RN_f32 gives 2)", {2 - 0x1p-13, 0x1p-13 - 0x1p-27}, 1, 2 - 0x1p-13},
      {"1 + 2^-14, half a unit of the 13-bit grid, truncates to 1 (a tie)", {1, 0x1p-14}, 1, 1},
      {"1 + 3 2^-14 truncates to 1 + 2^-13", {1, 3 * 0x1p-14}, 1, 1 + 0x1p-13},
      {"(*) 1 - 2^-30 truncates to 1 - 2^-14 (RN_f32 gives 1)", {1, -0x1p-30}, 1, 1 - 0x1p-14},
      {"2^-20 - 1 = -(1 - 2^-20) changes sign and truncates toward zero to -(1 - 2^-14)", {0x1p-20, -1}, 1, -(1 - 0x1p-14)},
      {"(*) -1.5 (1 + 2^-13) truncates to -(1.5 + 2^-13); adding 1.5 2^-40 truncates toward zero to -1.5 (RN_f32 keeps -(1.5 + 2^-13))",
       {-(1 + 0x1p-13), 0x1p-40}, 1.5, -1.5},
      {"1.5 - 1.5 = +0 (an exact zero is +0 toward zero)", {1.5, -1.5}, 1, 0.0},
      {"2^-127 + 2^-139 - 2^-141 (subnormal) truncates to 2^-127 on the 2^-139 grid", {0x1p-127 + 0x1p-139, -0x1p-141}, 1, 0x1p-127},
      {"2^-139 - 2^-138 = -2^-139, the smallest negative subnormal", {0x1p-139, -0x1p-138}, 1, -0x1p-139},
      {"-2^-140 - 2^-141, below the smallest subnormal, truncates to -0", {-0x1p-140, -0x1p-141}, 1, -0.0},
      {"2^-126 - 2^-141, just below the normal range, truncates to 2^-126 - 2^-139", {0x1p-126, -0x1p-141}, 1, 0x1p-126 - 0x1p-139},
      {"8 (1.5 big) > f32r13's largest: toward zero it saturates at (2 - 2^-13) 2^127", std::vector<double>(8, big), 1.5, 0x1.fff8p127},
      {"the same, negative", std::vector<double>(8, -big), 1.5, -0x1.fff8p127},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const auto k = static_cast<std::int64_t>(c.a.size());
    const std::vector<double> b(static_cast<std::size_t>(k), c.b);
    for (double v : c.a) REQUIRE(to_double(fa, round_double(fa, v, Rounder::nearest(fa)).code) == v);  // operands are fa's
    const auto fast = emulate_gemm(t, 1, 1, k, c.a, b);
    const auto generic = emulate_gemm(t, 1, 1, k, c.a, b, {}, EmulationPath::Generic);
    const double got = to_double(f32r13, fast[0]);
    CHECK(got == c.want);
    CHECK(std::signbit(got) == std::signbit(c.want));
    CHECK(fast == generic);
  }
  // Random: every code of fa and fb (products over 2^-143 .. 2^126, so most additions round in fp32, sums
  // cancel, change sign and saturate), 64 x 64 x 40, the fast path against the generic one element by element.
  const std::uint64_t seed = test::seed() + 23;
  CAPTURE(seed);
  const std::int64_t m = 64, n = 64, k = 40;
  auto value = [&](const Format& f, std::uint64_t i) {
    const double v = to_double(f, philox_4x32(seed, 41, i)[0] % f.code_count());
    return std::isfinite(v) ? v : 0.0;
  };
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (std::size_t x = 0; x < a.size(); ++x) a[x] = value(fa, x);
  for (std::size_t x = 0; x < b.size(); ++x) b[x] = value(fb, 1000000 + x);
  const auto fast = emulate_gemm(t, m, n, k, a, b);
  const auto generic = emulate_gemm(t, m, n, k, a, b, {}, EmulationPath::Generic);
  std::int64_t first = -1;
  CHECK(count_differences(f32r13, fast, generic, &first) == 0);
  CAPTURE(first);
  // The data can tell the roads apart: RN_f32 then truncation (the same chain on the host's float additions
  // to nearest) differs from the exact truncation somewhere.
  std::int64_t rn_differs = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::int64_t q = 0; q < k; ++q) {
        const float s = static_cast<float>(a[static_cast<std::size_t>(i * k + q)] * b[static_cast<std::size_t>(q * n + j)]) + acc;
        std::uint32_t bits = std::bit_cast<std::uint32_t>(s) & ~0x3FFu;
        if ((bits & 0x7FFFFFFFu) > 0x7F7FFC00u) bits = (bits & 0x80000000u) | 0x7F7FFC00u;
        acc = std::bit_cast<float>(bits);
      }
      rn_differs += std::bit_cast<std::uint32_t>(acc) != static_cast<std::uint32_t>(generic[static_cast<std::size_t>(i * n + j)]);
    }
  CHECK(rn_differs > 0);
}
