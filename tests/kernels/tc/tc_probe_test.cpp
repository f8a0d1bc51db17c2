// tests/kernels/tc_probe_test.cpp — the tensor-core probe's logic on the CPU: against instructions
// simulated by the block model with chosen parameters (Hopper's published ones and sets that differ
// from them in every property), the probe must recover the parameters it was given, and the
// validation must pass; against instructions the model cannot express, or that err on a few inputs,
// the validation must fail and print the inputs. Recordings round-trip and replay.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "kernels/tc/probe.hpp"
#include "kernels/tc/recording.hpp"
#include "base/error.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"
#include "oracle/order/tc_card.hpp"

using namespace fpcert;
using namespace fpcert::tc;

namespace {

const InstructionSpec& spec(const char* id) {
  const InstructionSpec* s = find_instruction(id);
  REQUIRE(s != nullptr);
  return *s;
}

/// Every field of the fitted model against the one simulated, by name (a failure says which).
void check_params(const FusedDotParams& got, const FusedDotParams& want, bool floor_observable = true) {
  CHECK(got.operand_read == want.operand_read);
  CHECK(got.input_subnormals == want.input_subnormals);
  CHECK(got.product_frac_bits == want.product_frac_bits);
  CHECK(got.wide_block == want.wide_block);
  CHECK(got.fused_length == want.fused_length);
  CHECK(got.grouping == want.grouping);
  CHECK(got.groups == want.groups);
  CHECK(got.interleave_run == want.interleave_run);
  CHECK(got.align_bits == want.align_bits);
  CHECK(got.reference == want.reference);
  CHECK(got.align_rounding == want.align_rounding);
  CHECK(got.c_join == want.c_join);
  if (floor_observable) CHECK(got.align_floor == want.align_floor);
  CHECK(got.acc_bits == want.acc_bits);
  CHECK(got.block_rounding == want.block_rounding);
  CHECK(got.output_subnormals == want.output_subnormals);
  CHECK(got.overflow == want.overflow);
  CHECK(got.nan_code == want.nan_code);
  CHECK(got.ieee_negative_zero == want.ieee_negative_zero);
}

/// Probe a simulated instruction with `truth`; the card must pass and recover truth.
BehaviourCard probe_simulated(const InstructionSpec& s, const FusedDotParams& truth, std::uint64_t samples = 24000,
                              bool floor_observable = true) {
  auto insn = make_model_instruction(s, truth, "simulated");
  ProbeOptions opt;
  opt.samples = samples;
  opt.seed = test::seed();
  const BehaviourCard card = probe_instruction(*insn, opt);
  INFO("instruction " << s.id << ": " << card.summary);
  for (const auto& p : card.properties)
    INFO(p.name << ": " << p.observed << " => " << p.conclusion << " (" << p.disagree << " of " << p.queries << " disagree)");
  CHECK(card.supported);
  CHECK(card.probe_disagreements == 0);
  CHECK(card.validated_samples() >= samples);
  CHECK(card.validation_disagreements() == 0);
  CHECK(card.passed());
  check_params(card.params, truth, floor_observable);
  return card;
}

FusedDotParams base(const InstructionSpec& s) { return starting_params(s); }

}  // namespace

TEST_CASE("tc probe: recovers the published Hopper models (MMA-Sim) it is given") {
  for (const char* id : {"mma_f16_f32", "mma_bf16_f32", "mma_tf32_f32", "mma_f16_f16", "wgmma_e5m2_f32"}) {
    const InstructionSpec& s = spec(id);
    const auto ms = mma_sim_hopper(s);
    REQUIRE(ms.has_value());
    const BehaviourCard card = probe_simulated(s, *ms);
    // The comparison with the model it was simulated from agrees on every property.
    for (const auto& row : card.published) {
      INFO(row.property << ": fpcert " << row.fpcert << ", MMA-Sim " << row.mma_sim << " -> " << row.verdict);
      CHECK(row.verdict.find("differs from MMA-Sim") == std::string::npos);
    }
  }
}

