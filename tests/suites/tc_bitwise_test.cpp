// tests/suites/tc_bitwise_test.cpp — tensor-core kernels through the verdict tiers with behaviour cards
// (docs/tensor_cores.md, "Certifying tensor-core kernels"): the card's block model composed with the
// kernel's K-loop against exact reasoning, a kernel model of mma.sync certified bit for bit and its
// mutants refused, the bitwise tier declining without a usable card, and the envelope taking a card's
// measured bits for an unknown order on tensor cores.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/gemm/cpu/model.hpp"
#include "kernels/tc/cards.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/emulate.hpp"
#include "suites/envelope.hpp"
#include "suites/fp8_accumulation.hpp"
#include "suites/runner.hpp"
#include "generators/generate.hpp"
#include "tests/support/run_case.hpp"

using namespace fpcert;

namespace {

/// MMA-Sim's Hopper model of mma.sync f16 -> f32 (kernels/tc/probe.cpp: 25 alignment bits below e_a + e_b,
/// discarded toward zero, C in the block, RZ to 23 bits, blocks of 16).
FusedDotParams hopper_f16() { return *tc::mma_sim_hopper(*tc::find_instruction("mma_f16_f32")); }

/// A validated card of `id` with these parameters (as `fpcert probe tensor-cores` writes one that passed).
BehaviourCard card_of(const std::string& id, const FusedDotParams& p, bool validated = true) {
  const tc::InstructionSpec* s = tc::find_instruction(id);
  BehaviourCard c;
  c.id = id;
  c.instruction = std::string(s->ptx);
  c.device = "simulated: test";
  c.supported = true;
  c.params = p;
  c.validation.push_back({"uniform", 1000, validated ? 0u : 3u});
  return c;
}
tc::CardSet cards(std::vector<BehaviourCard> cs) {
  tc::CardSet s;
  s.cards = std::move(cs);
  s.source = "the test's cards";
  return s;
}

/// The traits of fpcert's mma.sync GEMMs (kernels/gemm/cuda/mma.cu): operands of `f`, exact products, fp32
/// accumulator declared toward zero, steps of the instruction's k, K padded to `pad`, the card of `insn`.
KernelTraits mma_traits(const Format& f, int k, const char* insn, int pad) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  t.order = "mma.sync steps, k ascending, K zero-padded";
  t.sum_order = SummationOrder::tensor_core(k, insn, pad);
  return t;
}
/// gemm_f16_f32acc_mma_sm80: m16n8k16, K padded to stages of 32.
KernelTraits mma_f16_traits() { return mma_traits(f16, 16, "mma_f16_f32", 32); }

/// A CPU model of an mma.sync f16 GEMM: its own K-loop (not the emulator's) over fused_dot with `p`:
/// K padded with zero codes to a multiple of 32, steps of 16, D chained from +0.
class MmaModel final : public CpuModel {
 public:
  MmaModel(std::string name, FusedDotParams p) : CpuModel(std::move(name), "mma.sync f16 model", mma_f16_traits()), p_(p) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const std::int64_t kp = (d.k + 31) / 32 * 32;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    std::vector<std::uint32_t> a(static_cast<std::size_t>(kp)), b(static_cast<std::size_t>(kp));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        for (std::int64_t q = 0; q < kp; ++q) {
          a[static_cast<std::size_t>(q)] = q < d.k ? static_cast<std::uint32_t>(round_double(f16, d.A(i, q), Rounder::nearest(f16)).code) : 0;
          b[static_cast<std::size_t>(q)] = q < d.k ? static_cast<std::uint32_t>(round_double(f16, d.B(q, j), Rounder::nearest(f16)).code) : 0;
        }
        std::uint64_t c = 0;
        for (std::int64_t q = 0; q < kp; q += 16) c = fused_dot(p_, a.data() + q, b.data() + q, 16, c);
        out[static_cast<std::size_t>(i * d.n + j)] = c;
      }
    return out;
  }

 private:
  FusedDotParams p_;
};

const CheckResult* check(const CaseResult& r, CheckKind k) { return find_check(r, k); }

/// Installs a card set for one test and removes it after.
struct Installed {
  explicit Installed(tc::CardSet s) { tc::install_cards(std::move(s)); }
  ~Installed() { tc::install_cards({}); }
};

}  // namespace

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
  std::vector<BehaviourCard> cs;
  for (const char* f : {"e4m3", "e5m2"}) {
    FusedDotParams p = *tc::mma_sim_hopper(*tc::find_instruction(std::string("wgmma_") + f + "_f32"));
    cs.push_back(card_of(std::string("mma_") + f + "_f32", p));
  }
  const Installed on(cards(cs));
  const Fp8AccReport rep = fp8_accumulation_experiment(8, 1024, false);
  REQUIRE(rep.rows.size() == 4);
  if (rep.rows[0].status.find("not built") != std::string::npos) {
    MESSAGE("no CUDA in this build: the FP8 mma.sync kernels (and their traits) do not exist here");
    return;
  }
  for (std::size_t i = 0; i < 4; i += 2) {
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
