// tests/suites/tc_bitwise_lanes_test.cpp — Hopper's FP8 mma.sync GEMM model certified bit for bit with the refitted
// FP8 card, and the batched card path (fused_dot_lanes) equal to the per-element path on whole GEMMs of
// tensor-core kernels, split products and BF16-on-fp16 scaling (split from tc_bitwise_test.cpp;
// shared helpers in tc_bitwise_support.hpp).
//
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

namespace {

/// Hopper's FP8 mma.sync card (docs/tensor_cores.md, "FP8 mma.sync on Hopper"), as the probe fits it from
/// the H200's answers: blocks of 16 dealt in runs of 2, C added last, the f16 HMMA's window and RZ.
FusedDotParams hopper_fp8_card(const Format& f) {
  FusedDotParams p = hopper_f16();
  p.a = p.b = f;
  p.interleave_run = 2;
  p.c_join = CJoin::LastRn;
  return p;
}

/// A CPU model of gemm_<fp8>_f32acc_mma_sm89 on Hopper written from the SASS, not from the card: per
/// k = 32 step, the FP8 codes widened to f16 (F2FP, exact), HMMA D1 = the k mod 4 < 2 half from +0 and
/// HMMA D2 = the other half from D1 (both the f16 mma.sync card's block), then FADD D = C + D2 in fp32
/// (the host's float addition, round to nearest); K zero-padded to stages of 64; optionally every
/// `promote` products the step chain's D is added to an fp32 sum (RN) and the chain restarts from +0.
class HopperFp8Model final : public CpuModel {
 public:
  HopperFp8Model(std::string name, const Format& f, int promote, KernelTraits t) : CpuModel(std::move(name), "Hopper FP8 mma.sync model", t), f_(f), promote_(promote) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const FusedDotParams hmma = hopper_f16();
    const std::int64_t kp = (d.k + 63) / 64 * 64;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    const auto f16_of = [&](double v) { return static_cast<std::uint32_t>(round_double(f16, v, Rounder::nearest(f16)).code); };
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        float outer = 0.0f, chain = 0.0f;
        for (std::int64_t q0 = 0; q0 < kp; q0 += 32) {
          std::uint32_t alo[16], blo[16], ahi[16], bhi[16];
          int nlo = 0, nhi = 0;
          for (int x = 0; x < 32; ++x) {
            const std::int64_t q = q0 + x;
            // The FP8 value (the operand as the kernel reads it), then widened to f16: exact.
            const double av = q < d.k ? to_double(f_, round_double(f_, d.A(i, q), Rounder::nearest(f_)).code) : 0.0;
            const double bv = q < d.k ? to_double(f_, round_double(f_, d.B(q, j), Rounder::nearest(f_)).code) : 0.0;
            if (x % 4 < 2) alo[nlo] = f16_of(av), blo[nlo++] = f16_of(bv);
            else ahi[nhi] = f16_of(av), bhi[nhi++] = f16_of(bv);
          }
          const std::uint64_t d1 = fused_dot(hmma, alo, blo, 16, 0);
          const std::uint64_t d2 = fused_dot(hmma, ahi, bhi, 16, d1);
          chain = chain + static_cast<float>(to_double(f32, d2));  // FADD, round to nearest
          if (promote_ > 0 && (q0 + 32) % promote_ == 0) outer = outer + chain, chain = 0.0f;
        }
        const float r = promote_ > 0 ? outer + chain : chain;
        out[static_cast<std::size_t>(i * d.n + j)] = round_double(f32, static_cast<double>(r), Rounder::nearest(f32)).code;
      }
    return out;
  }

 private:
  const Format& f_;
  int promote_;
};

}  // namespace

