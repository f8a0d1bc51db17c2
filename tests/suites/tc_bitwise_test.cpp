// tests/suites/tc_bitwise_test.cpp — tensor-core kernels through the verdict tiers with behaviour cards
// (docs/tensor_cores.md, "Certifying tensor-core kernels"): the card's block model composed with the
// kernel's K-loop against exact reasoning, a kernel model of mma.sync certified bit for bit and its
// mutants refused, the bitwise tier declining without a usable card, and the envelope taking a card's
// measured bits for an unknown order on tensor cores.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "base/philox.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/tc/cards.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/experiments/fp8_accumulation.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "generators/generate.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"
#include "tests/suites/tc_bitwise_support.hpp"

using namespace fpcert;
using namespace fpcert::test_tc;


TEST_CASE("the card's block model composed with the K-loop: two chained instructions, derived by hand") {
  // Row of A and column of B (f16 codes of powers of two), K = 18: the first instruction takes k = 0..15,
  // the second k = 16, 17 and 14 zero-padded products (K padded to 32).
  //   step 1: 1*1 + 2^-12*2^-12 + 2^-12*2^-13 = 1 + 2^-24 + 2^-25 = 1 + 1.5 * 2^-24, aligned to e_a + e_b = 0
  //           with 25 fraction bits (2^-25 is the last kept bit: exact), rounded toward zero to 23 bits:
  //           0.75 ulp(1) is dropped, D1 = 1 (round to nearest would give 1 + 2^-23);
  //   step 2: C = 1, -1*1 and 2^-14*2^-14 = 2^-28, aligned to 0: 2^-28 is below 2^-25 and truncated,
  //           D2 = 1 - 1 = +0.
  // The exact dot product is 1.5 * 2^-24 + 2^-28 = 1.5625 * 2^-24 (MPFR), so the composed model's 0 is all
  // accumulation error: the whole case is decided by the card's window and rounding.
  const std::int64_t K = 18;
  std::vector<double> a(K, 0.0), b(K, 0.0);
  a[0] = 1, b[0] = 1;
  a[1] = 0x1p-12, b[1] = 0x1p-12;
  a[2] = 0x1p-12, b[2] = 0x1p-13;
  a[16] = -1, b[16] = 1;
  a[17] = 0x1p-14, b[17] = 0x1p-14;
  const GemmRef exact = gemm_reference_mpfr(MatrixView::row_major(a.data(), 1, K), MatrixView::row_major(b.data(), K, 1));
  CHECK(exact.c[0].hi == 1.5625 * 0x1p-24);
  CHECK(exact.c[0].lo == 0);
  // The first step alone: exact 1 + 1.5 * 2^-24, correctly rounded to nearest 1 + 2^-23; the card gives 1.
  std::vector<std::uint32_t> ac(32, 0), bc(32, 0);
  for (std::int64_t q = 0; q < K; ++q) {
    ac[static_cast<std::size_t>(q)] = static_cast<std::uint32_t>(round_double(f16, a[static_cast<std::size_t>(q)], Rounder::nearest(f16)).code);
    bc[static_cast<std::size_t>(q)] = static_cast<std::uint32_t>(round_double(f16, b[static_cast<std::size_t>(q)], Rounder::nearest(f16)).code);
  }
  const FusedDotParams p = hopper_f16();
  CHECK(fused_dot(p, ac.data(), bc.data(), 16, 0) == 0x3F800000u);  // 1.0
  FusedDotParams rn = p;
  rn.block_rounding = Rounding::NearestEven;
  CHECK(fused_dot(rn, ac.data(), bc.data(), 16, 0) == 0x3F800001u);  // 1 + 2^-23

  KernelTraits t = mma_f16_traits();
  CHECK(!emulation_unavailable(t).empty());  // the placeholder: no card installed
  const Installed on(cards({card_of("mma_f16_f32", p)}));
  const KernelTraits applied = tc::with_installed_cards(t);
  REQUIRE(emulation_unavailable(applied).empty());
  CHECK(order_spec(applied.sum_order) == "tensor_core:k=16,insn=mma_f16_f32,pad=32,model=card");
  const auto got = emulate_gemm(applied, 1, 1, K, a, b);
  CHECK(got[0] == 0u);  // +0
  // The same with round-to-nearest results: D1 = 1 + 2^-23, D2 = 2^-23 (2^-28 still truncated).
  const Installed on_rn(cards({card_of("mma_f16_f32", rn)}));
  CHECK(emulate_gemm(tc::with_installed_cards(t), 1, 1, K, a, b)[0] == 0x34000000u);  // 2^-23
}

