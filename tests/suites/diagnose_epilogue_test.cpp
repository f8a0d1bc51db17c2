// tests/suites/diagnose_epilogue_test.cpp — the diagnosis of fused GEMM epilogues (suites/diagnose/diagnose_epilogue.hpp;
// docs/diagnose.md, "Epilogues"): the CPU epilogue models are "declared", each registered fixture is named by the
// hypothesis that describes its flaw, and two kernels written here independently of the hypotheses' emulation — GELU
// as x sigmoid(1.702 x), and Z rounded into bf16 before the activation under a declaration that says otherwise — are
// named by theirs, with the order declared (the bitwise emulator's accumulator) and with the order unknown (RN_f32(Z),
// ranked by the envelope first, as a library kernel is). The cases are the certify suite's epilogue cases: uniform
// [-1, 1) inputs with K = 67, whose fp32 sums round (acc=rn_f32, the correctly rounded accumulator, misses elements of
// the sequential-FMA models: checked below) and whose bf16 outputs round.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "oracle/round.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "tests/support/host_gemm_fixture.hpp"
#include "tests/support/relabelled_kernel.hpp"

using namespace fpcert;

namespace {

DiagnosisRecord diagnose_case(GemmKernel& k, const std::string& c) {
  DiagnoseKernelOptions o;
  o.cases = {c};
  o.opt.top = 40;
  return diagnose_kernel(k, o);
}

DiagnosisRecord diagnose_case(const std::string& kernel, const std::string& c) {
  auto k = make_gemm_kernel(kernel);
  REQUIRE(k);
  return diagnose_case(*k, c);
}

const DiagnosisHypothesis* find(const DiagnosisRecord& r, const std::string& id) {
  for (const DiagnosisHypothesis& h : r.ranked)
    if (h.id == id) return &h;
  return nullptr;
}

/// A kernel that runs another and declares other traits.
using Declaring = test::Relabelled;

/// GELU as x sigmoid(1.702 x), written here with host float arithmetic: fp32 FMA along K from +0, then
/// y = z (1 / (1 + exp(-1.702 z))), D = RN_out(y) (fp32, or bf16 through the oracle's rounding). Row-major operands,
/// no bias, no alpha/beta (the traits declare none of them).
class SigmoidGelu final : public test::HostGemmFixture {
 public:
  explicit SigmoidGelu(const Format& io) : HostGemmFixture("fixture_gelu_sigmoid", "GELU as x sigmoid(1.702 x)", epilogue_model_traits(io, io, nullptr)), io_(&io) {
    t_.layouts = kLayoutsRowMajor;
    t_.alpha_beta = false;
    t_.batched = false;
    t_.epilogue.bias = 0;
    t_.epilogue.fp8_scaling = false;
    t_.epilogue.amax = false;
  }
  void run(const GemmOperands& ops) override {
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        float z = 0.0f;
        for (std::int64_t p = 0; p < ops.k; ++p) z = std::fma(load(*io_, ops.a, i * ops.lda + p), load(*io_, ops.b, p * ops.ldb + j), z);
        const float y = ops.activation == Activation::None ? z : z * (1.0f / (1.0f + std::exp(-1.702f * z)));
        store(*io_, ops.c, i * ops.ldc + j, y);
      }
  }

 private:
  const Format* io_;
};

}  // namespace

