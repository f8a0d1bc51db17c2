// tests/suites/epilogue_run_test.cpp — fused GEMM epilogues through the runner (issue 37): the epilogue models' D and
// amax bit for bit against a binary32 loop written here on the inputs the runner handed over, the epilogue_* cases of
// the certify suite (the models pass, kernels without an epilogue are not supported), the runner's own checks on the
// bias and amax buffers, the epi_* faults (each killed for its own fault by the cases that see it, dormant elsewhere,
// not applicable where the kernel cannot take the call), the mutation score of the epilogue models, and the four
// fixtures that pass the old suite and fail the new one (docs/suites.md, "epilogue.*"; docs/epilogue.md, "Faults").
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "generators/generate.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/certify_case.hpp"
#include "tests/support/wrapped_gemm.hpp"

using namespace fpcert;
using fpcert::test::certify_case;
using fpcert::test::failed;
using fpcert::test::WrappedGemm;

namespace {

const char* kEpiCases[] = {"epilogue_bias_col",     "epilogue_bias_row",        "epilogue_relu_bias",  "epilogue_gelu_erf",
                           "epilogue_gelu_tanh",    "epilogue_silu",            "epilogue_ab_bias_gelu", "epilogue_ab_bias_relu", "epilogue_beta0_bias_silu",
                           "epilogue_fp8_scaled",   "epilogue_batch_amax",      "epilogue_transposed",
                           "epilogue_fp8_scaled_nt", "epilogue_fp8_ab_scaled_gelu_nt"};
const char* kEpiModels[] = {"model_gemm_f32_epilogue", "model_gemm_bf16_epilogue", "model_gemm_e4m3_scaled",
                             "model_gemm_e4m3_scaled_e4m3out"};
const Fault kEpiFaults[] = {Fault::EpiBiasIgnored,     Fault::EpiBiasPerRow,    Fault::EpiBiasScaledByAlpha, Fault::EpiActivationDropped,
                            Fault::EpiGeluFormSwapped, Fault::EpiScaleDIgnored, Fault::EpiScaleBIgnored,     Fault::EpiAmaxScaled};

/// The fp32 epilogue as this file computes it (binary32 with -ffp-contract=off; glibc's erff/tanhf/expf through the
/// float overloads): the arithmetic kernels/gemm/cpu/epilogue_models.cpp states, written again from its header.
float act_f32(Activation a, float z) {
  switch (a) {
    case Activation::None: return z;
    case Activation::Relu: return z > 0 ? z : 0.0f;
    case Activation::GeluErf: return 0.5f * (z * (1.0f + std::erf(z * 0.70710678118654752440f)));
    case Activation::GeluTanh:
      return 0.5f * (z * (1.0f + std::tanh(0.79788456080286535588f * (z + 0.044715f * (z * (z * z))))));
    case Activation::Silu: return z / (1.0f + std::exp(-z));
  }
  return z;
}

/// A model whose call loses its amax (asked, never written): the runner's NaN pre-fill stays.
class DropsAmax final : public WrappedGemm {
 public:
  DropsAmax() : WrappedGemm("model_gemm_f32_epilogue", "test_drops_amax", "the fp32 epilogue model, amax never written") {}
  void run(const GemmOperands& ops) override {
    GemmOperands o = ops;
    o.amax = nullptr;
    inner_->run(o);
  }
};

/// A model that writes its bias's first element (an epilogue adding the bias in place).
class WritesBias final : public WrappedGemm {
 public:
  WritesBias() : WrappedGemm("model_gemm_f32_epilogue", "test_writes_bias", "the fp32 epilogue model, bias[0] overwritten after the call") {}
  void run(const GemmOperands& ops) override {
    inner_->run(ops);
    if (ops.bias) *static_cast<float*>(const_cast<void*>(ops.bias)) = 0.0f;
  }
};

/// A model whose amax steps one fp32 ulp up on every second call (D unchanged): an amax that differs run to run.
class DriftingAmax final : public WrappedGemm {
 public:
  DriftingAmax() : WrappedGemm("model_gemm_f32_epilogue", "test_drifting_amax", "the fp32 epilogue model, amax one ulp up on every second call") {}
  void run(const GemmOperands& ops) override {
    inner_->run(ops);
    if (ops.amax && calls_++ % 2 == 1) *static_cast<std::uint32_t*>(ops.amax) += 1;
  }