TEST_CASE("promotion composes with the card: every promote_every products the step chain joins an fp32 RN sum") {
  // An e4m3 kernel with a 13-bit card (13 alignment bits, results to 13 bits toward zero), k = 32 per step,
  // K = 257 padded to 320. The row: 256 products 1 * 2^-4, then 2^-7 * 2^-7 = 2^-14 (subnormal inputs, kept).
  //   without promotion: the partial sums n 2^-4 <= 16 are exact in 13 bits; the last product meets C = 16
  //     (window unit 2^(4-13) = 2^-9) and is truncated away: 16;
  //   promoted every 64: four blocks of 4 summed in fp32 (exact), then the chain restarts from +0 and holds
  //     2^-14 exactly (its own window), and the fp32 sum 16 + 2^-14 is exact (2^-18 relative < 2^-23): 16 + 2^-14.
  FusedDotParams p = *tc::mma_sim_hopper(*tc::find_instruction("wgmma_e4m3_f32"));
  p.fused_length = 32;
  KernelTraits t = mma_traits(e4m3, 32, "mma_e4m3_f32", 64);
  const std::int64_t K = 257;
  std::vector<double> a(K, 1.0), b(K, 0x1p-4);
  a[256] = 0x1p-7, b[256] = 0x1p-7;
  const Installed on(cards({card_of("mma_e4m3_f32", p)}));
  const KernelTraits plain = tc::with_installed_cards(t);
  CHECK(to_double(f32, emulate_gemm(plain, 1, 1, K, a, b)[0]) == 16.0);
  t.promote_every = 64;
  t.promote_format = &f32;
  const KernelTraits promoted = tc::with_installed_cards(t);
  REQUIRE(emulation_unavailable(promoted).empty());
  CHECK(to_double(f32, emulate_gemm(promoted, 1, 1, K, a, b)[0]) == 16.0 + 0x1p-14);
}

TEST_CASE("an mma.sync kernel model is certified bit for bit with its card; mutants of the block model are refused") {
  const Problem p = generate("normal:m=16,n=16,k=100,seed=5");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  const FusedDotParams hopper = hopper_f16();
  const Installed on(cards({card_of("mma_f16_f32", hopper)}));

  MmaModel good("mma_f16_model", hopper);
  const CaseResult r = test::run_graded(good, p, ref, *api);
  CHECK(r.tier == Tier::Bitwise);
  REQUIRE(check(r, CheckKind::Bitwise));
  CHECK_MESSAGE(check(r, CheckKind::Bitwise)->passed, check(r, CheckKind::Bitwise)->detail);
  CHECK(r.status == CaseStatus::Pass);

  // Mutants: the block result rounded to nearest (an error no larger than the declared one: the envelope
  // passes it, only the bitwise tier sees the fault); a 24-bit window; C added after the block.
  FusedDotParams rn = hopper, w24 = hopper, after = hopper;
  rn.block_rounding = Rounding::NearestEven;
  w24.align_bits = 24;
  after.c_join = CJoin::After;
  for (const auto& [name, mp] : {std::pair{"rn", rn}, std::pair{"window24", w24}, std::pair{"c_after", after}}) {
    CAPTURE(name);
    MmaModel bad(std::string("mma_f16_mutant_") + name, mp);
    const CaseResult m = test::run_graded(bad, p, ref, *api);
    CHECK(m.tier == Tier::Bitwise);
    REQUIRE(check(m, CheckKind::Bitwise));
    CHECK(!check(m, CheckKind::Bitwise)->passed);  // refused for its own fault
    CHECK(m.status == CaseStatus::Fail);
    if (std::string(name) == "rn") CHECK(check(m, CheckKind::Envelope)->passed);
  }
}

namespace {

/// The traits of fpcert's split-product kernels on tensor cores (kernels/emu/cuda/emu_split.cu): fp32 in and
/// out, split products of `scheme`, steps of the instruction's k, K padded to `pad`, the card of `insn`.
KernelTraits split_tc_traits(const std::string& scheme, int k, const char* insn, int pad) {
  KernelTraits t = mma_traits(f32, k, insn, pad);
  t.sum_order = SummationOrder::split_products(scheme, OrderKind::TensorCoreBlock, k);
  t.sum_order.block_model.instruction = insn;
  t.sum_order.block_model.pad = pad;
  return t;
}

/// The split kernel's walk (kernels/emu/cuda/emu_split_kernel.cuh, and the reference of
/// tests/kernels/emu/emulation_mma_test.cpp that the host-compiled kernel equals bit for bit), written out
/// here: per step of k inputs ascending, every kept term but (0, 0) in the kernel's issue order (i + j
/// descending, then i descending) into `small`, then (0, 0) into `acc`, each step one block; C = RN(small +
/// acc). `block(c, ia, ib, q0)` is one step's block of the A slice ia and the B slice ib from k = q0.
template <typename Block>
float split_walk(int slices, const std::vector<std::pair<int, int>>& kept, std::int64_t kp, int step, Block block) {
  auto keeps = [&](int i, int j) {
    for (const auto& t : kept)
      if (t.first == i && t.second == j) return true;
    return false;
  };
  std::vector<std::pair<int, int>> small;
  for (int d = 2 * (slices - 1); d >= 1; --d)
    for (int ia = slices - 1; ia >= 0; --ia)
      if (const int jb = d - ia; jb >= 0 && jb < slices && keeps(ia, jb)) small.emplace_back(ia, jb);
  float sm = 0, acc = 0;
  for (std::int64_t q = 0; q < kp; q += step) {
    for (const auto& [ia, ib] : small) sm = block(sm, ia, ib, q);
    acc = block(acc, 0, 0, q);
  }
  return small.empty() ? acc : sm + acc;
}

}  // namespace

