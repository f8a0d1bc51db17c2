// tests/results/mutation_test.cpp — the mutation score as data: counts per outcome and per class, the
// score, and every field through JSON and back (also inside a run's results).
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "results/results.hpp"
#include "results/results_json.hpp"

using namespace fpcert;

namespace {

MutantResult mutant(const std::string& fault, const std::string& cls, MutantOutcome o) {
  MutantResult m;
  m.mutant = "model_gemm_f32~" + fault;
  m.fault = fault;
  m.fault_class = cls;
  m.what = "the fault " + fault;
  m.expected = {CheckKind::Bitwise, CheckKind::Envelope};
  m.outcome = o;
  if (o == MutantOutcome::Killed || o == MutantOutcome::KilledOther) {
    m.case_id = "uniform";
    m.fired = {o == MutantOutcome::Killed ? CheckKind::Bitwise : CheckKind::Nonfinite};
    m.repro = "fpcert certify --suite certify --kernel " + m.mutant + " --case uniform";
  }
  m.detail = "why " + fault;
  m.cases_run = 3;
  m.runs = 6;
  m.active_runs = 4;
  m.seconds = 0.25;
  return m;
}

MutationScore sample() {
  MutationScore s;
  s.kernel = "model_gemm_f32";
  s.suite = "certify";
  s.cases = 13;
  s.invalid_cases = {"edges: fail: 1 output(s) never written"};
  s.mutants = {mutant("out_ulp", "output", MutantOutcome::Killed), mutant("zero_row", "output", MutantOutcome::Survived),
               mutant("acc_rz", "arithmetic", MutantOutcome::Killed), mutant("acc_f16", "arithmetic", MutantOutcome::NotApplicable),
               mutant("clobbers_a", "memory", MutantOutcome::KilledOther)};
  s.seconds = 1.5;
  return s;
}

}  // namespace

TEST_CASE("counts: not-applicable mutants are outside the total; the score is killed for their own fault over the total") {
  const MutationScore s = sample();
  CHECK(s.total() == 4);
  CHECK(s.count(MutantOutcome::Killed) == 2);
  CHECK(s.count(MutantOutcome::KilledOther) == 1);
  CHECK(s.score() == 0.5);
  const auto classes = s.by_class();
  REQUIRE(classes.size() == 3);
  CHECK(classes[0].fault_class == "output");
  CHECK(classes[0].total == 2);
  CHECK(classes[0].killed == 1);
  CHECK(classes[0].survived == 1);
  CHECK(classes[1].fault_class == "arithmetic");
  CHECK(classes[1].total == 1);  // acc_f16 not applicable
  CHECK(classes[2].killed_other == 1);
  CHECK(MutationScore{}.score() == 1.0);  // nothing to kill
}

TEST_CASE("a mutation score through JSON and back, alone and inside a run") {
  const MutationScore s = sample();
  const nlohmann::json j = to_json(s);
  CHECK(j.at("score").get<double>() == 0.5);
  CHECK(j.at("total").get<int>() == 4);
  CHECK(j.at("mutants").at(0).at("outcome") == "killed");
  CHECK(j.at("mutants").at(0).at("fired").at(0) == "bitwise");
  const MutationScore b = mutation_from_json(j);
  CHECK(b.kernel == s.kernel);
  CHECK(b.suite == s.suite);
  CHECK(b.cases == 13);
  CHECK(b.invalid_cases == s.invalid_cases);
  REQUIRE(b.mutants.size() == s.mutants.size());
  for (std::size_t i = 0; i < b.mutants.size(); ++i) {
    const MutantResult &x = b.mutants[i], &y = s.mutants[i];
    CHECK(x.mutant == y.mutant);
    CHECK(x.fault == y.fault);
    CHECK(x.fault_class == y.fault_class);
    CHECK(x.what == y.what);
    CHECK(x.expected == y.expected);
    CHECK(x.outcome == y.outcome);
    CHECK(x.case_id == y.case_id);
    CHECK(x.fired == y.fired);
    CHECK(x.detail == y.detail);
    CHECK(x.repro == y.repro);
    CHECK(x.cases_run == y.cases_run);
    CHECK(x.runs == y.runs);
    CHECK(x.active_runs == y.active_runs);
    CHECK(x.seconds == y.seconds);
  }
  RunResult r;
  r.suite = "certify";
  r.mutation.push_back(s);
  const RunResult back = run_from_json(to_json(r));
  REQUIRE(back.mutation.size() == 1);
  CHECK(back.mutation[0].count(MutantOutcome::Killed) == 2);
  CHECK_FALSE(to_json(RunResult{}).contains("mutation"));  // runs without a score say nothing
}

TEST_CASE("malformed mutation scores are input errors") {
  nlohmann::json j = to_json(sample());
  j["mutants"][0]["outcome"] = "maimed";
  CHECK_THROWS_AS(mutation_from_json(j), InputError);
  j = to_json(sample());
  j["mutants"][0]["expected"][0] = "no_such_check";
  CHECK_THROWS_AS(mutation_from_json(j), InputError);
  CHECK_THROWS_AS(mutation_from_json(nlohmann::json::object()), InputError);
}
