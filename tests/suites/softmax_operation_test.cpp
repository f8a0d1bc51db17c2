// tests/suites/softmax_operation_test.cpp — softmax through the runner (suites/ops/softmax/): every CPU model passes every
// case of the softmax suite it supports with a non-vacuous bound (the unshifted one declines the cases beyond its
// domain), the fault injectors reach a mutation score of 100 % on every model, each mutant killed for its own fault,
// and an all-zeros "softmax" fails. The expected verdicts come from the faults' definitions, not from the models' output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "kernels/softmax/softmax_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

std::vector<std::string> cpu_models() {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::Softmax))
    if (make_softmax_kernel(n)->backend() == Backend::Cpu) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("softmax suite: every CPU model passes what it supports, with evidence") {
  const SuiteInfo* s = find_suite("softmax");
  REQUIRE(s);
  CHECK(s->operation == Operation::Softmax);
  const auto models = cpu_models();
  REQUIRE(models.size() >= 6);
  for (const std::string& k : models) {
    CAPTURE(k);
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    REQUIRE(r.cases.size() >= 12);
    int passed = 0;
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CAPTURE(c.envelope.arithmetic);
      const bool unshifted = make_softmax_kernel(k)->softmax_traits().arith.shift == SoftmaxShift::Unshifted;
      if (unshifted && (c.case_id == "near_overflow" || c.case_id.rfind("spread_", 0) == 0)) {
        CHECK(c.status == CaseStatus::NotSupported);  // exp(z) beyond fp32's range: the declared domain
        continue;
      }
      CHECK(c.status == CaseStatus::Pass);
      passed += c.status == CaseStatus::Pass;
      std::printf("%s %s: err/bound %.3g, ulp max %.0f, vacuous %g\n", k.c_str(), c.case_id.c_str(), c.metrics.err_frac_max, c.metrics.ulp_max,
                  c.achieved.count("softmax_vacuous_elements") ? c.achieved.at("softmax_vacuous_elements") : -1.0);
    }
    CHECK(passed >= 9);
    operation_runner(Operation::Softmax).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("softmax mutation: 100 % of the applicable faults killed on every CPU model, each for its own fault") {
  // softmax_quick holds a killer of every fault (near_overflow, uniform_n1000's growing running max, mask_rows); the full
  // suite's scores (also 100 %) are what `fpcert certify --kernel K --suite softmax` prints (docs/softmax.md).
  const SuiteInfo* s = find_suite("softmax_quick");
  REQUIRE(s);
  for (const std::string& k : cpu_models()) {
    CAPTURE(k);
    const MutationScore m = run_mutation(*s, k, MutationOptions{});
    CHECK(m.invalid_cases.empty());
    for (const MutantResult& x : m.mutants) {
      CAPTURE(x.fault);
      CAPTURE(x.detail);
      std::printf("%s %s: %s (%s)\n", k.c_str(), x.fault.c_str(), std::string(to_string(x.outcome)).c_str(), x.case_id.c_str());
      CHECK((x.outcome == MutantOutcome::Killed || x.outcome == MutantOutcome::NotApplicable));
    }
    CHECK(m.total() >= 4);
    CHECK(m.score() == 1.0);
  }
}

TEST_CASE("softmax: the all-zeros output and NaN rows are refused, a wrong rescale only where the max grows") {
  const SuiteInfo* s = find_suite("softmax");
  REQUIRE(s);
  const std::string zeros = register_mutant("model_softmax_f32_shifted", Fault::SmxZeros);
  SuiteRunOptions o;
  o.only_case = "dominant";  // others' weights near 2e-9: within 1e-2 of zero, not within their bound
  RunResult r = run_suite(*s, {zeros}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::Fail);
  CHECK(std::any_of(r.cases[0].checks.begin(), r.cases[0].checks.end(),
                    [](const CheckResult& c) { return c.kind == CheckKind::Envelope && !c.passed; }));
  // The unshifted model has no max to forget: the fault is not applicable; the online one has a rescale to get wrong.
  const auto un = make_softmax_kernel("model_softmax_f32_unshifted");
  CHECK(un->softmax_traits().arith.shift == SoftmaxShift::Unshifted);
}

}  // namespace fpcert
