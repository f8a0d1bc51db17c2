// tests/reports/batch_report_test.cpp — the per-batch list of a strided batched case in the HTML report
// (reports/html/html_batches.cpp): every batch of a passing case and of a failing one (the batch_stride_ignored mutant:
// batch 0 right, the others wrong) listed with its verdict, each figure tagged and equal to the JSON's (strict checker).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "reports/html/html.hpp"
#include "tests/support/report_check.hpp"
#include "results/results_json.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/run/suite.hpp"

#ifndef FPCERT_SOURCE_DIR
#error "FPCERT_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

using namespace fpcert;
namespace fs = std::filesystem;

TEST_CASE("a batched case's batches in the HTML report, each figure equal to the JSON's") {
  const SuiteInfo* s = find_suite("certify");
  REQUIRE(s);
  SuiteRunOptions o;
  o.only_case = "batch_strided";
  const std::string mutant = register_gemm_mutant("model_gemm_f32_strided", Fault::BatchStrideIgnored);
  const RunResult r = run_suite(*s, {"model_gemm_f32_strided", mutant}, o);
  REQUIRE(r.cases.size() == 2);
  const CaseResult& good = r.cases[0];
  const CaseResult& bad = r.cases[1];
  REQUIRE(good.batches.size() == 5);
  REQUIRE(bad.batches.size() == 5);
  CHECK(good.status == CaseStatus::Pass);
  CHECK(bad.status == CaseStatus::Fail);
  CHECK(bad.batches[0].passed);
  CHECK_FALSE(bad.batches[1].passed);

  const fpcert::test::ReportCheck rc = fpcert::test::check_report_tagged(r, "batch_report");
  INFO(rc.output);
  CHECK(rc.ok);
  const std::string& html = rc.html;
  CHECK(html.find("Batches of passing batched cases") != std::string::npos);
  CHECK(html.find("/cases/0/batches/4/max_fraction") != std::string::npos);  // the passing case's last batch
  CHECK(html.find("/cases/1/batches/1/max_fraction") != std::string::npos);  // the failing case's first wrong batch
  CHECK(html.find(fmt::format("<b>Batches:</b> 5 graded, {} failed", std::count_if(bad.batches.begin(), bad.batches.end(),
                                                                                   [](const BatchOutcome& b) { return !b.passed; }))) !=
        std::string::npos);
}
