// tests/suites/reduce_operation_test.cpp — reductions through the runner (suites/ops/reduce/): a correct sequential
// model passes every case bitwise, a wrong one fails for its own reason, a run-to-run (atomics-like) model passes by
// the envelope and fails when it drops an element, and a reduction case's record round-trips through JSON.
//
// The kernels here are small host models written with native float arithmetic (an independent realisation of
// the declared order: the oracle's emulation rounds through oracle/round.hpp, these through the FPU), until the
// CPU models of kernels/reduce/cpu/ land.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "base/codes.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "results/results_json.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "suites/mutation/mutation.hpp"
#include "tests/support/reduce_test_kernels.hpp"

namespace fpcert {
namespace {

using test::register_test_kernels;

RunResult run(const std::string& suite, const std::string& kernel) {
  register_test_kernels();
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  CHECK(s->operation == Operation::Reduction);
  SuiteRunOptions opt;
  return run_suite(*s, {kernel}, opt);
}

bool any_failed(const CaseResult& c, CheckKind k) {
  return std::any_of(c.checks.begin(), c.checks.end(), [&](const CheckResult& x) { return x.kind == k && !x.passed; });
}

}  // namespace

TEST_CASE("reduce suite: correct sequential models pass every case bitwise, with evidence") {
  for (const char* k : {"test_sum_f32_seq", "test_dot_f32_seq"}) {
    CAPTURE(k);
    RunResult r = run("reduce", k);
    REQUIRE(r.cases.size() >= 10);
    std::int64_t vectors = 0;
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CHECK(c.status == CaseStatus::Pass);
      CHECK(c.tier == Tier::Bitwise);
      REQUIRE(c.reduction);
      vectors += c.reduction->vectors;
      CHECK(c.reduction->bitwise_mismatches == 0);
      CHECK(c.metrics.err_frac_max <= 1);
    }
    CHECK(vectors >= 2000);  // "a few thousand vectors"
    operation_runner(Operation::Reduction).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("reduce suite: an unscaled nrm2 passes its cases and declines the overflow trap") {
  RunResult r = run("reduce", "test_nrm2_f32_seq");
  bool trap_declined = false;
  for (const CaseResult& c : r.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    if (c.case_id == "trap_overflow" || c.case_id == "trap_mixed") {
      CHECK(c.status == CaseStatus::NotSupported);
      trap_declined = true;
    } else {
      CHECK(c.status == CaseStatus::Pass);
    }
  }
  CHECK(trap_declined);
}

TEST_CASE("reduce suite: a dropped element and an undeclared order fail bitwise") {
  for (const char* k : {"test_sum_f32_droplast", "test_sum_f32_pairwise_as_seq"}) {
    CAPTURE(k);
    const RunResult r = run("reduce_quick", k);
    int failed = 0;
    for (const CaseResult& c : r.cases) failed += any_failed(c, CheckKind::Bitwise);
    CHECK(failed > 0);
  }
}

TEST_CASE("reduce suite: a run-to-run model passes by the envelope; dropping an element fails it") {
  const RunResult ok = run("reduce", "test_sum_f32_atomic");
  bool saw_spread = false;
  for (const CaseResult& c : ok.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    CHECK(c.status == CaseStatus::Pass);
    CHECK(c.tier == Tier::Envelope);
    saw_spread = saw_spread || !c.metrics.deterministic;
  }
  CHECK(saw_spread);  // the rotation really changed results between runs
  const RunResult bad = run("reduce", "test_sum_f32_atomic_drop");
  int failed = 0;
  for (const CaseResult& c : bad.cases) failed += any_failed(c, CheckKind::Envelope) || any_failed(c, CheckKind::Spread);
  CHECK(failed > 0);
}

TEST_CASE("reduce case record round-trips through JSON") {
  const RunResult r = run("reduce_quick", "test_sum_f32_seq");
  REQUIRE(!r.cases.empty());
  const CaseResult& c = r.cases.front();
  const CaseResult back = case_from_json(to_json(c));
  REQUIRE(back.reduction);
  CHECK(back.reduction->kind == "sum");
  CHECK(back.reduction->vectors == c.reduction->vectors);
  CHECK(back.reduction->length == c.reduction->length);
  CHECK(back.reduction->worst_bound == c.reduction->worst_bound);
  CHECK(to_json(back).dump() == to_json(c).dump());
}

}  // namespace fpcert

namespace fpcert {

TEST_CASE("reduction faults: every applicable fault is killed on a correct sequential model; atomics pass") {
  test::register_test_kernels();
  const SuiteInfo* s = find_suite("reduce");
  REQUIRE(s);
  MutationOptions mo;
  for (const char* k : {"test_sum_f32_seq", "test_dot_f32_seq", "test_sum_f32_atomic"}) {
    CAPTURE(k);
    const MutationScore ms = operation_runner(Operation::Reduction).mutate(*s, k, mo);
    CHECK(ms.invalid_cases.empty());
    for (const MutantResult& m : ms.mutants) {
      CAPTURE(m.fault);
      CAPTURE(m.detail);
      CHECK((m.outcome == MutantOutcome::Killed || m.outcome == MutantOutcome::NotApplicable));
    }
  }
}

}  // namespace fpcert
