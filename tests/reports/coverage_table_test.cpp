// tests/reports/coverage_table_test.cpp — the terminal's coverage table: one line per class; over several
// kernels each case with its status counts, naming only the kernels it refused (the H200 main job's table
// listed every kernel's entry: 16 kernels made lines of 2,000 characters).
#include <doctest/doctest.h>

#include <string>

#include "reports/table.hpp"

using namespace fpcert;

namespace {
CaseResult make(const std::string& kernel, const std::string& id, CaseStatus st, std::vector<std::string> cov) {
  CaseResult c;
  c.kernel = kernel;
  c.case_id = id;
  c.status = st;
  c.coverage = std::move(cov);
  return c;
}
std::string line_of(const std::string& table, const std::string& cls) {
  const auto a = table.find("\n" + cls + " ");
  if (a == std::string::npos) return "";
  return table.substr(a + 1, table.find('\n', a + 1) - a - 1);
}
}  // namespace

TEST_CASE("coverage table over several kernels: status counts per case, the refusing kernels named") {
  RunResult r;
  r.kernels = {"k_a", "k_b", "k_c"};
  for (const auto& k : r.kernels) r.cases.push_back(make(k, "uniform", CaseStatus::Pass, {"values.rounding", "layout.padded_ld"}));
  r.cases.push_back(make("k_a", "special_f32", CaseStatus::Pass, {"values.special"}));
  r.cases.push_back(make("k_b", "special_f32", CaseStatus::NotSupported, {"values.special"}));
  r.cases.push_back(make("k_c", "special_f16", CaseStatus::Fail, {"values.special"}));
  const std::string t = coverage_table(r);
  CAPTURE(t);
  CHECK(line_of(t, "values.special").find("special_f32 (not_supported 1, pass 1), special_f16 (fail 1: k_c)") != std::string::npos);
  CHECK(line_of(t, "values.rounding").find("uniform (pass 3)") != std::string::npos);
  CHECK(line_of(t, "values.rounding").find("k_a") == std::string::npos);  // passing kernels are counted, not listed
  CHECK(line_of(t, "layout.padded_ld") != "");
}

TEST_CASE("coverage table of one kernel: each case with its status") {
  RunResult r;
  r.kernels = {"k"};
  r.cases.push_back(make("k", "tile16_pm1", CaseStatus::Fail, {"shape.tile_edge"}));
  r.cases.push_back(make("k", "tile32_pm1", CaseStatus::Pass, {"shape.tile_edge"}));
  const std::string t = coverage_table(r);
  CHECK(line_of(t, "shape.tile_edge").find("tile16_pm1 (fail), tile32_pm1 (pass)") != std::string::npos);
  CHECK(coverage_table(RunResult{}).empty());
}
