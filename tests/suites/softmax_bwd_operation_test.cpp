// tests/suites/softmax_bwd_operation_test.cpp — softmax and log-softmax backward through the runner
// (suites/ops/softmax_bwd/): every CPU model passes every case of the softmax_backward suite within the per-element bound,
// with evidence (non-vacuous: the share of vacuous elements and err/bound are printed), the fault injectors reach a
// mutation score of 100 % on every model, each mutant killed for its own fault on a case its catalogue entry names,
// and the black-box faults (zeros, the scale missing or twice) refuse a closed kernel too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

std::vector<std::string> cpu_models() {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::SoftmaxBackward))
    if (make_softmax_bwd_kernel(n)->backend() == Backend::Cpu) out.push_back(n);
  return out;
}

double at(const CaseResult& c, const char* k) { return c.achieved.count(k) ? c.achieved.at(k) : -1.0; }

}  // namespace

TEST_CASE("softmax_backward suite: every CPU model passes every case within the bound, non-vacuous, with evidence") {
  const SuiteInfo* s = find_suite("softmax_backward");
  REQUIRE(s);
  CHECK(s->operation == Operation::SoftmaxBackward);
  const auto models = cpu_models();
  REQUIRE(models.size() == 7);
  for (const std::string& k : models) {
    CAPTURE(k);
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    REQUIRE(r.cases.size() >= 13);
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CAPTURE(c.envelope.arithmetic);
      CHECK(c.status == CaseStatus::Pass);
      CHECK(c.metrics.err_frac_max <= 1.0);
      const double elements = static_cast<double>(c.m * c.n);
      std::printf("%s %s: err/bound %.3g, ulp max %.0f, vacuous %g of %g, reference by MPFR %g\n", k.c_str(), c.case_id.c_str(),
                  c.metrics.err_frac_max, c.metrics.ulp_max, at(c, "softmax_bwd_vacuous_elements"), elements,
                  at(c, "softmax_bwd_reference_mpfr_elements"));
      if (c.case_id != "specials" && c.case_id != "random_n1") {  // one column: dx = s (dy - dy) = 0 exactly, nothing to refuse
        CHECK(!c.vacuous);
        CHECK(at(c, "softmax_bwd_vacuous_elements") < 0.2 * elements);  // the bound is below |exact| almost everywhere
      }
    }
    operation_runner(Operation::SoftmaxBackward).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("softmax_backward mutation: 100 % of the applicable faults killed on every CPU model, each for its own fault") {
  const SuiteInfo* s = find_suite("softmax_backward");
  REQUIRE(s);
  for (const std::string& k : cpu_models()) {
    CAPTURE(k);
    const bool log = make_softmax_bwd_kernel(k)->softmax_bwd_traits().fn == SoftmaxFn::LogSoftmax;
    const MutationScore m = run_mutation(*s, k, MutationOptions{});
    CHECK(m.invalid_cases.empty());
    for (const MutantResult& x : m.mutants) {
      CAPTURE(x.fault);
      CAPTURE(x.detail);
      std::printf("%s %s: %s (%s)\n", k.c_str(), x.fault.c_str(), std::string(to_string(x.outcome)).c_str(), x.case_id.c_str());
      if (x.fault == "sbwd_log_no_exp" && !log) {
        CHECK(x.outcome == MutantOutcome::NotApplicable);
        continue;
      }
      CHECK(x.outcome == MutantOutcome::Killed);
      if (x.fault == "sbwd_scale_missing" || x.fault == "sbwd_scale_twice")  // the catalogue: a case with s != 1
        CHECK((x.case_id.rfind("random_n", 0) == 0 || x.case_id.rfind("scale_", 0) == 0 ||
               x.case_id == "cancel_long"));
    }
    CHECK(m.score() == 1.0);
  }
}

TEST_CASE("softmax_backward: the black-box faults refuse a wrapped kernel; s = 1 cannot show a scale fault") {
  const SuiteInfo* s = find_suite("softmax_backward");
  REQUIRE(s);
  for (const Fault f : {Fault::SbwdZeros, Fault::SbwdScaleTwice, Fault::SbwdScaleMissing}) {
    const std::string m = register_mutant("model_softmax_bwd_f16", f);
    SuiteRunOptions o;
    o.only_case = "scale_large";
    RunResult r = run_suite(*s, {m}, o);
    REQUIRE(r.cases.size() == 1);
    CHECK(r.cases[0].status == CaseStatus::Fail);
    o.only_case = "cancel";  // s = 1: the scale's faults change nothing
    r = run_suite(*s, {m}, o);
    REQUIRE(r.cases.size() == 1);
    CHECK((r.cases[0].status == CaseStatus::Pass) == (f != Fault::SbwdZeros));
  }
}

}  // namespace fpcert
