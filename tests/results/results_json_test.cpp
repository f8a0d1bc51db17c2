// tests/results/results_json_test.cpp — the results model survives JSON: every field of a case, the
// non-finite numbers (as "inf"/"nan" strings), every status; JSON lines of a crashed run read back;
// malformed files are InputErrors naming the file.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "results/results.hpp"
#include "results/results_json.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {
CaseResult sample_case(CaseStatus st) {
  CaseResult c;
  c.suite = "quick";
  c.case_id = "k256_uniform";
  c.kernel = "model_gemm_f16_f32acc";
  c.kernel_traits = "in f16/f16, exact products, acc f32 (rn), out f32";
  c.backend = "cpu";
  c.spec = "uniform:m=8,n=8,k=256,lo=-1,hi=1,seed=7";
  c.m = 8;
  c.n = 8;
  c.k = 256;
  c.source_format = "f32";
  c.out_format = "f32";
  c.status = st;
  c.reason = "why, with \"quotes\" and a newline\nin it";
  c.flags = {"inputs-exact-in-storage: A"};
  c.metrics.max_abs = 0.1;  // not a short binary fraction: the JSON number must keep every bit
  c.metrics.ulp_max = INFINITY;
  c.metrics.ulp_median = std::nan("");
  c.metrics.ulp_hist = {3, 0, 1};
  c.metrics.nonfinite = 2;
  c.metrics.first_nonfinite = 17;
  c.metrics.deterministic = false;
  c.bound.variant = BoundVariant::Componentwise;
  c.bound.rtol = 0.0625;
  c.bound.terms = {{"storage A (f16)", 0.03125, "4 * sqrt(256) * 2^-11 / 2"}};
  c.gate_fraction = 1.5;
  c.achieved = {{"kappa", 1e6}};
  c.baseline = "cublas_gemm_f32_pedantic";
  c.baseline_ratio = 0.75;
  c.repro = "fpcert certify --kernel model_gemm_f16_f32acc --suite quick --case k256_uniform";
  c.checks = {{CheckKind::Bitwise, false, "element (0, 3) differs", 3, 2.0, 0.0},
              {CheckKind::CourseGate, true, "gate fraction 0.01", -1, 0.01, 1.0},
              {CheckKind::Statistical, true, "z", -1, -INFINITY, 5.3}};
  c.tier = Tier::EnvelopeStatistical;
  c.vacuous = true;
  return c;
}
fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / ("fpcert_results_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("a case round-trips through JSON, non-finite numbers and optional fields included") {
  for (CaseStatus st : {CaseStatus::Pass, CaseStatus::Fail, CaseStatus::NotSupported, CaseStatus::Crashed, CaseStatus::Hung,
                        CaseStatus::Error}) {
    const CaseResult c = sample_case(st);
    const CaseResult b = case_from_json(nlohmann::json::parse(to_json(c).dump()));
    CHECK(b.status == st);
    CHECK(b.case_id == c.case_id);
    CHECK(b.reason == c.reason);
    CHECK(b.flags == c.flags);
    CHECK(b.metrics.max_abs == c.metrics.max_abs);
    CHECK(std::isinf(b.metrics.ulp_max));
    CHECK(std::isnan(b.metrics.ulp_median));
    CHECK(b.metrics.ulp_hist == c.metrics.ulp_hist);
    CHECK(b.metrics.first_nonfinite == 17);
    CHECK_FALSE(b.metrics.deterministic);
    CHECK(b.bound.variant == BoundVariant::Componentwise);
    REQUIRE(b.bound.terms.size() == 1);
    CHECK(b.bound.terms[0].formula == c.bound.terms[0].formula);
    CHECK(b.achieved.at("kappa") == 1e6);
    REQUIRE(b.baseline_ratio.has_value());
    CHECK(*b.baseline_ratio == 0.75);
    CHECK_FALSE(b.speed_ratio.has_value());
    CHECK(b.repro == c.repro);
    REQUIRE(b.checks.size() == 3);
    CHECK(b.checks[0].kind == CheckKind::Bitwise);
    CHECK_FALSE(b.checks[0].passed);
    CHECK(b.checks[0].detail == "element (0, 3) differs");
    CHECK(b.checks[0].first_index == 3);
    CHECK(b.checks[0].measured == 2.0);
    CHECK(b.checks[1].kind == CheckKind::CourseGate);
    CHECK(b.checks[1].passed);
    CHECK(b.checks[2].measured == -INFINITY);
    CHECK(b.checks[2].limit == 5.3);
    CHECK(b.tier == Tier::EnvelopeStatistical);
    CHECK(b.vacuous);
  }
  CHECK(parse_case_status("not_supported") == CaseStatus::NotSupported);
  CHECK_FALSE(parse_case_status("passed").has_value());
}

TEST_CASE("a run keeps its counts; the JSON lines of an interrupted run read back as a run") {
  RunResult r;
  r.suite = "quick";
  r.env.fpcert_version = "0.1.0";
  r.cases = {sample_case(CaseStatus::Pass), sample_case(CaseStatus::Crashed), sample_case(CaseStatus::Fail)};
  const nlohmann::json j = to_json(r);
  CHECK(j.at("counts").at("crashed") == 1);
  CHECK(j.at("passed") == false);
  const RunResult back = run_from_json(j);
  CHECK(back.count(CaseStatus::Fail) == 1);
  CHECK_FALSE(back.passed());

  const fs::path d = scratch();
  const std::string jsonl = (d / "partial.jsonl").string();
  {
    std::ofstream out(jsonl);
    out << nlohmann::json{{"environment", to_json(r.env)}, {"suite", "quick"}}.dump() << "\n";
    out << to_json(r.cases[0]).dump() << "\n" << to_json(r.cases[1]).dump() << "\n";
  }
  const RunResult partial = read_results(jsonl);
  CHECK(partial.cases.size() == 2);
  CHECK(partial.env.fpcert_version == "0.1.0");
  CHECK(partial.count(CaseStatus::Crashed) == 1);
}