 private:
  long calls_ = 0;
};

/// The e4m3-output model with saturation where it overflows (NVIDIA's __NV_SATFINITE convention): each NaN it writes
/// for a D beyond e4m3's range becomes +-448 (0x7e / 0xfe), the sign taken from a run with scale_d / 1024 (in range).
/// wrong_sign: +448 whatever D's sign.
class SaturatesE4m3 final : public WrappedGemm {
 public:
  explicit SaturatesE4m3(bool wrong_sign)
      : WrappedGemm("model_gemm_e4m3_scaled_e4m3out", wrong_sign ? "test_e4m3out_saturates_positive" : "test_e4m3out_saturates",
                    "the e4m3-output model saturating to +-448 where it overflows"),
        wrong_sign_(wrong_sign) {}
  void run(const GemmOperands& ops) override {
    REQUIRE(ops.batch <= 1);
    std::vector<std::uint8_t> small(static_cast<std::size_t>(std::max(ops.m, ops.n) * ops.ldc));
    GemmOperands o = ops;
    o.c = small.data();
    o.scale_d = ops.scale_d / 1024;
    o.amax = nullptr;
    inner_->run(o);
    inner_->run(ops);
    auto* d = static_cast<std::uint8_t*>(ops.c);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        const auto x = static_cast<std::size_t>(ops.c_layout == Layout::RowMajor ? i * ops.ldc + j : j * ops.ldc + i);
        if ((d[x] & 0x7f) == 0x7f && (small[x] & 0x7f) != 0x7f) d[x] = wrong_sign_ ? 0x7e : static_cast<std::uint8_t>((small[x] & 0x80) | 0x7e);
      }
  }

 private:
  bool wrong_sign_;
};

/// A case of the FP8 epilogue on p (FP8 scaling scale_a = 1.37, scale_b = 0.61, scale_d; bias per `bk` from seed 12;
/// `act`; amax asked), as the certify suite's epilogue_fp8_scaled with other parameters.
CaseSetup fp8_case(const Problem& p, const GemmRef& ref, const char* id, BiasKind bk, Activation act, double scale_d) {
  CaseSetup s;
  s.suite = "epilogue_run_test";
  s.case_id = id;
  s.problem = &p;
  s.ref = &ref;
  s.epilogue.active = true;
  s.epilogue.bias = bk;
  s.epilogue.activation = act;
  s.epilogue.fp8_scaling = true;
  s.epilogue.scale_a = 1.37;
  s.epilogue.scale_b = 0.61;
  s.epilogue.scale_d = scale_d;
  s.epilogue.amax = true;
  s.epilogue.bias_seed = 12;
  return s;
}

/// run_case on the host; D's values into *out when out is given.
CaseResult run_host(GemmKernel& k, const CaseSetup& s, std::vector<double>* out = nullptr) {
  RunOptions o;
  o.output = out;
  auto api = make_host_api();
  return run_case(k, s, *api, o);
}

}  // namespace