TEST_CASE("diagnose epilogue: the CPU epilogue models are their declared epilogue, bit for bit") {
  for (const char* kernel : {"model_gemm_f32_epilogue", "model_gemm_bf16_epilogue"})
    for (const char* c : {"epilogue_gelu_erf", "epilogue_gelu_tanh", "epilogue_silu", "epilogue_ab_bias_gelu", "epilogue_bias_row"}) {
      CAPTURE(kernel);
      CAPTURE(c);
      const DiagnosisRecord r = diagnose_case(kernel, c);
      CHECK(r.kind == "declared");
      REQUIRE(!r.ranked.empty());
      CHECK(r.ranked.front().id == "declared");
      CHECK(r.ranked.front().matched == r.ranked.front().elements);
      CHECK(r.ranked.front().envelope_holds);
    }
  // The same models declared with an unknown order (a library's declaration): the hypotheses start from RN_f32(Z), which
  // the sequential FMA misses on some elements, and the declared epilogue's envelope holds everywhere: still "declared".
  for (const char* kernel : {"model_gemm_f32_epilogue", "model_gemm_bf16_epilogue"})
    for (const char* c : {"epilogue_gelu_erf", "epilogue_gelu_tanh", "epilogue_silu", "epilogue_ab_bias_gelu"}) {
      CAPTURE(kernel);
      CAPTURE(c);
      auto inner = make_gemm_kernel(kernel);
      KernelTraits t = inner->traits();
      t.sum_order = SummationOrder::unknown();
      test::Relabelled k(std::move(inner), t);
      const DiagnosisRecord r = diagnose_case(k, c);
      CHECK(r.kind == "declared");
      REQUIRE(!r.ranked.empty());
      CHECK(r.ranked.front().envelope_holds);
      const DiagnosisHypothesis* d = find(r, "declared");
      REQUIRE(d);
      CHECK(d->envelope_holds);
    }
  // Inputs that force rounding: the fp32 model's sequential FMA differs from the correctly rounded Z on some elements
  // (so the declared order is what matches), and GELU's erf and tanh forms differ after bf16's rounding.
  const DiagnosisRecord f = diagnose_case("model_gemm_f32_epilogue", "epilogue_gelu_erf");
  const DiagnosisHypothesis* rn = find(f, "acc=rn_f32");
  REQUIRE(rn);
  CHECK(rn->matched < rn->elements);
  const DiagnosisRecord b = diagnose_case("model_gemm_bf16_epilogue", "epilogue_gelu_erf");
  const DiagnosisHypothesis* th = find(b, "act=gelu_tanh");
  REQUIRE(th);
  CHECK(th->matched < th->elements);
  CHECK(!th->envelope_holds);  // the tanh form lies outside the erf form's envelope somewhere (up to 4.7e-4 apart)
}

TEST_CASE("diagnose epilogue: each registered fixture is named by its flaw") {
  struct Row {
    const char *kernel, *c, *top;
  };
  for (const Row& x : {Row{"mutant_gemm_f32_epilogue_gelu_tanh_for_erf", "epilogue_gelu_erf", "act=gelu_tanh"},
                       Row{"mutant_gemm_f32_epilogue_gelu_tanh_for_erf", "epilogue_ab_bias_gelu", "act=gelu_tanh"},
                       Row{"mutant_gemm_f32_epilogue_bias_per_row", "epilogue_bias_col", "bias_per_row"},
                       Row{"mutant_gemm_f32_epilogue_bias_per_row", "epilogue_relu_bias", "bias_per_row"}}) {
    CAPTURE(x.kernel);
    CAPTURE(x.c);
    const DiagnosisRecord r = diagnose_case(x.kernel, x.c);
    REQUIRE(!r.ranked.empty());
    CHECK(r.kind == "consistent");
    CHECK(r.ranked.front().id == x.top);
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
    const DiagnosisHypothesis* d = find(r, "declared");
    REQUIRE(d);
    CHECK(!d->envelope_holds);
    CHECK(std::find(r.failed_checks.begin(), r.failed_checks.end(), "envelope") != r.failed_checks.end());
  }
  // C read with beta = 0 (NaN everywhere): no epilogue arithmetic explains it, and the runner's checks say what failed.
  const DiagnosisRecord nan = diagnose_case("mutant_gemm_f32_epilogue_beta0_reads_c", "epilogue_beta0_bias_silu");
  CHECK(nan.kind != "declared");
  CHECK(nan.kind != "consistent");
  CHECK(nan.verdict.find("no known epilogue arithmetic explains it") != std::string::npos);
  CHECK(std::find(nan.failed_checks.begin(), nan.failed_checks.end(), "nonfinite") != nan.failed_checks.end());
  // The FP8 model reporting the amax of the scaled result: D as declared, amax named apart.
  const DiagnosisRecord a = diagnose_case("mutant_gemm_e4m3_scaled_amax_scaled", "epilogue_fp8_scaled");
  CHECK(a.kind == "consistent");
  CHECK(a.verdict.find("[amax_scaled]") != std::string::npos);
  const DiagnosisRecord ok = diagnose_case("model_gemm_e4m3_scaled", "epilogue_fp8_scaled");
  CHECK(ok.kind == "declared");
  CHECK(ok.verdict.find("amax_scaled") == std::string::npos);
}

