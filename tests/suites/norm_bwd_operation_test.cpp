// tests/suites/norm_bwd_operation_test.cpp — LayerNorm / RMSNorm backward through the runner (suites/ops/norm_bwd/): every
// CPU model passes every case of norm_backward with a non-vacuous bound on dx and on dgamma/dbeta, the fault injectors
// reach a mutation score of 100 % on every model, each mutant killed for its own fault, and an all-zeros backward fails.
// The expected verdicts come from the faults' definitions, not from the models' output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "kernels/norm/norm_backward_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {
namespace {

std::vector<std::string> cpu_models() {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::NormBackward))
    if (make_norm_bwd_kernel(n)->backend() == Backend::Cpu) out.push_back(n);
  return out;
}

double achieved(const CaseResult& c, const char* key) { return c.achieved.count(key) ? c.achieved.at(key) : -1.0; }

}  // namespace

TEST_CASE("norm_backward suite: every CPU model passes, the bound holds and is not vacuous") {
  const SuiteInfo* s = find_suite("norm_backward");
  REQUIRE(s);
  CHECK(s->operation == Operation::NormBackward);
  const auto models = cpu_models();
  REQUIRE(models.size() >= 5);  // model_layernorm_bwd_{f32,f16,bf16}, model_rmsnorm_bwd_{f16,bf16}
  for (const std::string& k : models) {
    CAPTURE(k);
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    REQUIRE(r.cases.size() >= 12);
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CAPTURE(c.envelope.arithmetic);
      CHECK(c.status == CaseStatus::Pass);
      CHECK(!c.vacuous);
      std::printf("%s %s: dx err/bound %.3g, ulp max %.0f, vacuous dx %g, dgamma/dbeta %g\n", k.c_str(), c.case_id.c_str(),
                  c.metrics.err_frac_max, c.metrics.ulp_max, achieved(c, "norm_bwd_vacuous_dx"), achieved(c, "norm_bwd_vacuous_params"));
      // Not vacuous: most graded dx elements have a bound below |exact dx| (the cancellation cases included). A LayerNorm
      // row of one entry has xh = 0 and g = A: dx = 0 exactly, where every bound is "vacuous" (>= |0|); dgamma/dbeta
      // carry the case's evidence there.
      const bool zero_dx = c.case_id == "uniform_n1" && make_norm_bwd_kernel(k)->norm_bwd_traits().kind == NormKind::LayerNorm;
      if (c.case_id != "specials" && !zero_dx) CHECK(achieved(c, "norm_bwd_vacuous_dx") < 0.5 * static_cast<double>(c.m * c.n));
    }
    operation_runner(Operation::NormBackward).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("norm_backward mutation: 100 % of the applicable faults killed on every CPU model, each for its own fault") {
  check_builtins_mutation("norm_backward_quick", cpu_models());
}

TEST_CASE("norm_backward: the all-zeros output fails, and an RMSNorm has no mean term") {
  const SuiteInfo* s = find_suite("norm_backward");
  REQUIRE(s);
  const std::string zeros = register_mutant("model_layernorm_bwd_f32", Fault::NbwdZeros);
  SuiteRunOptions o;
  o.only_case = "uniform_n1000";
  RunResult r = run_suite(*s, {zeros}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::Fail);
  CHECK(std::any_of(r.cases[0].checks.begin(), r.cases[0].checks.end(),
                    [](const CheckResult& c) { return c.kind == CheckKind::Envelope && !c.passed; }));
  const MutationScore m = run_mutation(*find_suite("norm_backward_quick"), "model_rmsnorm_bwd_bf16", MutationOptions{});
  for (const MutantResult& x : m.mutants)
    if (x.fault == "nbwd_no_mean_term") CHECK(x.outcome == MutantOutcome::NotApplicable);
}

}  // namespace fpcert