TEST_CASE("the epilogue models' D and amax equal a binary32 loop written here, bit for bit") {
  const Problem p = generate("uniform:m=9,n=7,k=41,seed=5");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const Activation act : {Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu}) {
    for (const BiasKind bk : {BiasKind::PerRow, BiasKind::PerColumn}) {
      INFO(to_string(act), " bias per ", to_string(bk));
      auto k = make_gemm_kernel("model_gemm_f32_epilogue");
      CaseSetup s = fp8_case(p, ref, "epilogue_model_bits", bk, act, 2.7);
      s.alpha_beta = AlphaBetaCase{true, 0.7, -1.3, false, 11};
      std::vector<double> out;
      const CaseResult r = run_host(*k, s, &out);
      INFO(r.reason);
      CHECK(r.status == CaseStatus::Pass);
      REQUIRE(out.size() == 63);
      // The inputs as the runner hands them over: C and the bias from their seeds, the scalars rounded into fp32.
      const std::vector<double> c = alpha_beta_c(s.alpha_beta, f32, 9, 7);
      const std::vector<double> bias = epilogue_bias(s.epilogue, f32, 9, 7);
      REQUIRE(bias.size() == (bk == BiasKind::PerRow ? 9u : 7u));
      const float alpha = (0.7f * 1.37f) * 0.61f, beta = -1.3f, scale_d = 2.7f;
      float amax = 0;
      for (std::int64_t i = 0; i < 9; ++i)
        for (std::int64_t j = 0; j < 7; ++j) {
          float acc = 0;
          for (std::int64_t t = 0; t < 41; ++t) acc = std::fma(static_cast<float>(p.a(i, t)), static_cast<float>(p.b(t, j)), acc);
          float z = alpha * acc + beta * static_cast<float>(c[static_cast<std::size_t>(i * 7 + j)]);
          z = z + static_cast<float>(bias[static_cast<std::size_t>(bk == BiasKind::PerRow ? i : j)]);
          const float y = act_f32(act, z);
          amax = std::max(amax, std::fabs(y));
          const float want = y * scale_d;
          CHECK(std::bit_cast<std::uint32_t>(static_cast<float>(out[static_cast<std::size_t>(i * 7 + j)])) == std::bit_cast<std::uint32_t>(want));
        }
      // The amax the runner read back is the one in its flag; the check passed on it.
      const std::string want_amax = fmt::format("amax = {:.9g} ", amax);
      CHECK(std::any_of(r.flags.begin(), r.flags.end(), [&](const std::string& f) { return f.find(want_amax) != std::string::npos; }));
      CHECK_FALSE(failed(r, CheckKind::Amax));
    }
  }
}

TEST_CASE("an e4m3 D beyond its range: NaN (the model) or +-448 of D's sign (saturation) pass, +-448 of the other sign fails") {
  // scale_d = 200 takes D = scale_d (alpha' AB + bias) well beyond 448 on both sides (|AB| ~ 2 at K = 41): the model
  // writes e4m3's NaN there (its positive one is also the runner's pre-fill: not "never written" where D overflows).
  const Problem p = generate("uniform:m=9,n=7,k=41,seed=5");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  const CaseSetup s = fp8_case(p, ref, "epilogue_e4m3_overflow", BiasKind::PerColumn, Activation::None, 200);
  const auto run = [&](GemmKernel& k, std::vector<double>* out) { return run_host(k, s, out); };
  auto model = make_gemm_kernel("model_gemm_e4m3_scaled_e4m3out");
  std::vector<double> d;
  const CaseResult r = run(*model, &d);
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  CHECK_FALSE(failed(r, CheckKind::Unwritten));
  REQUIRE(d.size() == 63);
  const auto nans = std::count_if(d.begin(), d.end(), [](double v) { return std::isnan(v); });
  const auto big = std::count_if(d.begin(), d.end(), [](double v) { return std::fabs(v) > 64; });
  CHECK(nans >= 5);  // overflow happens, on enough elements to matter
  CHECK(big >= 5);   // and the rest is no all-NaN output
  SaturatesE4m3 sat(false), positive(true);
  const CaseResult rs = run(sat, nullptr);
  INFO(rs.reason);
  CHECK(rs.status == CaseStatus::Pass);
  CHECK(std::any_of(rs.flags.begin(), rs.flags.end(), [&](const std::string& f) {
    return f.starts_with(fmt::format("saturated: {} element(s)", nans));
  }));
  const CaseResult rp = run(positive, nullptr);
  INFO(rp.reason);
  CHECK(rp.status == CaseStatus::Fail);
  CHECK(failed(rp, CheckKind::Envelope));
}