TEST_CASE("split products on tensor cores: the card's model composed with the slice terms' K-loop, per scheme") {
  // Inputs r / 2^20 (|r| <= 2^20, 21 significant bits, emulation_mma_test.cpp's): tf32 slicing rounds them
  // (11 bits), three bf16 slices hold them; every slice product is a multiple of 2^-40 below 2, so a block
  // sum with its C is exact in double before the block's one rounding. Shapes with K tails inside a step
  // and inside the padding.
  struct Case {
    const char* scheme;
    int k;
    const char* insn;
    int pad;
  };
  const Case schemes[] = {{"3xtf32", 8, "mma_tf32_f32", 16}, {"3xtf32_rz", 8, "mma_tf32_f32", 16}, {"1xbf16", 16, "mma_bf16_f32", 32},
                          {"3xbf16", 16, "mma_bf16_f32", 32}, {"6xbf16", 16, "mma_bf16_f32", 32}, {"9xbf16", 16, "mma_bf16_f32", 32},
                          // the wgmma kernels' loops (issue 43): steps of 8 / 16, K padded to the 128-byte stage
                          {"3xtf32", 8, "wgmma_tf32_f32", 32}, {"3xtf32_rz", 8, "wgmma_tf32_f32", 32},
                          {"1xbf16", 16, "wgmma_bf16_f32", 64}, {"3xbf16", 16, "wgmma_bf16_f32", 64},
                          {"6xbf16", 16, "wgmma_bf16_f32", 64}, {"9xbf16", 16, "wgmma_bf16_f32", 64}};
  const std::int64_t m = 5, n = 7;
  for (const Case& c : schemes)
    for (const std::int64_t k : {std::int64_t{37}, std::int64_t{64}, std::int64_t{3}}) {
      CAPTURE(c.scheme);
      CAPTURE(k);
      const SplitScheme& sc = *find_split_scheme(c.scheme);
      std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
      std::uint64_t ctr = 0;
      for (auto* v : {&a, &b})
        for (double& x : *v) {
          const auto w = philox_4x32(test::seed(), 41, ctr++);
          x = std::ldexp(static_cast<double>(static_cast<std::int64_t>(w[0] % ((2u << 20) + 1)) - (1 << 20)), -20);
        }
      const std::int64_t kp = (k + c.pad - 1) / c.pad * c.pad;
      auto slices = [&](const std::vector<double>& v) {
        std::vector<std::vector<double>> s(static_cast<std::size_t>(sc.slices), std::vector<double>(v.size()));
        float sl[3];
        for (std::size_t x = 0; x < v.size(); ++x) {
          split_value(sc, static_cast<float>(v[x]), sl);
          for (int l = 0; l < sc.slices; ++l) s[static_cast<std::size_t>(l)][x] = sl[l];
        }
        return s;
      };
      const auto as = slices(a), bs = slices(b);
      auto sa = [&](int l, std::int64_t i, std::int64_t q) { return q < k ? as[static_cast<std::size_t>(l)][static_cast<std::size_t>(i * k + q)] : 0.0; };
      auto sb = [&](int l, std::int64_t q, std::int64_t j) { return q < k ? bs[static_cast<std::size_t>(l)][static_cast<std::size_t>(q * n + j)] : 0.0; };

      // 1. A card whose block is exact and rounds once to nearest (the host kernel emulation's MMA): the walk
      //    in double arithmetic, no fused_dot.
      FusedDotParams exact = *tc::mma_sim_hopper(*tc::find_instruction(c.insn));
      exact.align_bits = 60;
      exact.block_rounding = Rounding::NearestEven;
      const KernelTraits declared = split_tc_traits(c.scheme, c.k, c.insn, c.pad);
      CHECK(emulation_unavailable(declared).find("not measured") != std::string::npos);  // no card yet: declined
      const KernelTraits t = split_tc_traits(c.scheme, c.k, c.insn, c.pad);
      KernelTraits te = t;
      te.sum_order = tc::with_cards(t.sum_order, cards({card_of(c.insn, exact)}));
      REQUIRE(emulation_unavailable(te).empty());
      const auto got = emulate_gemm(te, m, n, k, a, b);
      // 2. MMA-Sim's Hopper model (25 alignment bits, truncation, RZ): the walk over fused_dot blocks.
      const FusedDotParams hop = *tc::mma_sim_hopper(*tc::find_instruction(c.insn));
      KernelTraits th = t;
      th.sum_order = tc::with_cards(t.sum_order, cards({card_of(c.insn, hop)}));
      REQUIRE(emulation_unavailable(th).empty());
      const auto got_hop = emulate_gemm(th, m, n, k, a, b);
      int wrong = 0, wrong_hop = 0, differ = 0;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          const float want = split_walk(sc.slices, sc.terms, kp, c.k, [&](float cin, int ia, int ib, std::int64_t q0) {
            double s = cin;
            for (std::int64_t q = q0; q < q0 + c.k; ++q) s += sa(ia, i, q) * sb(ib, q, j);
            return static_cast<float>(s);
          });
          const float want_hop = split_walk(sc.slices, sc.terms, kp, c.k, [&](float cin, int ia, int ib, std::int64_t q0) {
            std::vector<std::uint32_t> ac(static_cast<std::size_t>(c.k)), bc(static_cast<std::size_t>(c.k));
            for (int q = 0; q < c.k; ++q) {
              const auto code = [&](double v) {
                // a slice value is exact in its format: tf32 as its fp32 pattern, bf16 as the pattern's top half
                const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
                return hop.a == tf32 ? bits : bits >> 16;
              };
              ac[static_cast<std::size_t>(q)] = code(sa(ia, i, q0 + q));
              bc[static_cast<std::size_t>(q)] = code(sb(ib, q0 + q, j));
            }
            return std::bit_cast<float>(static_cast<std::uint32_t>(fused_dot(hop, ac.data(), bc.data(), c.k, std::bit_cast<std::uint32_t>(cin))));
          });
          const std::size_t x = static_cast<std::size_t>(i * n + j);
          wrong += got[x] != std::bit_cast<std::uint32_t>(want);
          wrong_hop += got_hop[x] != std::bit_cast<std::uint32_t>(want_hop);
          differ += want != want_hop;
        }
      CHECK(wrong == 0);
      CHECK(wrong_hop == 0);
      if (k == 64) CHECK(differ > 0);  // the two cards' roundings show: the test tells them apart
    }
}