TEST_CASE("Hopper's FP8 mma.sync GEMM (a CPU model written from the SASS) is certified bit for bit with the refitted FP8 card") {
  // The bitwise tier composes the card (fused_dot with interleave_run 2 and C last) with the kernel's
  // K-loop; the model above computes the same steps the way the SASS does them. With and without
  // promotion every 128, e4m3 and e5m2; a card with C in the block instead is refused.
  auto api = make_host_api();
  for (const Format* f : {&e4m3, &e5m2}) {
    const std::string insn = std::string("mma_") + std::string(f->tag) + "_f32";
    // FP8 values over 13 binades: the running sums need more than fp32's 24 bits, so roundings happen.
    const Problem p = generate("exp_uniform:m=16,n=16,k=300,emin=-6,emax=6,seed=7,source=" + std::string(f->tag));
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    for (int promote : {0, 128}) {
      CAPTURE(insn);
      CAPTURE(promote);
      KernelTraits t = mma_traits(*f, 32, insn.c_str(), 64);
      if (promote) t.promote_every = promote, t.promote_format = &f32;
      {
        const Installed on(cards({card_of(insn, hopper_fp8_card(*f))}));
        HopperFp8Model good("hopper_fp8_model", *f, promote, t);
        const CaseResult r = test::run_graded(good, p, ref, *api);
        CHECK(r.tier == Tier::Bitwise);
        REQUIRE(check(r, CheckKind::Bitwise));
        CHECK_MESSAGE(check(r, CheckKind::Bitwise)->passed, check(r, CheckKind::Bitwise)->detail);
        CHECK(r.status == CaseStatus::Pass);
      }
      // C in the first block (rounded toward zero with the products) instead of added last to nearest: the
      // running sum's rounding differs. (Contiguous halves instead of runs of 2 are rarely seen in a GEMM:
      // FP8 products of a few binades fit the 25-bit window, so both partitions often sum exactly before
      // the one rounding; the probe's random dots tell them apart.)
      FusedDotParams in_block = hopper_fp8_card(*f);
      in_block.c_join = CJoin::InBlock;
      const Installed on(cards({card_of(insn, in_block)}));
      HopperFp8Model same("hopper_fp8_model", *f, promote, t);
      const CaseResult m = test::run_graded(same, p, ref, *api);
      REQUIRE(check(m, CheckKind::Bitwise));
      CHECK(!check(m, CheckKind::Bitwise)->passed);
    }
  }
}

namespace {

/// emulate_gemm of the problem's inputs (rounded into the kernel's input formats) on the Fast and the Generic path:
/// the same declines (declined counts them) and, otherwise, the same raw codes (NaN payloads included). Returns Generic's.
std::vector<std::uint64_t> fast_equals_generic(const KernelTraits& t, const Problem& p, std::int64_t m, std::int64_t n, std::int64_t k,
                                               int& declined) {
  const auto a = round_values(p.a.data, *t.a_input, t.input_rounding), b = round_values(p.b.data, *t.b_input, t.input_rounding);
  auto run = [&](EmulationPath path) -> std::pair<std::vector<std::uint64_t>, std::string> {
    try {
      return {emulate_gemm(t, m, n, k, a, b, {}, path), ""};
    } catch (const EmulationDeclined& e) {
      return {{}, e.what()};
    }
  };
  const auto fast = run(EmulationPath::Fast), generic = run(EmulationPath::Generic);
  CHECK(fast.second == generic.second);
  declined += !generic.second.empty();
  REQUIRE(fast.first.size() == generic.first.size());
  std::int64_t diff = 0, first = -1;
  for (std::size_t x = 0; x < fast.first.size(); ++x)
    if (fast.first[x] != generic.first[x]) first = first < 0 ? static_cast<std::int64_t>(x) : first, ++diff;
  CHECK_MESSAGE(diff == 0, diff, " differ, first at ", first);
  return generic.first;
}

}  // namespace