TEST_CASE("tc probe: recovers parameter sets unlike Hopper's") {
  SUBCASE("Ampere-like f16: 24 bits, blocks of 8 chained") {
    const InstructionSpec& s = spec("mma_f16_f32");
    FusedDotParams p = base(s);
    p.align_bits = 24;
    p.fused_length = 8;
    probe_simulated(s, p);
  }
  SUBCASE("tf32: nearest-even operand reading, 23 bits from the leading bit, discarding toward -Inf, RNE result") {
    const InstructionSpec& s = spec("mma_tf32_f32");
    FusedDotParams p = base(s);
    p.operand_read = Rounding::NearestEven;
    p.align_bits = 23;
    p.reference = AlignReference::LeadingBit;
    p.align_rounding = AlignRounding::Down;
    p.block_rounding = Rounding::NearestEven;
    probe_simulated(s, p);
  }
  SUBCASE("bf16: C after the block, subnormals flushed both ways, nearest-away result, -0 kept") {
    const InstructionSpec& s = spec("mma_bf16_f32");
    FusedDotParams p = base(s);
    p.c_join = CJoin::After;
    p.input_subnormals = false;
    p.output_subnormals = false;
    p.block_rounding = Rounding::NearestAway;
    p.ieee_negative_zero = true;
    p.wide_block = false;
    probe_simulated(s, p);
  }
  SUBCASE("f16: two interleaved alignment groups, nearest-even discarding, 22-bit result rounded up") {
    const InstructionSpec& s = spec("mma_f16_f32");
    FusedDotParams p = base(s);
    p.grouping = Grouping::Interleaved;
    p.groups = 2;
    p.align_rounding = AlignRounding::NearestEven;
    p.acc_bits = 22;
    p.block_rounding = Rounding::Up;
    probe_simulated(s, p);
  }
  SUBCASE("e4m3: 13-bit window and result, blocks of 16 chained, products truncated to 5 bits") {
    const InstructionSpec& s = spec("mma_e4m3_f32");
    FusedDotParams p = base(s);
    p.align_bits = 13;
    p.acc_bits = 13;
    p.fused_length = 16;
    p.product_frac_bits = 5;
    probe_simulated(s, p);
  }
  SUBCASE("f16 accumulator: RNE, alignment floor -21, overflow saturating, rounding down") {
    const InstructionSpec& s = spec("mma_f16_f16");
    FusedDotParams p = base(s);
    p.block_rounding = Rounding::NearestEven;
    p.align_floor = -21;
    p.overflow = OverflowTo::MaxFinite;
    probe_simulated(s, p);
    p.block_rounding = Rounding::Down;
    p.align_floor = kNoAlignFloor;
    probe_simulated(s, p);
  }
  SUBCASE("wgmma e4m3 with Khattak and Mikaitis' H100 model (a floor fp32 RZ results cannot show)") {
    const InstructionSpec& s = spec("wgmma_e4m3_f32");
    const auto km = khattak_mikaitis_hopper(s);
    REQUIRE(km.has_value());
    probe_simulated(s, *km, 24000, false);
  }
}

TEST_CASE("tc probe: integer accumulation wraps or saturates") {
  for (const char* id : {"mma_s8_s32", "wgmma_s8_s32"})
    for (bool wraps : {true, false}) {
      auto insn = make_integer_model_instruction(spec(id), wraps, "simulated");
      ProbeOptions opt;
      opt.samples = 20000;
      const BehaviourCard card = probe_instruction(*insn, opt);
      CHECK(card.integer_wraps == wraps);
      CHECK(card.passed());
    }
}

