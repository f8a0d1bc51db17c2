// tests/reports/spread_report_test.cpp — the run-to-run spread of a kernel that declares it, in the reports: the
// terminal's summary and tier column, and the HTML (strict checker: every spread figure shown equals the JSON's),
// for the atomics split-K model that passes and the fixture that fails the spread check.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "reports/html/html.hpp"
#include "tests/support/report_check.hpp"
#include "reports/table.hpp"
#include "results/results_json.hpp"
#include "suites/run/suite.hpp"

#ifndef FPCERT_SOURCE_DIR
#error "FPCERT_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

using namespace fpcert;
namespace fs = std::filesystem;

TEST_CASE("the spread in the terminal and in the HTML report, every figure equal to the JSON's") {
  const SuiteInfo* s = find_suite("certify");
  REQUIRE(s);
  SuiteRunOptions o;
  o.only_case = "uniform";
  RunResult r = run_suite(*s, {"model_gemm_f32_splitk4_atomic"}, o);
  o.only_case = "order_free_f32";
  const RunResult bad = run_suite(*s, {"mutant_gemm_f32_splitk4_atomic_order_free_drift"}, o);
  for (const CaseResult& c : bad.cases) r.cases.push_back(c);
  REQUIRE(r.cases.size() == 2);
  REQUIRE(r.cases[0].spread);
  REQUIRE(r.cases[1].spread);
  CHECK(r.cases[0].status == CaseStatus::Pass);
  CHECK(r.cases[1].status == CaseStatus::Fail);

  const std::string text = spread_text(r);
  CHECK(text.find("run-to-run spread") == 0);
  CHECK(text.find(fmt::format("uniform on model_gemm_f32_splitk4_atomic: {} of", r.cases[0].spread->differing_runs)) != std::string::npos);
  CHECK(case_row(r.cases[0]).find("run to run: ") != std::string::npos);

  const fpcert::test::ReportCheck rc = fpcert::test::check_report_tagged(r, "spread_report");
  INFO(rc.output);
  CHECK(rc.ok);
  const std::string& html = rc.html;
  CHECK(html.find("run to run (declared)") != std::string::npos);
  CHECK(html.find("/cases/1/spread/order_free_differ") != std::string::npos);  // the failing case's figures, tagged
}