TEST_CASE("the split kernels declare the loop the walk above checks (mma.sync and wgmma: instruction, k, K padding)") {
  // What the bitwise tier composes for each registered split kernel is exactly the (scheme, k, insn, pad) tested above.
  struct Want {
    const char* kernel;
    const char* scheme;
    int k;
    const char* insn;
    int pad;
  };
  const Want wants[] = {{"gemm_3xtf32_mma_sm80", "3xtf32", 8, "mma_tf32_f32", 16},       {"gemm_9xbf16_mma_sm80", "9xbf16", 16, "mma_bf16_f32", 32},
                        {"gemm_3xtf32_wgmma_sm90", "3xtf32", 8, "wgmma_tf32_f32", 32},   {"gemm_3xtf32rz_wgmma_sm90", "3xtf32_rz", 8, "wgmma_tf32_f32", 32},
                        {"gemm_1xbf16_wgmma_sm90", "1xbf16", 16, "wgmma_bf16_f32", 64},  {"gemm_3xbf16_wgmma_sm90", "3xbf16", 16, "wgmma_bf16_f32", 64},
                        {"gemm_6xbf16_wgmma_sm90", "6xbf16", 16, "wgmma_bf16_f32", 64},  {"gemm_9xbf16_wgmma_sm90", "9xbf16", 16, "wgmma_bf16_f32", 64}};
  for (const Want& w : wants) {
    CAPTURE(w.kernel);
    auto k = make_gemm_kernel(w.kernel);
    if (!k) {
      MESSAGE("skipped: no CUDA in this build (" << w.kernel << " is not registered)");
      continue;
    }
    CHECK(order_spec(k->traits().sum_order) == order_spec(split_tc_traits(w.scheme, w.k, w.insn, w.pad).sum_order));
    CHECK(k->traits().operand_u == find_split_scheme(w.scheme)->operand_u);
    CHECK(k->traits().acc_rounding == Rounding::TowardZero);  // the envelope's model until a card is installed
  }
  // BF16 on FP16: the wgmma kernels' scaled K-loops take the wgmma fp16 card, K padded to the 128-byte stage (64).
  for (const auto& pol : bf16_on_f16_policies()) {
    const std::string mma = bf16_on_f16_kernel_name(pol);
    auto km = make_gemm_kernel(mma);
    auto kw = make_gemm_kernel(bf16_on_f16_wgmma_kernel_name(pol));
    CAPTURE(mma);
    if (!km || !kw) {
      MESSAGE("skipped: no CUDA in this build (" << mma << " and its wgmma version are not registered)");
      continue;
    }
    CHECK(km->traits().sum_order.block_model.instruction == "mma_f16_f32");
    CHECK(km->traits().sum_order.block_model.pad == 32);
    CHECK(kw->traits().sum_order.block_model.instruction == "wgmma_f16_f32");
    CHECK(kw->traits().sum_order.block_model.pad == 64);
    KernelTraits t = kw->traits();
    t.sum_order = tc::with_cards(t.sum_order, cards({card_of("wgmma_f16_f32", *tc::mma_sim_hopper(*tc::find_instruction("wgmma_f16_f32")))}));
    CHECK(emulation_unavailable(t).empty());  // the bitwise tier composes the card with the scaled K-loop
    CHECK(kw->traits().promote_every == km->traits().promote_every);
  }
}

