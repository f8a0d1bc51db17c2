// tests/suites/diagnose_alpha_beta_test.cpp — the alpha/beta hypotheses of the diagnosis (suites/diagnose/diagnose_epilogue.hpp;
// docs/diagnose.md, "alpha, beta and C"; issue 47): an ab_* case is diagnosed with its alpha, beta and C (no longer as a
// plain GEMM); the CPU models that compute the declared RN(RN(alpha t) + RN(beta c)) are "declared"; kernels written
// here that form D = alpha t + beta C otherwise — beta C added by an fma after RN(alpha t) (fp32 out), D rounded into
// bf16 before beta C is added, beta C computed in bf16 (bf16 out) — are named by theirs, with the order declared (bit for
// bit) and, for the bf16 ones, with the order unknown (the library path: t = RN_f32(A'B'), envelope first). Each named
// variant is first shown to differ from the declared form on the case's data, computed here from the exact A'B' (the
// oracle's correctly rounded reference), independently of the diagnosis.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "generators/generate.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/host_gemm_fixture.hpp"
#include "tests/support/relabelled_kernel.hpp"

using namespace fpcert;

namespace {

/// How the kernel below forms D from its fp32 accumulator t (alpha, beta values of fp32; c a value of the output format).
enum class Form { Declared, FmaBetaC, DRoundedBeforeC, BetaCInOut };

/// D under form f, written with host float arithmetic (-ffp-contract=off: each float operation one rounding) and the
/// oracle's rounding into `out`.
double form_d(Form f, const Format& out, float t, float alpha, float beta, float c, bool with_c) {
  const auto rn_out = [&](double v) { return quantize(out, v); };
  const float at = alpha * t;  // RN(alpha t)
  float s = at;
  switch (f) {
    case Form::Declared:
      if (with_c) s = at + beta * c;  // RN(RN(alpha t) + RN(beta c))
      break;
    case Form::FmaBetaC:
      if (with_c) s = std::fma(beta, c, at);  // RN(RN(alpha t) + beta c): one fp32 rounding after the product's
      break;
    case Form::DRoundedBeforeC: {
      const float d = static_cast<float>(rn_out(at));  // D written in the output format, C added to it after
      if (with_c) s = d + beta * c;
      break;
    }
    case Form::BetaCInOut:
      if (with_c) s = at + static_cast<float>(rn_out(static_cast<double>(beta) * static_cast<double>(c)));  // RN_out(beta c), exact product
      break;
  }
  return rn_out(s);
}

/// A GEMM of `io` inputs and output, fp32 FMA along K from +0 (the epilogue models' declared order), D formed by `f`.
/// Declares the epilogue models' traits with alpha/beta and nothing else of an epilogue (row-major, no batches).
class AbForm final : public test::HostGemmFixture {
 public:
  AbForm(const Format& io, Form f, std::string name) : HostGemmFixture(std::move(name), "alpha/beta form fixture", epilogue_model_traits(io, io, nullptr)), io_(&io), f_(f) {
    t_.layouts = kLayoutsRowMajor;
    t_.alpha_beta = true;
    t_.batched = false;
    t_.epilogue = EpilogueTraits{};
  }
  void run(const GemmOperands& ops) override {
    const bool with_c = ops.beta != 0 && ops.c_in;
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        float t = 0.0f;
        for (std::int64_t p = 0; p < ops.k; ++p) t = std::fma(load(*io_, ops.a, i * ops.lda + p), load(*io_, ops.b, p * ops.ldb + j), t);
        const float c = with_c ? load(*io_, ops.c_in, i * ops.ldc + j) : 0.0f;
        store(*io_, ops.c, i * ops.ldc + j, form_d(f_, *io_, t, static_cast<float>(ops.alpha), static_cast<float>(ops.beta), c, with_c));
      }
  }

 private:
  const Format* io_;
  Form f_;
};

DiagnosisRecord diagnose_case(GemmKernel& k, const std::string& c) {
  DiagnoseKernelOptions o;
  o.cases = {c};
  o.opt.top = 40;
  return diagnose_kernel(k, o);
}