TEST_CASE("malformed results files are InputErrors that name the file") {
  const fs::path d = scratch();
  const std::string bad = (d / "bad.jsonl").string();
  { std::ofstream(bad) << "{\"case\": 1}\n{not json\n"; }
  CHECK_THROWS_WITH_AS(read_results(bad), doctest::Contains("bad.jsonl"), InputError);
  const std::string empty = (d / "empty.json").string();
  { std::ofstream(empty) << "  \n"; }
  CHECK_THROWS_WITH_AS(read_results(empty), doctest::Contains("empty.json"), InputError);
  CHECK_THROWS_AS(read_results((d / "missing.json").string()), InputError);
}

TEST_CASE("check kinds and tiers have stable, distinct JSON names that parse back") {
  // The strings are the results format: a renamed kind breaks every saved results file.
  const std::vector<std::pair<CheckKind, std::string_view>> names = {
      {CheckKind::Bitwise, "bitwise"},
      {CheckKind::Envelope, "envelope"},
      {CheckKind::Statistical, "statistical"},
      {CheckKind::Nonfinite, "nonfinite"},
      {CheckKind::SpecialValues, "special_values"},
      {CheckKind::NanPolicy, "nan_policy"},
      {CheckKind::Unwritten, "unwritten"},
      {CheckKind::GuardOutput, "guard_output"},
      {CheckKind::GuardInputs, "guard_inputs"},
      {CheckKind::InputsModified, "inputs_modified"},
      {CheckKind::Nondeterministic, "nondeterministic"},
      {CheckKind::Crashed, "crashed"},
      {CheckKind::Hung, "hung"},
      {CheckKind::NotSupportedAfterData, "not_supported_after_data"},
      {CheckKind::Declaration, "declaration"},
      {CheckKind::Baseline, "baseline"},
      {CheckKind::CourseGate, "course_gate"},
      {CheckKind::Spread, "spread"},
      {CheckKind::Amax, "amax"},
      {CheckKind::SchemeBound, "scheme_bound"}};
  CHECK(names.size() == std::size(kAllCheckKinds));
  for (const auto& [k, s] : names) {
    CHECK(to_string(k) == s);
    CHECK(parse_check_kind(s) == k);
    CHECK(is_decisive(k) == (k != CheckKind::CourseGate));
  }
  CHECK_FALSE(parse_check_kind("gate").has_value());
  for (Tier t : {Tier::None, Tier::Bitwise, Tier::Envelope, Tier::EnvelopeStatistical}) CHECK(parse_tier(to_string(t)) == t);
  CHECK(to_string(Tier::EnvelopeStatistical) == "envelope+statistical");
  nlohmann::json j = to_json(sample_case(CaseStatus::Pass));
  j["checks"][0]["kind"] = "no_such_check";
  CHECK_THROWS_WITH_AS(case_from_json(j), doctest::Contains("no_such_check"), InputError);
}

TEST_CASE("the status derives from the decisive checks; the course gate never decides") {
  using K = CheckKind;
  auto st = [](std::vector<CheckResult> v) { return status_from_checks(v); };
  CHECK_FALSE(st({}).has_value());
  CHECK_FALSE(st({{K::CourseGate, false, "gate exceeded"}}).has_value());  // reported only
  CHECK(st({{K::CourseGate, false, "gate"}, {K::Envelope, true, ""}}) == CaseStatus::Pass);
  CHECK(st({{K::Envelope, true, ""}, {K::Statistical, false, "biased"}}) == CaseStatus::Fail);
  CHECK(st({{K::Bitwise, false, ""}, {K::Crashed, false, ""}}) == CaseStatus::Crashed);
  CHECK(st({{K::Hung, false, ""}, {K::Unwritten, false, ""}}) == CaseStatus::Hung);
  CHECK(st({{K::NotSupportedAfterData, false, "declined"}}) == CaseStatus::NotSupported);
  CHECK(st({{K::NotSupportedAfterData, false, ""}, {K::GuardInputs, false, ""}}) == CaseStatus::Fail);

  CaseResult c;
  c.status = CaseStatus::Pass;
  c.checks = {{K::Unwritten, false, "3 outputs never written"}, {K::CourseGate, false, "gate 1.5"},
              {K::GuardOutput, false, "past the end"}, {K::Nonfinite, true, "none"}};
  decide(c);
  CHECK(c.status == CaseStatus::Fail);
  CHECK(c.reason == "3 outputs never written; past the end");  // decisive failures only, in order
  REQUIRE(find_check(c, K::CourseGate) != nullptr);
  CHECK_FALSE(find_check(c, K::CourseGate)->passed);
  CHECK(find_check(c, K::Baseline) == nullptr);
  CaseResult ns;
  ns.status = CaseStatus::NotSupported;
  ns.reason = "needs a device";
  decide(ns);  // no checks: the status set before stands
  CHECK(ns.status == CaseStatus::NotSupported);
  CHECK(ns.reason == "needs a device");
}