TEST_CASE("a card block result rounding inexactly below fp32's normal range declines the bitwise tier (split products on tiny data)") {
  // The H200 run of tiny_f32: the split kernels' second slices of subnormal inputs make products whose block sums
  // round below 2^-149, where the card's probes never looked, and the hardware differed from the model by 1-2
  // ulps. emulate_gemm now says so (EmulationDeclined) instead of predicting; ordinary data is unaffected.
  KernelTraits t = split_tc_traits("3xtf32", 8, "mma_tf32_f32", 16);
  t.sum_order = tc::with_cards(t.sum_order, cards({card_of("mma_tf32_f32", *tc::mma_sim_hopper(*tc::find_instruction("mma_tf32_f32")))}));
  REQUIRE(emulation_unavailable(t).empty());
  const std::int64_t m = 4, n = 4, k = 32;
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::uint64_t ctr = 0;
  for (auto* v : {&a, &b})
    for (double& x : *v) x = static_cast<float>(2.0 * (philox_4x32(test::seed(), 47, ctr++)[0] / 4294967296.0) - 1.0);
  CHECK_NOTHROW(emulate_gemm(t, m, n, k, a, b));
  for (double& x : a) x = static_cast<float>(x * 0x1p-126);  // fp32 subnormals: the second slices reach below 2^-136
  CHECK_THROWS_AS(emulate_gemm(t, m, n, k, a, b), EmulationDeclined);
}

TEST_CASE("the emulation stops at the first row whose card block results round inexactly below fp32's normal range") {
  // emulate_gemm declines once any block result rounds there, so it skips the rows after the first row that meets one
  // (emulate_detail::FirstInexactRow) and names that row. Rows 0-4 ordinary, the rest tiny: the row named must be the
  // first row that declines when each row is emulated alone, on the split products (mma.sync and wgmma pads) and on the
  // tensor-core card order (tf32 card; A scaled by 2^-130 so that products carry bits below 2^-149).
  const std::int64_t m = 12, n = 9, k = 40, first_tiny = 5;
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::uint64_t ctr = 0;
  for (auto* v : {&a, &b})
    for (double& x : *v) x = static_cast<float>(2.0 * (philox_4x32(test::seed(), 48, ctr++)[0] / 4294967296.0) - 1.0);
  struct Config {
    const char* scheme;  // "" : the tensor-core card order
    const char* insn;
    int k, pad;
    double tiny;
  };
  for (const Config& c : {Config{"3xtf32", "mma_tf32_f32", 8, 8, 0x1p-126}, Config{"3xtf32", "mma_tf32_f32", 8, 16, 0x1p-126},
                          Config{"9xbf16", "mma_bf16_f32", 16, 16, 0x1p-126}, Config{"", "mma_tf32_f32", 8, 16, 0x1p-130}}) {
    CAPTURE(c.scheme);
    CAPTURE(c.pad);
    KernelTraits t = *c.scheme ? split_tc_traits(c.scheme, c.k, c.insn, c.pad) : mma_traits(tf32, c.k, c.insn, c.pad);
    t.sum_order = tc::with_cards(t.sum_order, cards({card_of(c.insn, *tc::mma_sim_hopper(*tc::find_instruction(c.insn)))}));
    REQUIRE(emulation_unavailable(t).empty());
    // The card order's operands are tf32 values (an fp32 pattern's top 19 bits); the split schemes slice fp32 values.
    const auto operand = [&](double v) {
      return *c.scheme ? v : static_cast<double>(std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) & 0xFFFFE000u));
    };
    std::vector<double> at = a, bt = b;
    for (std::int64_t x = first_tiny * k; x < m * k; ++x) at[static_cast<std::size_t>(x)] = static_cast<float>(at[static_cast<std::size_t>(x)] * c.tiny);
    for (double& x : at) x = operand(x);
    for (double& x : bt) x = operand(x);
    std::int64_t first = -1;
    for (std::int64_t i = 0; i < m && first < 0; ++i) {
      const std::vector<double> row(at.begin() + i * k, at.begin() + (i + 1) * k);
      try {
        (void)emulate_gemm(t, 1, n, k, row, bt);
      } catch (const EmulationDeclined&) {
        first = i;
      }
    }
    CHECK(first >= first_tiny);  // the ordinary rows never meet one
    REQUIRE(first >= 0);         // the data reaches the regime
    try {
      (void)emulate_gemm(t, m, n, k, at, bt);
      FAIL("the tiny rows did not decline the emulation");
    } catch (const EmulationDeclined& e) {
      CHECK(std::string(e.what()).find("the first in row " + std::to_string(first) + ";") != std::string::npos);
    }
  }
}