namespace {

/// An instruction that answers like `inner` except where C's low 12 bits are 0x5a5 (about one random
/// fp32 C in 4096; never a probe query, whose C is 0 or a power of two): there it flips D's low bit.
class FaultyInstruction final : public MmaInstruction {
 public:
  explicit FaultyInstruction(std::unique_ptr<MmaInstruction> inner) : inner_(std::move(inner)) {}
  const InstructionSpec& spec() const override { return inner_->spec(); }
  std::string origin() const override { return "faulty simulation"; }
  std::vector<std::uint32_t> run(const MmaBatch& b) override {
    std::vector<std::uint32_t> d = inner_->run(b);
    for (std::size_t i = 0; i < d.size(); ++i)
      if ((b.c[i] & 0xFFF) == 0x5A5 && (d[i] & 0x7F800000u) != 0x7F800000u) d[i] ^= 1;
    return d;
  }

 private:
  std::unique_ptr<MmaInstruction> inner_;
};

/// D = RZ(C + sum a_i b_i) of the exact sum (MPFR): a tensor core with an infinitely wide window,
/// which no finite window of the model reproduces on inputs spread over many binades.
class ExactInstruction final : public MmaInstruction {
 public:
  explicit ExactInstruction(const InstructionSpec& s) : s_(s) {}
  const InstructionSpec& spec() const override { return s_; }
  std::string origin() const override { return "exact RZ simulation"; }
  std::vector<std::uint32_t> run(const MmaBatch& b) override {
    check_batch(s_, b);
    std::vector<std::uint32_t> d(b.c.size());
    mpfr_ref::Mpfr sum(2000), x(64), y(64), p(128);
    for (int t = 0; t < b.count; ++t)
      for (int i = 0; i < s_.m; ++i)
        for (int j = 0; j < s_.n; ++j) {
          const std::size_t ci = (static_cast<std::size_t>(t) * s_.m + i) * s_.n + j;
          const Unpacked cu = unpack(*s_.acc, b.c[ci]);
          bool special = cu.cls == FpClass::NaN || cu.cls == FpClass::Inf;
          mpfr_ref::set_code(sum, *s_.acc, special ? 0 : b.c[ci]);
          for (int q = 0; q < s_.k; ++q) {
            const std::uint32_t a = b.a[(static_cast<std::size_t>(t) * s_.m + i) * s_.k + q];
            const std::uint32_t bb = b.b[(static_cast<std::size_t>(t) * s_.n + j) * s_.k + q];
            const FpClass ca = classify(*s_.a, a), cb = classify(*s_.b, bb);
            if (ca == FpClass::NaN || ca == FpClass::Inf || cb == FpClass::NaN || cb == FpClass::Inf) {
              special = true;
              continue;
            }
            mpfr_ref::set_code(x, *s_.a, a);
            mpfr_ref::set_code(y, *s_.b, bb);
            mpfr_mul(p, x, y, MPFR_RNDN);
            mpfr_add(sum, sum, p, MPFR_RNDN);
          }
          d[ci] = special ? static_cast<std::uint32_t>(s_.acc->canonical_nan_code())
                          : static_cast<std::uint32_t>(mpfr_ref::round(*s_.acc, sum, Rounder{Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve}).code);
        }
    return d;
  }

 private:
  const InstructionSpec& s_;
};

}  // namespace

TEST_CASE("tc probe: the validation fails, with the inputs, when the model does not fit") {
  const InstructionSpec& s = spec("mma_f16_f32");
  SUBCASE("a device that errs on one input in ~4096") {
    FaultyInstruction faulty(make_model_instruction(s, *mma_sim_hopper(s), "simulated"));
    ProbeOptions opt;
    opt.samples = 30000;
    const BehaviourCard card = probe_instruction(faulty, opt);
    CHECK(card.validation_disagreements() > 0);
    CHECK_FALSE(card.passed());
    REQUIRE_FALSE(card.disagreements.empty());
    const CardDisagreement& d = card.disagreements.front();
    CHECK(d.a.size() == static_cast<std::size_t>(s.k));
    CHECK(d.b.size() == static_cast<std::size_t>(s.k));
    CHECK((d.device ^ d.model) == 1u);  // exactly the flipped bit
  }
  SUBCASE("an exact-sum tensor core: no finite window reproduces it on wide inputs") {
    ExactInstruction exact(s);
    ProbeOptions opt;
    opt.samples = 6000;
    const BehaviourCard card = probe_instruction(exact, opt);
    CHECK_FALSE(card.passed());
    std::uint64_t wide_bad = 0;
    for (const auto& v : card.validation) wide_bad += v.distribution == "wide" || v.distribution == "ties" ? v.disagreements : 0;
    CHECK(wide_bad > 0);
  }
}