TEST_CASE("diagnose epilogue: GELU computed as x sigmoid(1.702 x) is named the sigmoid form, order declared or not") {
  for (const Format* io : {&f32, &bf16})
    for (const char* c : {"epilogue_gelu_tanh", "epilogue_gelu_erf"})
      for (const bool unknown : {false, true}) {
        CAPTURE(io->tag);
        CAPTURE(c);
        CAPTURE(unknown);
        SigmoidGelu inner(*io);
        KernelTraits t = inner.traits();
        if (unknown) t.sum_order = SummationOrder::unknown();  // a library kernel: the order is not declared
        Declaring k(std::make_unique<SigmoidGelu>(*io), t);
        const DiagnosisRecord r = diagnose_case(k, c);
        REQUIRE(!r.ranked.empty());
        CHECK(r.ranked.front().id == "act=gelu_sigmoid");
        CHECK(r.kind == "consistent");
        CHECK(r.ranked.front().envelope_holds);
        if (!unknown) CHECK(r.ranked.front().matched == r.ranked.front().elements);
        const DiagnosisHypothesis* d = find(r, "declared");
        REQUIRE(d);
        CHECK(!d->envelope_holds);  // 1.702 x sigmoid is up to 0.02 from GELU: far outside the declared form's envelope
      }
}

namespace {

/// A bf16 epilogue model computing with one more rounding (`computes`), run on `kase` declared without it (its order
/// declared, then unknown): the top hypothesis is `named`, "consistent", bit for bit where the order is declared. The
/// same model declaring what it does is "declared" on `honest_case`, and `opposite` is a hypothesis of one change.
void check_rounding_named(const KernelTraits& computes, const char* what, const char* kase, const char* named, const char* honest_case,
                          const char* opposite) {
  for (const bool unknown : {false, true}) {
    CAPTURE(unknown);
    KernelTraits declared = epilogue_model_traits(bf16, bf16, &bf16);
    if (unknown) declared.sum_order = SummationOrder::unknown();
    Declaring k(make_epilogue_model("rounds", what, computes), declared);
    const DiagnosisRecord r = diagnose_case(k, kase);
    REQUIRE(!r.ranked.empty());
    CHECK(r.ranked.front().id == named);
    CHECK(r.kind == "consistent");
    if (!unknown) CHECK(r.ranked.front().matched == r.ranked.front().elements);
  }
  Declaring honest(make_epilogue_model("rounds", "declared", computes), computes);
  const DiagnosisRecord r = diagnose_case(honest, honest_case);
  CHECK(r.kind == "declared");
  CHECK(find(r, opposite) != nullptr);
}

}  // namespace

TEST_CASE("diagnose epilogue: Z rounded into bf16 before the activation, declared without it") {
  KernelTraits computes = epilogue_model_traits(bf16, bf16, &bf16);
  computes.epilogue.round_before_act = true;
  check_rounding_named(computes, "Z rounded into bf16 before the activation", "epilogue_gelu_tanh", "z_rounded_to_out", "epilogue_silu",
                       "z_not_rounded_to_out");
}

TEST_CASE("diagnose epilogue: alpha acc + beta C rounded into bf16 before the bias (cuBLASLt's), declared without it") {
  KernelTraits computes = epilogue_model_traits(bf16, bf16, &bf16);
  computes.epilogue.round_before_bias = true;
  check_rounding_named(computes, "alpha acc + beta C rounded into bf16 before the bias", "epilogue_ab_bias_relu", "ab_rounded_before_bias",
                       "epilogue_ab_bias_relu", "ab_not_rounded_before_bias");
}

TEST_CASE("diagnose epilogue: certify --diagnose diagnoses a failed epilogue case") {
  RunResult run;
  CaseResult c;
  c.kernel = "mutant_gemm_f32_epilogue_gelu_tanh_for_erf";
  c.suite = "certify";
  c.case_id = "epilogue_gelu_erf";
  c.status = CaseStatus::Fail;
  run.cases = {c};
  std::vector<std::string> unavailable;
  const std::vector<DiagnosisRecord> ds = diagnose_run_cases(run, unavailable);
  CHECK(unavailable.empty());
  REQUIRE(ds.size() == 1);
  REQUIRE(!ds.front().ranked.empty());
  CHECK(ds.front().ranked.front().id == "act=gelu_tanh");
  // The record is the GEMM diagnosis's: its JSON reads back as it was written (the report's input).
  const DiagnosisRecord back = diagnosis_from_json(diagnosis_to_json(ds.front()));
  CHECK(back.kind == ds.front().kind);
  CHECK(back.ranked.size() == ds.front().ranked.size());
  CHECK(back.ranked.front().matched == ds.front().ranked.front().matched);
  // An epilogue case is diagnosed alone: a second case is a usage error.
  DiagnoseKernelOptions o;
  o.kernel = "model_gemm_f32_epilogue";
  o.cases = {"epilogue_gelu_erf", "uniform"};
  CHECK_THROWS_AS(diagnose_kernel(o), InputError);
}