TEST_CASE("BF16 on fp16 tensor cores: the fp16 card composed with the scaled K-loops (row mode and K-block mode)") {
  // bf16 inputs r / 2^8 2^-e (|r| <= 255: 8 significant bits, binades -20..-1), so every scaled fp16 operand is exact
  // and every product a' b' is exact in double; the walk of kernels/emu/cuda/emu_bf16_kernel.cuh written out
  // with a card whose block is exact and rounds once to nearest (tests/kernels/emu/emulation_mma_test.cpp's
  // MMA, which the host-compiled kernel matches bit for bit): per step of 16 (K zero-padded to 32) the block
  // with its C rounded to fp32; row mode C = RN(acc 2^-(s_A + s_B)); K-block mode per segment of 64 a partial
  // from +0, acc = RN(acc + RN(part 2^-(s_A,g + s_B,g))). The scales are the policy's plans (what is tested
  // here is the composition, not the scale rules).
  FusedDotParams exact = *tc::mma_sim_hopper(*tc::find_instruction("mma_f16_f32"));
  exact.align_bits = 60;
  exact.block_rounding = Rounding::NearestEven;
  const std::int64_t m = 6, n = 5;
  for (const char* tag : {"tensor", "kblock64"})
    for (const std::int64_t k : {std::int64_t{100}, std::int64_t{128}, std::int64_t{7}}) {
      CAPTURE(tag);
      CAPTURE(k);
      const Bf16OnF16Policy& pol = *find_bf16_on_f16_policy(tag);
      std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
      std::uint64_t ctr = 0;
      for (auto* v : {&a, &b})
        for (double& x : *v) {  // r / 2^8 times 2^-e, e in 0..12: a span of 21 binades, within one scale's 32
          const auto w = philox_4x32(test::seed(), 43, ctr++);
          x = std::ldexp(static_cast<double>(static_cast<int>(w[0] % 511) - 255), -8 - static_cast<int>(w[1] % 13));
        }
      const KernelTraits declared = bf16_on_f16_traits(pol, true);
      REQUIRE(declared.sum_order.kind == OrderKind::Pow2Scaled);
      CHECK(emulation_unavailable(declared).find("not measured") != std::string::npos);  // no card yet: declined
      KernelTraits t = declared;
      t.sum_order = tc::with_cards(declared.sum_order, cards({card_of("mma_f16_f32", exact)}));
      REQUIRE(emulation_unavailable(t).empty());
      const auto got = emulate_gemm(t, m, n, k, a, b);

      auto codes = [](const std::vector<double>& v) {
        std::vector<std::uint16_t> c(v.size());
        for (std::size_t x = 0; x < v.size(); ++x) c[x] = static_cast<std::uint16_t>(round_double(bf16, v[x], Rounder::nearest(bf16)).code);
        return c;
      };
      const auto ac = codes(a), bc = codes(b);
      const OperandPlan pa = plan_operand(pol, ac.data(), m, k, k, 1), pb = plan_operand(pol, bc.data(), n, k, 1, n);
      const bool kblock = pol.strategy == Bf16OnF16Strategy::KBlock;
      const std::int64_t kp = (k + 31) / 32 * 32, len = kblock ? 64 : kp;
      int wrong = 0, rn_differs = 0;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          float acc = 0;
          double fma_seq = 0;  // the CPU model's fp32 FMA walk, to show the composition matters
          for (std::int64_t g = 0; g * len < kp; ++g) {
            const int sa = pa.scale_at(i, kblock ? g : 0), sb = pb.scale_at(j, kblock ? g : 0);
            float part = 0, fpart = 0;
            for (std::int64_t q0 = g * len; q0 < std::min(kp, (g + 1) * len); q0 += 16) {
              double blk = part;
              for (std::int64_t q = q0; q < q0 + 16; ++q)
                if (q < k) {
                  const double x = std::ldexp(a[static_cast<std::size_t>(i * k + q)], sa), y = std::ldexp(b[static_cast<std::size_t>(q * n + j)], sb);
                  blk += x * y;
                  fpart = std::fma(static_cast<float>(x), static_cast<float>(y), fpart);
                }
              part = static_cast<float>(blk);
            }
            const auto rescaled = static_cast<float>(std::ldexp(static_cast<double>(part), -(sa + sb)));
            acc = kblock ? acc + rescaled : rescaled;
            fma_seq += std::ldexp(static_cast<double>(fpart), -(sa + sb));
          }
          wrong += got[static_cast<std::size_t>(i * n + j)] != std::bit_cast<std::uint32_t>(acc);
          rn_differs += static_cast<double>(acc) != fma_seq;
        }
      CHECK(wrong == 0);
      if (k == 128) CHECK(rn_differs > 0);  // block roundings differ from per-product ones: the walk is decisive
    }
}

TEST_CASE("without a usable card the bitwise tier declines and says why") {
  const Problem p = generate("normal:m=8,n=8,k=48,seed=6");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  MmaModel good("mma_f16_model", hopper_f16());
  const auto has_flag = [](const CaseResult& r, const std::string& part) {
    for (const auto& f : r.flags)
      if (f.find(part) != std::string::npos) return true;
    return false;
  };
  {
    const CaseResult r = test::run_graded(good, p, ref, *api);  // nothing installed
    CHECK(r.tier != Tier::Bitwise);
    CHECK(has_flag(r, "no behaviour card installed"));
  }
  {
    const Installed on(cards({card_of("mma_f16_f32", hopper_f16(), false)}));  // 3 disagreements in validation
    const CaseResult r = test::run_graded(good, p, ref, *api);
    CHECK(r.tier != Tier::Bitwise);
    CHECK(has_flag(r, "did not validate"));
  }
  {
    const Installed on(cards({card_of("mma_bf16_f32", *tc::mma_sim_hopper(*tc::find_instruction("mma_bf16_f32")))}));
    const CaseResult r = test::run_graded(good, p, ref, *api);
    CHECK(r.tier != Tier::Bitwise);
    CHECK(has_flag(r, "no card of mma_f16_f32"));
  }
}

