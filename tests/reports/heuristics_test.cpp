// tests/reports/heuristics_test.cpp — fpcert beside torch.allclose at 1e-2 and FlashAttention's 2x rule (results/
// results.hpp, HeuristicVerdicts; docs/mutation.md, "Beside the heuristics"), through the mutation campaign of the row
// operations. What is asserted comes from the rules' definitions and the faults', not from a previous run:
//   - the tallies are made on every case each kernel ran, and survive the JSON round trip;
//   - an all-zeros softmax on 1000 columns has every exact weight below 1e-2 on rows without a dominant logit, so
//     allclose at 1e-2 accepts at least one such case while fpcert refuses the mutant (the KernelBench finding);
//   - the specials case holds NaN rows whose exact results are NaN: allclose with equal_nan False refuses the unmutated
//     kernel there (a false alarm of the heuristic), and fpcert passes it;
//   - the 2x rule is printed beside them; its verdicts are asserted in the norm test below, where a fault's extra error
//     stays within twice the unmutated kernel's by construction.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "reports/html/html.hpp"
#include "reports/mutation_report.hpp"
#include "results/results_json.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/report_check.hpp"

namespace fpcert {

TEST_CASE("softmax mutation: fpcert beside torch.allclose 1e-2 and the 2x rule") {
  const SuiteInfo* s = find_suite("softmax_quick");
  REQUIRE(s);
  MutationOptions o;
  o.all_cases = true;
  const MutationScore m = run_mutation(*s, "model_softmax_f32_shifted", o);
  std::fputs(heuristics_table(m).c_str(), stdout);
  CHECK(m.invalid_cases.empty());  // fpcert passes the unmutated kernel on every case
  CHECK(m.honest_heuristics.cases == m.cases);
  // NaN rows (the specials case): allclose's equal_nan=False refuses the correct kernel there.
  CHECK(m.honest_heuristics.allclose_refused >= 1);
  bool zeros_seen = false;
  for (const MutantResult& x : m.mutants) {
    if (x.outcome == MutantOutcome::NotApplicable) continue;
    CAPTURE(x.fault);
    CHECK(x.heuristics.cases == x.cases_run);
    CHECK((x.outcome == MutantOutcome::Killed || x.outcome == MutantOutcome::KilledOther));
    CHECK(x.heuristics.fpcert_refused >= 1);
    if (x.fault == "smx_zeros") {
      zeros_seen = true;
      CHECK(x.heuristics.allclose_missed >= 1);  // accepted where every exact weight is below 1e-2
    }
  }
  CHECK(zeros_seen);
  // The HTML report carries the section, with the unmutated kernel's row and the zeros mutant's.
  RunResult run;
  run.kind = RunKind::Mutation;
  run.suite = m.suite;
  run.kernels = {m.kernel};
  run.mutation.push_back(m);
  const std::string html = html_report(std::vector<RunResult>{run});
  CHECK(html.find("fpcert beside the heuristics") != std::string::npos);
  CHECK(html.find("(unmutated: false alarms)") != std::string::npos);
  CHECK(html.find(">smx_zeros</td>") != std::string::npos);
  {  // well formed under the strict checker (an HTML-only entity there once broke it), every count equal to the JSON's
    const test::ReportCheck rc = test::check_report_tagged(run, "heuristics_report");
    INFO(rc.output);
    CHECK(rc.ok);
  }
  // The record survives the JSON round trip.
  const MutationScore back = mutation_from_json(to_json(m));
  CHECK(back.honest_heuristics.allclose_refused == m.honest_heuristics.allclose_refused);
  for (std::size_t i = 0; i < m.mutants.size(); ++i) {
    CHECK(back.mutants[i].heuristics.cases == m.mutants[i].heuristics.cases);
    CHECK(back.mutants[i].heuristics.fa2x_refused == m.mutants[i].heuristics.fa2x_refused);
    CHECK(back.mutants[i].heuristics.first_allclose_refused == m.mutants[i].heuristics.first_allclose_refused);
  }
}

TEST_CASE("norm mutation: the 2x rule accepts a Bessel-corrected bf16 RMSNorm that fpcert refuses") {
  // 1/(n-1) for 1/n scales every result by sqrt(n/(n-1)) - 1 ~ 1/(2n): 5e-4 relative at n = 1000, an eighth of a bf16
  // ulp (2^-8 relative at most), below the unmutated kernel's own output rounding (up to half an ulp), so the 2x rule
  // cannot see it on the 1000-column case; the per-element bound (half an ulp for the final rounding plus the f32
  // terms) refuses the elements whose rounding it moves.
  const SuiteInfo* s = find_suite("norm");
  REQUIRE(s);
  MutationOptions o;
  o.all_cases = true;
  o.faults = {find_fault("norm_bessel")->fault};
  const MutationScore m = run_mutation(*s, "model_rmsnorm_bf16", o);
  std::fputs(heuristics_table(m).c_str(), stdout);
  REQUIRE(m.mutants.size() == 1);
  const HeuristicVerdicts& h = m.mutants[0].heuristics;
  CHECK(h.fpcert_refused >= 1);
  CHECK(h.fa2x_missed >= 1);
  CHECK(h.allclose_missed >= 1);
}

}  // namespace fpcert