const DiagnosisHypothesis* find(const DiagnosisRecord& r, const std::string& id) {
  for (const DiagnosisHypothesis& h : r.ranked)
    if (h.id == id) return &h;
  return nullptr;
}

/// Whether hypothesis `id` was evaluated: ranked, or listed as a look-alike of a ranked one.
bool evaluated(const DiagnosisRecord& r, const std::string& id) {
  return find(r, id) || std::any_of(r.ranked.begin(), r.ranked.end(), [&](const DiagnosisHypothesis& h) {
           return std::find(h.same_as.begin(), h.same_as.end(), id) != h.same_as.end();
         });
}

/// Elements of certify's case `id` (made for traits t) where form f and the declared form give different D, both
/// computed from t = RN_f32(A'B') of the exact A'B' (oracle/gemm_ref: correctly rounded) with the case's alpha, beta, C.
std::int64_t differing_on_exact(const KernelTraits& t, const std::string& id, Form f) {
  SuiteContext ctx;
  ctx.traits = &t;
  ctx.all = {&t};
  const SuiteInfo* suite = find_suite("certify");
  REQUIRE(suite);
  const std::vector<CaseSpec> cases = suite->cases(ctx);
  const auto cs = std::find_if(cases.begin(), cases.end(), [&](const CaseSpec& x) { return x.id == id; });
  REQUIRE(cs != cases.end());
  REQUIRE(cs->alpha_beta.active);
  const Problem p = generate(cs->spec);
  const std::vector<double> a = rounded_into(p.a.data, *t.a_input, t.input_rounding), b = rounded_into(p.b.data, *t.b_input, t.input_rounding);
  const GemmRef ref = gemm_reference(MatrixView::row_major(a.data(), p.m, p.k), MatrixView::row_major(b.data(), p.k, p.n));
  const std::vector<double> c = alpha_beta_c(cs->alpha_beta, *t.out, p.m, p.n);
  const auto alpha = static_cast<float>(alpha_beta_scalar(cs->alpha_beta.alpha, t)), beta = static_cast<float>(alpha_beta_scalar(cs->alpha_beta.beta, t));
  std::int64_t differ = 0;
  for (std::size_t x = 0; x < c.size(); ++x) {
    const auto tx = static_cast<float>(to_double(f32, round_ref(f32, ref.c[x], Rounder::nearest(f32)).code));
    const auto cx = static_cast<float>(c[x]);
    differ += form_d(f, *t.out, tx, alpha, beta, cx, beta != 0) != form_d(Form::Declared, *t.out, tx, alpha, beta, cx, beta != 0) ? 1 : 0;
  }
  return differ;
}

struct Named {
  const Format* io;
  Form form;
  std::string id;
};

}  // namespace

TEST_CASE("diagnose alpha/beta: the models computing the declared form are declared, with alpha, beta and C") {
  for (const std::string kernel : {"model_gemm_f32_epilogue", "model_gemm_bf16_epilogue"})
    for (const std::string c : {"ab_general", "ab_beta0", "ab_alpha0", "ab_inplace"}) {
      CAPTURE(kernel);
      CAPTURE(c);
      auto k = make_gemm_kernel(kernel);
      REQUIRE(k);
      const DiagnosisRecord r = diagnose_case(*k, c);
      CHECK(r.kind == "declared");
      REQUIRE(!r.ranked.empty());
      CHECK(r.ranked.front().matched == r.ranked.front().elements);
      // alpha and beta are part of the diagnosis now (not a plain GEMM): their hypotheses are in the record
      CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("alpha/beta hypotheses") != std::string::npos; }));
      if (c == "ab_general") {
        CHECK(evaluated(r, "fault=beta_ignored"));
        CHECK(evaluated(r, "ab=fma_beta_c"));
      }
    }
  // The FP8 model (e4m3 in, fp32 accumulation, bf16 out and C) in cuBLASLt's FP8 shape, order declared and unknown.
  for (const bool unknown : {false, true}) {
    CAPTURE(unknown);
    auto inner = make_gemm_kernel("model_gemm_e4m3_scaled");
    REQUIRE(inner);
    KernelTraits t = inner->traits();
    if (unknown) t.sum_order = SummationOrder::unknown();
    test::Relabelled k(std::move(inner), t);
    const DiagnosisRecord r = diagnose_case(k, "ab_general_nt_aligned");
    CHECK(r.kind == "declared");
    REQUIRE(!r.ranked.empty());
    CHECK(r.ranked.front().envelope_holds);
  }
}

