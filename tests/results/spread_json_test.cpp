// tests/results/spread_json_test.cpp — a case's declared determinism and run-to-run spread are data in the results
// model (not text): they round-trip through JSON field by field, are absent for deterministic kernels, and a bad
// value is refused by name.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "results/results.hpp"
#include "results/results_json.hpp"

using namespace fpcert;

TEST_CASE("the run-to-run spread round-trips through JSON; deterministic cases carry none") {
  CaseResult c;
  c.case_id = "uniform";
  c.kernel = "gemm_f32_splitk4_atomic";
  c.determinism = "run_to_run";
  RunSpread s;
  s.runs = 14;
  s.differing_runs = 9;
  s.elements = 311;
  s.max_elements = 120;
  s.max_ulps = 3;
  s.max_frac = 0.0625;
  s.worst_index = 4242;
  s.worst_diff = 0x1p-21;
  s.worst_allowed = 0x1p-17;
  s.worst_allowed_ulps = 48.5;
  s.bound = "2 gamma_3(2^-24) (growth sum|a'b'| + eta)";
  s.order_free = 77;
  s.order_free_differ = 0;
  s.envelope_exceed = 0;
  s.envelope_worst = 0.25;
  c.spread = s;
  c.checks.push_back({CheckKind::Spread, true, "declared run-to-run nondeterminism", 4242, 0.0625, 1});
  const nlohmann::json j = to_json(c);
  CHECK(j.at("determinism") == "run_to_run");
  CHECK(j.at("spread").at("max_ulps") == 3);
  CHECK(j.at("checks").at(0).at("kind") == "spread");
  const CaseResult b = case_from_json(nlohmann::json::parse(j.dump()));
  CHECK(b.determinism == "run_to_run");
  REQUIRE(b.spread);
  CHECK(b.spread->runs == 14);
  CHECK(b.spread->differing_runs == 9);
  CHECK(b.spread->elements == 311);
  CHECK(b.spread->max_elements == 120);
  CHECK(b.spread->max_ulps == 3);
  CHECK(b.spread->max_frac == 0.0625);
  CHECK(b.spread->worst_index == 4242);
  CHECK(b.spread->worst_diff == 0x1p-21);
  CHECK(b.spread->worst_allowed == 0x1p-17);
  CHECK(b.spread->worst_allowed_ulps == 48.5);
  CHECK(b.spread->bound == s.bound);
  CHECK(b.spread->order_free == 77);
  CHECK(b.spread->envelope_worst == 0.25);
  REQUIRE(b.checks.size() == 1);
  CHECK(b.checks[0].kind == CheckKind::Spread);

  CaseResult d;
  d.case_id = "uniform";
  const nlohmann::json dj = to_json(d);
  CHECK_FALSE(dj.contains("determinism"));
  CHECK_FALSE(dj.contains("spread"));
  CHECK(case_from_json(dj).determinism == "deterministic");

  nlohmann::json bad = j;
  bad["determinism"] = "sometimes";
  CHECK_THROWS_AS(case_from_json(bad), InputError);
}