TEST_CASE("an unknown order on tensor cores: the envelope uses the coarsest listed card's measured bits") {
  KernelTraits t = mma_traits(e4m3, 32, "", 0);
  t.sum_order = SummationOrder::unknown();
  t.sum_order.block_model.instruction = tc::tc_instructions_for(e4m3, f32);
  CHECK(t.sum_order.block_model.instruction == "mma_e4m3_f32|wgmma_e4m3_f32");
  const std::int64_t K = 64;
  // Nominal: u_acc = 2^-23 (fp32 toward zero: 2u), t = 23: per rounding 2^-23 + 2^-23 = 2^-22, g = gamma_64(2^-22).
  const double nominal = 64 * 0x1p-22 / (1 - 64 * 0x1p-22);
  CHECK(make_envelope(tc::with_installed_cards(t), K).coef == doctest::Approx(nominal).epsilon(1e-12));
  // Cards: mma 13/13 RZ, wgmma 14/13 RN: the coarsest is a 13-bit window and 13-bit results toward zero,
  // u_r = 2^-13: per rounding 2^-13 + 2^-13 = 2^-12, g = gamma_64(2^-12) = 0.015873..., 1040 times the nominal.
  FusedDotParams mma = *tc::mma_sim_hopper(*tc::find_instruction("wgmma_e4m3_f32")), wg = mma;
  wg.align_bits = 14;
  wg.block_rounding = Rounding::NearestEven;
  const Installed on(cards({card_of("mma_e4m3_f32", mma), card_of("wgmma_e4m3_f32", wg)}));
  const KernelTraits applied = tc::with_installed_cards(t);
  REQUIRE(applied.sum_order.block_model.params);
  CHECK(applied.sum_order.block_model.params->align_bits == 13);
  CHECK(applied.sum_order.block_model.params->acc_bits == 13);
  CHECK(applied.sum_order.block_model.params->block_rounding == Rounding::TowardZero);
  CHECK(applied.sum_order.kind == OrderKind::Unknown);  // still no bitwise verdict
  CHECK(!emulation_unavailable(applied).empty());
  const double measured = 64 * 0x1p-12 / (1 - 64 * 0x1p-12);
  const EnvelopeModel e = make_envelope(applied, K);
  CHECK(e.coef == doctest::Approx(measured).epsilon(1e-12));
  bool says = false;
  for (const auto& term : e.bound.terms) says = says || term.formula.find("measured: 13 alignment bits") != std::string::npos;
  CHECK(says);
  // One listed card missing: nominal bits, and the reason.
  const Installed half(cards({card_of("mma_e4m3_f32", mma)}));
  const KernelTraits partial = tc::with_installed_cards(t);
  CHECK(!partial.sum_order.block_model.params);
  CHECK(partial.sum_order.block_model.source.find("no card of wgmma_e4m3_f32") != std::string::npos);
}

TEST_CASE("order specs name the card's instruction and round-trip") {
  const SummationOrder o = SummationOrder::tensor_core(16, "mma_f16_f32", 32);
  CHECK(order_spec(o) == "tensor_core:k=16,insn=mma_f16_f32,pad=32,rounding=rz,model=placeholder");
  CHECK(parse_order_spec(order_spec(o)) == o);
  const SummationOrder c = parse_order_spec("tensor_core:k=16,insn=mma_f16_f32,model=card");
  CHECK(c.block_model.instruction == "mma_f16_f32");
  CHECK(!c.block_model.params);  // filled only by an installed card
  CHECK_THROWS(parse_order_spec("tensor_core:k=16,model=card"));
  CHECK_THROWS(parse_order_spec("tensor_core:k=16,pad=20"));
  CHECK(order_spec(parse_order_spec("unknown:insn=mma_f16_f32|wgmma_f16_f32")) == "unknown:insn=mma_f16_f32|wgmma_f16_f32");
}

TEST_CASE("FP8 accumulation experiment, model side: a 13-bit card loses more than fp32, promotion every 128 recovers most") {
  // The published Hopper FP8 block (MMA-Sim, wgmma e4m3/e5m2: 13 alignment bits, results to 13 bits toward
  // zero) given to the mma.sync FP8 kernels. K = 1024 products of N(0, 1) values: without promotion every
  // step truncates the running sum to 13 bits (relative error up to 2^-13 per step, 32 steps, all toward
  // zero); with promotion the chains are 4 steps long and the 8 partials join in fp32; fp32 accumulation
  // loses at most 2^-24 per product. So predicted errors order as unpromoted > promoted > fp32.
  // The same card for the wgmma kernels (issue 43), whose instruction it is: rows e4m3 {mma, wgmma} x {plain,
  // promoted}, then e5m2.
  std::vector<BehaviourCard> cs;
  for (const char* f : {"e4m3", "e5m2"}) {
    FusedDotParams p = *tc::mma_sim_hopper(*tc::find_instruction(std::string("wgmma_") + f + "_f32"));
    cs.push_back(card_of(std::string("mma_") + f + "_f32", p));
    cs.push_back(card_of(std::string("wgmma_") + f + "_f32", p));
  }
  const Installed on(cards(cs));
  const Fp8AccReport rep = fp8_accumulation_experiment(8, 1024, false);
  REQUIRE(rep.rows.size() == 8);
  if (rep.rows[0].status.find("not built") != std::string::npos) {
    MESSAGE("no CUDA in this build: the FP8 mma.sync kernels (and their traits) do not exist here");
    return;
  }
  for (std::size_t i = 0; i < 8; i += 2) {
    const Fp8AccRow& plain = rep.rows[i];
    const Fp8AccRow& promoted = rep.rows[i + 1];
    CAPTURE(plain.kernel);
    CHECK(plain.promote_every == 0);
    CHECK(promoted.promote_every == 128);
    CHECK(plain.card_acc_bits == 13);
    REQUIRE(plain.predicted_fro > 0);
    REQUIRE(promoted.predicted_fro > 0);
    CHECK(plain.predicted_fro > promoted.predicted_fro);
    CHECK(promoted.predicted_fro > plain.fp32_fro);
    CHECK(plain.agrees == -1);  // no device: nothing measured
  }
}