TEST_CASE("certify's epilogue cases: the epilogue models pass every one, kernels without an epilogue are not supported") {
  for (const char* id : kEpiCases) {
    INFO(id);
    for (const char* kn : kEpiModels) {
      const CaseResult s = certify_case(kn, id);
      INFO(kn, ": ", s.reason);
      CHECK(s.status == CaseStatus::Pass);
      CHECK_FALSE(s.vacuous);
      CHECK(std::any_of(s.coverage.begin(), s.coverage.end(), [](const std::string& c) { return c.starts_with("epilogue."); }));
    }
    for (const char* kn : {"model_gemm_f32", "model_gemm_f32_strided"}) {
      const CaseResult r = certify_case(kn, id);
      CHECK(r.status == CaseStatus::NotSupported);
      CHECK_FALSE(r.reason.empty());
    }
  }
}

TEST_CASE("an unfused linear then activation (round_before_act): the model passes, the fused bound is no excuse") {
  KernelTraits t = epilogue_model_traits(bf16, bf16, &bf16);
  t.epilogue.round_before_act = true;
  register_kernel("test_bf16_epilogue_unfused", Backend::Cpu, false, [t]() -> std::unique_ptr<GemmKernel> {
    return make_epilogue_model("test_bf16_epilogue_unfused", "bf16 epilogue model, Z rounded to bf16 before the activation", t);
  });
  for (const char* id : {"epilogue_gelu_erf", "epilogue_silu", "epilogue_ab_bias_gelu", "epilogue_batch_amax"}) {
    const CaseResult r = certify_case("test_bf16_epilogue_unfused", id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
}

TEST_CASE("the runner's checks on the epilogue's buffers: amax never written, the bias overwritten") {
  register_kernel("test_drops_amax", Backend::Cpu, false, [] { return std::make_unique<DropsAmax>(); });
  register_kernel("test_writes_bias", Backend::Cpu, false, [] { return std::make_unique<WritesBias>(); });
  CHECK(certify_case("test_drops_amax", "epilogue_bias_col").status == CaseStatus::Pass);  // no amax asked
  const CaseResult a = certify_case("test_drops_amax", "epilogue_fp8_scaled");
  CHECK(a.status == CaseStatus::Fail);
  CHECK(failed(a, CheckKind::Amax));  // the NaN pre-fill is outside every interval
  CHECK_FALSE(failed(a, CheckKind::Envelope));
  // One ulp of amax is inside the interval (the checked run passes it), but a later run's amax must equal it bit for bit.
  register_kernel("test_drifting_amax", Backend::Cpu, false, [] { return std::make_unique<DriftingAmax>(); });
  const CaseResult d = certify_case("test_drifting_amax", "epilogue_fp8_scaled");
  INFO(d.reason);
  CHECK(d.status == CaseStatus::Fail);
  CHECK(failed(d, CheckKind::Nondeterministic));
  CHECK_FALSE(failed(d, CheckKind::Envelope));
  CHECK(certify_case("test_writes_bias", "epilogue_gelu_erf").status == CaseStatus::Pass);  // no bias passed
  const CaseResult b = certify_case("test_writes_bias", "epilogue_bias_col");
  CHECK(b.status == CaseStatus::Fail);
  CHECK(failed(b, CheckKind::InputsModified));
}

TEST_CASE("the epi_* faults: in the catalogue, not applicable where the kernel cannot take the call") {
  for (Fault f : kEpiFaults) {
    const FaultInfo& fi = fault_info(f);
    INFO(fi.id);
    CHECK(fi.id.starts_with("epi_"));
    CHECK(find_fault(fi.id) == &fi);
    CHECK(fi.operation == Operation::Gemm);
    const std::vector<CheckKind> want = f == Fault::EpiAmaxScaled ? std::vector<CheckKind>{CheckKind::Amax} : std::vector<CheckKind>{CheckKind::Envelope};
    CHECK(fi.expected == want);
    CHECK_FALSE(fault_not_applicable(f, make_gemm_kernel("model_gemm_f32_strided")->traits()).empty());
    CHECK(fault_not_applicable(f, make_gemm_kernel("model_gemm_f32_epilogue")->traits()).empty());
  }
  // One bias kind, one GELU form, no FP8 scaling, no amax: the faults that need the other are not applicable.
  KernelTraits t = make_gemm_kernel("model_gemm_f32_epilogue")->traits();
  t.epilogue.bias = bit(BiasKind::PerColumn);
  t.epilogue.activations = bit(Activation::GeluTanh);
  t.epilogue.fp8_scaling = false;
  t.epilogue.amax = false;
  CHECK_FALSE(fault_not_applicable(Fault::EpiBiasPerRow, t).empty());
  CHECK_FALSE(fault_not_applicable(Fault::EpiGeluFormSwapped, t).empty());
  CHECK_FALSE(fault_not_applicable(Fault::EpiScaleDIgnored, t).empty());
  CHECK_FALSE(fault_not_applicable(Fault::EpiAmaxScaled, t).empty());
  CHECK(fault_not_applicable(Fault::EpiBiasIgnored, t).empty());
  CHECK(fault_not_applicable(Fault::EpiBiasScaledByAlpha, t).empty());  // alpha/beta declared
  CHECK(fault_not_applicable(Fault::EpiActivationDropped, t).empty());
}

TEST_CASE("each epi_* fault: dormant on the old suite's call, killed for its own fault by the cases that see it") {
  struct Expect {
    Fault f;
    std::vector<const char*> killed_by;
    std::vector<const char*> dormant_on;
  };
  const std::vector<Expect> all = {
      {Fault::EpiBiasIgnored, {"epilogue_bias_col", "epilogue_bias_row", "epilogue_fp8_scaled"}, {"epilogue_gelu_erf"}},
      {Fault::EpiBiasPerRow, {"epilogue_bias_col", "epilogue_bias_row", "epilogue_transposed"}, {"epilogue_silu"}},
      {Fault::EpiBiasScaledByAlpha, {"epilogue_ab_bias_gelu", "epilogue_ab_bias_relu", "epilogue_beta0_bias_silu", "epilogue_fp8_scaled"}, {"epilogue_bias_col"}},
      {Fault::EpiActivationDropped, {"epilogue_relu_bias", "epilogue_gelu_erf", "epilogue_gelu_tanh", "epilogue_silu"}, {"epilogue_bias_row"}},
      {Fault::EpiGeluFormSwapped, {"epilogue_gelu_erf", "epilogue_gelu_tanh", "epilogue_ab_bias_gelu"}, {"epilogue_silu"}},
      {Fault::EpiScaleDIgnored, {"epilogue_fp8_scaled"}, {"epilogue_batch_amax"}},
      {Fault::EpiScaleBIgnored, {"epilogue_fp8_scaled"}, {"epilogue_bias_col"}},
      {Fault::EpiAmaxScaled, {"epilogue_fp8_scaled"}, {"epilogue_batch_amax"}},
  };
  for (const Expect& x : all) {
    const std::string mu = register_gemm_mutant("model_gemm_f32_epilogue", x.f);
    INFO(mu);
    for (const char* id : {"uniform", "ab_beta0", "batch_strided"}) {
      const CaseResult r = certify_case(mu, id);
      INFO(id, ": ", r.reason);
      CHECK(r.status == CaseStatus::Pass);
    }
    for (const char* id : x.dormant_on) {
      const CaseResult r = certify_case(mu, id);
      INFO(id, ": ", r.reason);
      CHECK(r.status == CaseStatus::Pass);
    }
    for (const char* id : x.killed_by) {
      const CaseResult r = certify_case(mu, id);
      INFO(id, ": ", r.reason);
      CHECK(r.status == CaseStatus::Fail);
      CHECK(std::any_of(fault_info(x.f).expected.begin(), fault_info(x.f).expected.end(), [&](CheckKind k) { return failed(r, k); }));
    }
  }
}

TEST_CASE("mutation score of the epilogue models over the certify suite: every applicable epi_* fault killed for its own fault") {
  std::printf("%-26s %-26s %-15s %s\n", "model", "fault", "outcome", "case");
  for (const char* kn : kEpiModels) {
    MutationOptions mo;
    mo.faults.assign(std::begin(kEpiFaults), std::end(kEpiFaults));
    mo.run.only_case = "epilogue_*";  // the epi_* faults change nothing outside an epilogue call (the test above)
    const MutationScore s = run_mutation(*find_suite("certify"), kn, mo);
    INFO(kn);
    CHECK(s.invalid_cases.empty());
    for (const MutantResult& m : s.mutants)
      std::printf("%-26s %-26s %-15s %s\n", kn, m.fault.c_str(), std::string(to_string(m.outcome)).c_str(), m.case_id.c_str());
    std::printf("%-26s score %d / %d applicable (%.0f %%)\n", kn, s.count(MutantOutcome::Killed), s.total(), 100 * s.score());
    CHECK(s.total() == 8);  // every epi_* fault applies to a model that takes every epilogue
    CHECK(s.score() == 1.0);
  }
}

TEST_CASE("the epilogue fixtures: each passes the certify suite without the epilogue cases and fails an epilogue case") {
  struct Fixture {
    const char* name;
    const char* honest;   // the correct model it is a copy of
    const char* fails;    // an epilogue case it must fail
    std::vector<CheckKind> kinds;  // for one of these reasons
  };
  for (const Fixture& x : {Fixture{"mutant_gemm_f32_epilogue_gelu_tanh_for_erf", "model_gemm_f32_epilogue", "epilogue_gelu_erf", {CheckKind::Envelope}},
                           Fixture{"mutant_gemm_f32_epilogue_bias_per_row", "model_gemm_f32_epilogue", "epilogue_bias_col", {CheckKind::Envelope}},
                           Fixture{"mutant_gemm_e4m3_scaled_amax_scaled", "model_gemm_e4m3_scaled", "epilogue_fp8_scaled", {CheckKind::Amax}},
                           Fixture{"mutant_gemm_e4m3_scaled_e4m3out_scale_d_twice", "model_gemm_e4m3_scaled_e4m3out", "epilogue_fp8_scaled",
                                   {CheckKind::Envelope}},
                           Fixture{"mutant_gemm_f32_epilogue_beta0_reads_c", "model_gemm_f32_epilogue", "epilogue_beta0_bias_silu",
                                   {CheckKind::Nonfinite, CheckKind::Envelope}}}) {
    INFO(x.name);
    REQUIRE(make_gemm_kernel(x.name));
    CHECK(make_gemm_kernel(x.name)->is_mutant());
    const RunResult got = run_suite(*find_suite("certify"), {x.name}, {});
    const RunResult want = run_suite(*find_suite("certify"), {x.honest}, {});
    REQUIRE(got.cases.size() == want.cases.size());
    int old_cases = 0, failed_new = 0;
    for (std::size_t c = 0; c < got.cases.size(); ++c) {
      const CaseResult& g = got.cases[c];
      INFO(g.case_id, ": ", g.reason);
      CHECK(g.case_id == want.cases[c].case_id);
      CHECK(want.cases[c].status != CaseStatus::Fail);  // the honest model passes every case it takes
      if (!g.case_id.starts_with("epilogue_")) {
        ++old_cases;
        CHECK(g.status == want.cases[c].status);
        CHECK(g.status != CaseStatus::Fail);
      } else {
        failed_new += g.status == CaseStatus::Fail;
      }
      if (g.case_id == x.fails) {
        CHECK(g.status == CaseStatus::Fail);
        CHECK(std::any_of(x.kinds.begin(), x.kinds.end(), [&](CheckKind k) { return failed(g, k); }));
      }
    }
    CHECK(old_cases > 50);
    CHECK(failed_new >= 1);
  }
}