TEST_CASE("diagnose alpha/beta: each form of alpha t + beta C written here is named first") {
  for (const Named& x : {Named{&f32, Form::FmaBetaC, "ab=fma_beta_c"}, Named{&bf16, Form::DRoundedBeforeC, "d_rounded_before_c"},
                         Named{&bf16, Form::BetaCInOut, "beta_c_in_out"}}) {
    CAPTURE(x.id);
    AbForm probe(*x.io, x.form, "probe");
    // The case separates the form from the declared one: on the exact A'B', their D differ on some elements.
    const std::int64_t differ = differing_on_exact(probe.traits(), "ab_general", x.form);
    CAPTURE(differ);
    CHECK(differ > 0);
    for (const bool unknown : {false, true}) {
      if (unknown && x.io == &f32) continue;  // fp32 out: t's order shows in every element's bits (the bf16 ones hide it)
      CAPTURE(unknown);
      KernelTraits t = probe.traits();
      if (unknown) t.sum_order = SummationOrder::unknown();
      test::Relabelled k(std::make_unique<AbForm>(*x.io, x.form, x.id), t);
      const DiagnosisRecord r = diagnose_case(k, "ab_general");
      REQUIRE(!r.ranked.empty());
      CHECK(r.ranked.front().id == x.id);
      CHECK(r.kind == "consistent");
      CHECK(r.ranked.front().envelope_holds);
      if (!unknown) CHECK(r.ranked.front().matched == r.ranked.front().elements);
      const DiagnosisHypothesis* d = find(r, "declared");
      REQUIRE(d);
      CHECK(d->matched < d->elements);
    }
  }
}

TEST_CASE("diagnose alpha/beta: the catalogue's beta_ignored injected into the epilogue models is named") {
  for (const std::string kernel : {"model_gemm_f32_epilogue~beta_ignored", "model_gemm_bf16_epilogue~beta_ignored"}) {
    CAPTURE(kernel);
    DiagnoseKernelOptions o;
    o.kernel = kernel;
    o.cases = {"ab_general"};
    const DiagnosisRecord r = diagnose_kernel(o);
    REQUIRE(!r.ranked.empty());
    CHECK(r.kind == "consistent");
    CHECK(top_is(r, fault_hypothesis_id(Fault::BetaIgnored)));
    CHECK(r.ranked.front().matched == r.ranked.front().elements);
    // An alpha/beta case is diagnosed alone: a second case is a usage error.
    o.cases.push_back("uniform");
    CHECK_THROWS_AS(diagnose_kernel(o), InputError);
  }
}

TEST_CASE("diagnose alpha/beta: certify --diagnose diagnoses a failed ab_* case with its alpha and beta") {
  CaseResult failed;
  failed.kernel = "model_gemm_bf16_epilogue", failed.suite = "certify", failed.case_id = "ab_general", failed.status = CaseStatus::Fail;
  RunResult run;
  run.cases.push_back(failed);
  std::vector<std::string> unavailable;
  const std::vector<DiagnosisRecord> ds = diagnose_run_cases(run, unavailable);
  REQUIRE((unavailable.empty() && ds.size() == 1));
  CHECK(ds.front().kind == "declared");  // the model computes the declared form: certify's failure is not its arithmetic's
  const std::vector<std::string>& notes = ds.front().notes;
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("alpha = 0.699999988, beta = -1.29999995") != std::string::npos; }));
}