TEST_CASE("the batched card path (fused_dot_lanes) equals the per-element fused_dot path, whole GEMMs of tensor-core kernels") {
  // emulate_gemm's Fast path runs a card's K-loop kFusedLanes columns at a time through fused_dot_lanes; Generic keeps
  // one fused_dot per element and instruction. The two must agree bit for bit, and so must the notes that decline
  // the bitwise tier (the message carries their count). Kernels: the f16, bf16 and tf32 mma.sync GEMMs with
  // MMA-Sim's Hopper cards, Hopper's FP8 mma.sync card (runs of 2, C added last) with and without promotion, the
  // f16 card rounding to nearest, and Hopper's FP8 wgmma card (one block of 32, 13-bit window, e8m13 results toward
  // zero) as the wgmma kernels declare it (K padded to 128, promoted to fp32 every 128 or not; with Khattak and
  // Mikaitis' floor of -133 too). n = 53: three whole groups of 16 columns and a tail on the scalar path; K = 200
  // zero-padded. Data: uniform; exponents spread over 80 binades (bf16/tf32: products and sums leave fp32's normal
  // range, block results subnormal or Inf); Inf, NaN and signed zeros planted in A and B.
  struct Kernel {
    const char* name;
    KernelTraits t;
    FusedDotParams p;
  };
  const auto card = [](const char* insn) { return *tc::mma_sim_hopper(*tc::find_instruction(insn)); };
  FusedDotParams f16_rn = card("mma_f16_f32");
  f16_rn.block_rounding = Rounding::NearestEven;
  KernelTraits promoted = mma_traits(e4m3, 32, "mma_e4m3_f32", 64);
  promoted.promote_every = 64;
  promoted.promote_format = &f32;
  FusedDotParams wg_floor = card("wgmma_e5m2_f32");
  wg_floor.align_floor = -133;
  KernelTraits wg_promoted = mma_traits(e4m3, 32, "wgmma_e4m3_f32", 128);
  wg_promoted.promote_every = 128;
  wg_promoted.promote_format = &f32;
  const std::vector<Kernel> kernels = {
      {"f16", mma_f16_traits(), card("mma_f16_f32")},
      {"f16 rn", mma_f16_traits(), f16_rn},
      {"bf16", mma_traits(bf16, 16, "mma_bf16_f32", 32), card("mma_bf16_f32")},
      {"tf32", mma_traits(tf32, 8, "mma_tf32_f32", 32), card("mma_tf32_f32")},
      {"e4m3", mma_traits(e4m3, 32, "mma_e4m3_f32", 64), hopper_fp8_card(e4m3)},
      {"e4m3 promoted", promoted, hopper_fp8_card(e4m3)},
      {"e5m2", mma_traits(e5m2, 32, "mma_e5m2_f32", 64), hopper_fp8_card(e5m2)},
      {"e4m3 wgmma", mma_traits(e4m3, 32, "wgmma_e4m3_f32", 128), card("wgmma_e4m3_f32")},
      {"e4m3 wgmma promoted", wg_promoted, card("wgmma_e4m3_f32")},
      {"e5m2 wgmma floor", mma_traits(e5m2, 32, "wgmma_e5m2_f32", 128), wg_floor},
  };
  const std::uint64_t seed = test::seed() + 31;
  CAPTURE(seed);
  const std::int64_t m = 5, n = 53, k = 200;
  int compared = 0, declined = 0, nonfinite = 0;
  for (const Kernel& kn : kernels) {
    CAPTURE(kn.name);
    KernelTraits t = kn.t;
    t.sum_order.block_model.params = kn.p;
    t.sum_order.block_model.measured = true;
    REQUIRE(emulation_unavailable(t).empty());
    REQUIRE(fused_lanes_apply(kn.p, t.sum_order.block));
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-40,emax=40,", "exp_uniform:emin=-80,emax=-66,"}) {
      CAPTURE(spec);
      Problem p = generate(spec + "m=5,n=53,k=200,seed=" + std::to_string(seed % 100000));
      for (int x = 0; x < 6; ++x) {  // specials at Philox-chosen places
        const auto w = philox_4x32(seed, 41, static_cast<std::uint64_t>(compared * 8 + x));
        const double v = x % 3 == 0 ? INFINITY : x % 3 == 1 ? NAN : -0.0;
        (x < 3 ? p.a.data[w[0] % (m * k)] : p.b.data[w[1] % (k * n)]) = v;
      }
      const std::vector<std::uint64_t> generic = fast_equals_generic(t, p, m, n, k, declined);
      for (const std::uint64_t c : generic) nonfinite += classify(f32, c) == FpClass::Inf || classify(f32, c) == FpClass::NaN;
      ++compared;
    }
  }
  MESSAGE(compared << " GEMMs, " << declined << " declined by both paths, " << nonfinite << " Inf/NaN outputs");
  CHECK(compared == 10 * 3);
  CHECK(declined >= 2);      // the tiny data's block results round below fp32's normal range
  CHECK(nonfinite >= 100);  // the planted specials reach whole rows and columns
}