TEST_CASE("the wgmma kernels' K-loop as declared: chained k-steps from +0, K padded to the 128-byte stage, promotion per stage") {
  // What the bitwise tier expects of kernels/gemm/cuda/wgmma.cu, walked by hand with fused_dot: fp16 steps of 16
  // (K = 100 padded to 128: two stages of 64), and the promoted e4m3 kernel's chains of 4 steps of 32 (one stage of
  // 128 products) from +0, each joined to an fp32 sum by one RN add. The device run holds the kernels to the same.
  auto f16k = make_gemm_kernel("gemm_f16_f32acc_wgmma_sm90");
  auto e4k = make_gemm_kernel("gemm_e4m3_f32acc_wgmma_sm90_promote128");
  if (!f16k || !e4k) {
    MESSAGE("skipped: no CUDA in this build (the wgmma kernels are not registered)");
    return;
  }
  const auto codes = [](const Format& f, const std::vector<double>& v) {
    std::vector<std::uint32_t> c(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) c[i] = static_cast<std::uint32_t>(round_double(f, v[i], Rounder::nearest(f)).code);
    return c;
  };
  {
    const std::int64_t K = 100;
    const Problem p = generate("normal:m=1,n=1,k=100,seed=17");
    std::vector<double> a = round_values(p.a.data, f16, Rounding::NearestEven), b = round_values(p.b.data, f16, Rounding::NearestEven);
    const FusedDotParams card = *tc::mma_sim_hopper(*tc::find_instruction("wgmma_f16_f32"));
    const Installed on(cards({card_of("wgmma_f16_f32", card)}));
    const KernelTraits t = tc::with_installed_cards(f16k->traits());
    REQUIRE(emulation_unavailable(t).empty());
    CHECK(order_spec(t.sum_order) == "tensor_core:k=16,insn=wgmma_f16_f32,pad=64,model=card");
    std::vector<double> ap = a, bp = b;
    ap.resize(128, 0.0), bp.resize(128, 0.0);
    const auto ac = codes(f16, ap), bc = codes(f16, bp);
    std::uint32_t acc = 0;  // +0
    for (int s = 0; s < 128; s += 16) acc = fused_dot(card, ac.data() + s, bc.data() + s, 16, acc);
    CHECK(emulate_gemm(t, 1, 1, K, a, b)[0] == acc);
  }
  {
    const std::int64_t K = 300;  // three stages, the last one partial (zero-padded to 384)
    const Problem p = generate("normal:m=1,n=1,k=300,seed=19");
    std::vector<double> a = round_values(p.a.data, e4m3, Rounding::NearestEven), b = round_values(p.b.data, e4m3, Rounding::NearestEven);
    const FusedDotParams card = *tc::mma_sim_hopper(*tc::find_instruction("wgmma_e4m3_f32"));
    const Installed on(cards({card_of("wgmma_e4m3_f32", card)}));
    const KernelTraits t = tc::with_installed_cards(e4k->traits());
    REQUIRE(emulation_unavailable(t).empty());
    CHECK(t.promote_every == 128);
    std::vector<double> ap = a, bp = b;
    ap.resize(384, 0.0), bp.resize(384, 0.0);
    const auto ac = codes(e4m3, ap), bc = codes(e4m3, bp);
    float sum = 0.0f;
    for (int stage = 0; stage < 384; stage += 128) {
      std::uint32_t chain = 0;
      for (int s = stage; s < stage + 128; s += 32) chain = fused_dot(card, ac.data() + s, bc.data() + s, 32, chain);
      sum = sum + std::bit_cast<float>(chain);  // one RN fp32 add (built with -ffp-contract=off)
    }
    CHECK(emulate_gemm(t, 1, 1, K, a, b)[0] == std::bit_cast<std::uint32_t>(sum));
    // Promotion matters on these data: the unpromoted chain over all of K differs.
    std::uint32_t chain = 0;
    for (int s = 0; s < 384; s += 32) chain = fused_dot(card, ac.data() + s, bc.data() + s, 32, chain);
    CHECK(chain != std::bit_cast<std::uint32_t>(sum));
  }
}