TEST_CASE("tc probe: recordings round-trip and replay to the same card") {
  const InstructionSpec& s = spec("mma_bf16_f32");
  FusedDotParams truth = base(s);
  truth.align_bits = 24;
  truth.fused_length = 8;
  auto insn = make_model_instruction(s, truth, "simulated");
  Recording rec;
  rec.instruction = std::string(s.id);
  rec.origin = insn->origin();
  rec.seed = 11;
  auto inner = instruction_dots(*insn);
  auto dots = recording_dots(*inner, rec);
  BehaviourCard card = fit_instruction(s, *dots, insn->origin());
  ProbeOptions opt;
  opt.samples = 6000;
  opt.seed = rec.seed;
  opt.record = &rec;
  opt.record_tiles = 2;
  validate(card, s, *insn, opt);
  REQUIRE(card.passed());
  rec.card = to_json(card.params).dump();
  const std::string dir = "tc_probe_test_tmp";
  std::filesystem::create_directories(dir);
  const std::string path = recording_path(dir, s);
  rec.write(path);
  const auto bytes = std::filesystem::file_size(path);
  MESSAGE("recording of " << rec.dots.size() << " queries and " << rec.tiles.size() << " tiles: " << bytes << " bytes");
  CHECK(bytes < 64 * 1024);

  const Recording back = Recording::read(path);
  CHECK(back.dots.size() == rec.dots.size());
  CHECK(back.tiles.size() == rec.tiles.size());
  auto replay = replay_dots(back, s);
  BehaviourCard again = fit_instruction(s, *replay, "recorded");
  check_params(again.params, card.params);
  CHECK(again.probe_disagreements == 0);
  CHECK(to_json(again.params) == nlohmann::json::parse(back.card));
  replay_validation(again, s, back, 8);
  CHECK(again.validated_samples() == rec.tiles.size() * static_cast<std::size_t>(std::min(s.m * s.n, kTileCodes)));
  CHECK(again.validation_disagreements() == 0);

  SUBCASE("a changed answer changes the outcome") {
    Recording bad = back;
    bad.tiles.front().d[3] ^= 1;
    BehaviourCard c2 = again;
    replay_validation(c2, s, bad, 8);
    CHECK(c2.validation_disagreements() == 1);
  }
  SUBCASE("a query the recording lacks is an input error") {
    Recording cut = back;
    cut.dots.resize(cut.dots.size() / 2);
    auto r2 = replay_dots(cut, s);
    CHECK_THROWS_AS(fit_instruction(s, *r2, "recorded"), InputError);
  }
  SUBCASE("malformed files are refused with the line") {
    const std::string p2 = dir + "/bad.tcrec";
    {
      std::FILE* f = std::fopen(p2.c_str(), "w");
      std::fputs("fpcert-tc-recording 1\ninstruction mma_bf16_f32\nq zz 0\n", f);
      std::fclose(f);
    }
    CHECK_THROWS_AS(Recording::read(p2), InputError);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("tc card: JSON round trip") {
  const InstructionSpec& s = spec("mma_tf32_f32");
  auto insn = make_model_instruction(s, *mma_sim_hopper(s), "simulated");
  ProbeOptions opt;
  opt.samples = 3000;
  const BehaviourCard card = probe_instruction(*insn, opt);
  const nlohmann::json j = to_json(card);
  const BehaviourCard back = card_from_json(j);
  CHECK(to_json(back) == j);
  CHECK(back.params == card.params);
  // The emulated structure's fields, and a card written before interleave_run existed (read as 0).
  FusedDotParams fp8 = starting_params(spec("mma_e4m3_f32"));
  fp8.fused_length = 16;
  fp8.interleave_run = 2;
  fp8.c_join = CJoin::LastRn;
  CHECK(fused_params_from_json(to_json(fp8)) == fp8);
  CHECK(to_json(fp8).at("c_join") == "last-rn");
  nlohmann::json old = to_json(card.params);
  old.erase("interleave_run");
  CHECK(fused_params_from_json(old) == card.params);
  nlohmann::json broken = j;
  broken["params"]["align_bits"] = 400;
  CHECK_THROWS_AS(card_from_json(broken), InputError);
}

TEST_CASE("tc probe: Hopper's FP8 mma.sync emulation (two f16 blocks dealt in runs of 2, C added last) is recovered") {
  // The structure the H200's SASS shows (docs/tensor_cores.md, "FP8 mma.sync on Hopper"): the one-block
  // stages fit something that misses answers (or random dots), and the refit finds the structure.
  for (const char* id : {"mma_e4m3_f32", "mma_e5m2_f32", "mma_e4m3_f16"}) {
    const InstructionSpec& s = spec(id);
    FusedDotParams p = base(s);
    p.fused_length = 16;
    p.interleave_run = 2;
    p.c_join = CJoin::LastRn;
    const bool f16acc = *s.acc == f16;
    if (f16acc) p.acc_bits = 10, p.block_rounding = Rounding::NearestEven;
    INFO(id);
    const BehaviourCard card = probe_simulated(s, p, 24000, !f16acc);
    bool refit = false;
    for (const auto& prop : card.properties) refit |= prop.name == "random sample and block structure" && prop.conclusion.find("runs of 2") != std::string::npos;
    CHECK(refit);
  }
}

#ifdef FPCERT_SOURCE_DIR
TEST_CASE("tc probe: the H200's recordings replay to validated cards, every recorded tile reproduced") {
  // tests/data/tc: every probe answer and the recorded validation tiles of 18 instructions (the four FP8
  // mma.sync ones trimmed to 20 tiles per distribution) through the probe logic on the CPU.
  const std::filesystem::path dir = std::filesystem::path(FPCERT_SOURCE_DIR) / "tests" / "data" / "tc";
  int replayed = 0, fp32_cards = 0;
  for (const InstructionSpec& s : all_instructions()) {
    const std::string path = recording_path(dir.string(), s);
    if (!std::filesystem::exists(path)) continue;
    INFO(s.id);
    const Recording rec = Recording::read(path);
    auto dots = replay_dots(rec, s);
    BehaviourCard card = fit_instruction(s, *dots, "recorded");
    replay_validation(card, s, rec, 4);
    ++replayed;
    CHECK(card.probe_disagreements == 0);
    CHECK(card.validated_samples() > 0);
    CHECK(card.validation_disagreements() == 0);
    CHECK(card.passed());
    if (!s.integer()) CHECK(card.params == fused_params_from_json(nlohmann::json::parse(rec.card)));
    // Every measured fp32-accumulator card's emulation takes the batched path (oracle/fused_dot.hpp), the wgmma FP8
    // cards (blocks of 32, 13-bit window and results) included: the verdicts' cost on the device's own cards.
    if (!s.integer() && *s.acc == f32) {
      CHECK(fused_lanes_apply(card.params, s.k));
      ++fp32_cards;
    }
  }
  CHECK(replayed == 18);
  CHECK(fp32_cards == 10);  // f16, bf16, tf32, e4m3, e5m2 on mma.sync and on wgmma
}
#endif