TEST_CASE("the batched card path equals the per-element path for split products and BF16-on-fp16 scaling on tensor cores") {
  // split_products_tc and pow2_scaled's card K-loops run through fused_dot_lanes on the Fast path (whole groups of 16
  // columns; the rest, and the Generic path, one fused_dot per element and instruction). Schemes 1xbf16, 3xbf16, 6xbf16
  // (bf16 card) and 3xtf32 (tf32 card); BF16-on-fp16 policies auto, tensor and kblock64 (the fp16 card). n = 53, K = 200
  // zero-padded; uniform data, exponents spread over 80 binades, and tiny values whose block results fall below fp32's
  // normal range (both paths then decline with the same count).
  const auto card = [](const char* insn) { return *tc::mma_sim_hopper(*tc::find_instruction(insn)); };
  std::vector<std::pair<std::string, KernelTraits>> kernels;
  for (const auto& [scheme, k, insn, pad] : {std::tuple{"1xbf16", 16, "mma_bf16_f32", 32}, std::tuple{"3xbf16", 16, "mma_bf16_f32", 32},
                                              std::tuple{"6xbf16", 16, "mma_bf16_f32", 32}, std::tuple{"3xtf32", 8, "mma_tf32_f32", 16}}) {
    KernelTraits t = make_gemm_kernel("model_gemm_3xbf16")->traits();
    t.sum_order = SummationOrder::split_products(scheme, OrderKind::TensorCoreBlock, k);
    t.sum_order.block_model.instruction = insn;
    t.sum_order.block_model.pad = pad;
    t.sum_order.block_model.params = card(insn);
    t.sum_order.block_model.measured = true;
    kernels.emplace_back(scheme, t);
  }
  for (const char* pol : {"auto", "tensor", "kblock64"}) {
    KernelTraits t = bf16_on_f16_traits(*find_bf16_on_f16_policy(pol), true);
    t.sum_order.block_model.params = card("mma_f16_f32");
    t.sum_order.block_model.measured = true;
    kernels.emplace_back(std::string("bf16_on_f16 ") + pol, t);
  }
  const std::uint64_t seed = test::seed() + 37;
  CAPTURE(seed);
  const std::int64_t m = 5, n = 53, k = 200;
  int compared = 0, declined = 0;
  for (const auto& [name, t] : kernels) {
    CAPTURE(name);
    REQUIRE(emulation_unavailable(t).empty());
    REQUIRE(fused_lanes_apply(*t.sum_order.block_model.params, t.sum_order.block));
    for (const std::string spec : {"uniform:", "exp_uniform:emin=-40,emax=40,", "exp_uniform:emin=-80,emax=-66,"}) {
      CAPTURE(spec);
      const Problem p = generate(spec + "m=5,n=53,k=200,seed=" + std::to_string(seed % 100000));
      fast_equals_generic(t, p, m, n, k, declined);
      ++compared;
    }
  }
  MESSAGE(compared << " GEMMs, " << declined << " declined by both paths");
  CHECK(compared == 7 * 3);
  CHECK(declined >= 2);
}
