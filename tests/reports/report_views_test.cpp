// tests/reports/report_views_test.cpp — the views a reviewer reads first, on real results (the sample runs of
// CPU models): the kernel x suite matrix of verdicts opens the report with the environment folded, the
// comparison of two runs of one suite lists the flipped verdict, and a tile-tail bug's failure card draws
// its error map with the worst elements in tile coordinates.
#include <doctest/doctest.h>

#include <string>

#include "reports/escape.hpp"
#include "reports/html/html.hpp"
#include "reports/html/svg.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {
const std::vector<RunResult>& runs() {
  static const std::vector<RunResult> r = test::sample_runs(test::seed());
  return r;
}
std::size_t run_index(const std::string& suite, const std::string& first_kernel) {
  for (std::size_t i = 0; i < runs().size(); ++i)
    if (runs()[i].suite == suite && !runs()[i].cases.empty() && runs()[i].cases.front().kernel == first_kernel) return i;
  return runs().size();
}
/// The text between the first `from` and the next `to` after it.
std::string between(const std::string& s, const std::string& from, const std::string& to) {
  const auto a = s.find(from);
  if (a == std::string::npos) return "";
  const auto b = s.find(to, a);
  return s.substr(a, b == std::string::npos ? std::string::npos : b - a);
}
}  // namespace

TEST_CASE("the first screen: the kernel x suite matrix comes before any run, with tiers, mutation scores and a folded environment") {
  ReportInput in;
  in.runs = runs();
  const std::string html = html_report(in);
  const auto overview = html.find("id=\"overview\"");
  REQUIRE(overview != std::string::npos);
  CHECK(overview < html.find("class=\"run\""));
  const std::string matrix = between(html, "<table class=\"matrix\">", "</table>");
  REQUIRE(!matrix.empty());
  // One row per kernel of the GEMM runs (the mutants included), one column per run.
  for (const char* k : {"model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_f16_f16acc", "model_gemm_bf16_f32acc"})
    CHECK(matrix.find(std::string("<code>") + k + "</code>") != std::string::npos);
  CHECK(matrix.find("<th>tier</th>") != std::string::npos);
  CHECK(matrix.find("badge fail") != std::string::npos);   // the certify mutant and the tile-tail run
  CHECK(matrix.find("badge pass") != std::string::npos);
  CHECK(matrix.find("<span class=\"tier\">bitwise</span>") != std::string::npos);
  // The error fraction of each cell points at the worst case's field.
  CHECK(matrix.find("/metrics/err_frac_max") != std::string::npos);
  // The exact command of each run is behind the fold.
  const std::string fold = between(html, "<details class=\"fold\"><summary>Environment and exact command of each run", "</details>");
  CHECK(fold.find(html_escape(runs()[0].env.command)) != std::string::npos);
}

TEST_CASE("two runs of one suite: the comparison names the flipped verdict and the growth, and only that case") {
  const std::size_t oi = run_index("tiles", "model_gemm_f32");
  REQUIRE(oi + 1 < runs().size());
  ReportInput in;
  in.runs = {runs()[oi], runs()[oi + 1]};
  const std::string html = html_report(in);
  const std::string cmp = between(html, "<section class=\"compare\"", "</section>");
  REQUIRE(!cmp.empty());
  CHECK(cmp.find("REGRESSED") != std::string::npos);
  CHECK(cmp.find("<b>1</b> verdict(s) flipped") != std::string::npos);
  CHECK(cmp.find("tail_40x40") != std::string::npos);
  const std::string table = between(cmp, "<table class=\"diff\">", "</table>");
  const bool full_unflipped = table.find("full_32x48") == std::string::npos || table.find("(unchanged)") != std::string::npos;
  CHECK(full_unflipped);  // listed at most for its timing, never as a flip
  // A run compared with itself: nothing changed.
  in.runs = {runs()[oi], runs()[oi]};
  const std::string same = html_report(in);
  CHECK(same.find("NO REGRESSION") != std::string::npos);
  CHECK(same.find("No verdict, error fraction or timing changed") != std::string::npos);
  // Runs of different suites are not compared.
  in.runs = {runs()[0], runs()[oi]};
  CHECK(html_report(in).find("<section class=\"compare\"") == std::string::npos);
}

TEST_CASE("the failure card of a tile-tail bug draws its error map and places the worst elements in the declared tiles") {
  const std::size_t ni = run_index("tiles", "model_gemm_f32") + 1;
  REQUIRE(ni < runs().size());
  ReportInput in;
  in.runs = {runs()[ni]};
  const std::string html = html_report(in);
  const std::string card = between(html, "<article class=\"failure\"", "</article>");
  REQUIRE(!card.empty());
  CHECK(card.find("tail_40x40") != std::string::npos);
  CHECK(card.find("Error map: tail_40x40") != std::string::npos);
  CHECK(card.find("dashed: the declared 16 \u00d7 16 tiles") != std::string::npos);
  // Rows and columns 32..39 are the partial third tile row / column: every worst element lies there.
  CHECK(card.find("— tile (") != std::string::npos);
  CHECK(card.find("(tail ") != std::string::npos);
  CHECK(card.find("<th>in the declared tile</th>") != std::string::npos);
  CHECK(card.find("/worst_envelope/0/frac") != std::string::npos);  // the map's worst elements, tagged
  // The full-tile case passes, so it draws no map.
  CHECK(html.find("Error map: full_32x48") == std::string::npos);
}

TEST_CASE("an fp64 case's correct-bits map is drawn beside its error map in the failure card") {
  const std::size_t ni = run_index("tiles", "model_gemm_f32") + 1;
  REQUIRE(ni < runs().size());
  RunResult r = runs()[ni];
  CaseResult* failing = nullptr;
  for (CaseResult& c : r.cases)
    if (c.status == CaseStatus::Fail && c.error_map && !failing) failing = &c;
  REQUIRE(failing);
  ReportInput in;
  in.runs = {r};
  CHECK(html_report(in).find("Correct bits: ") == std::string::npos);  // an fp32 case carries no bits map
  ErrorMap& e = *failing->error_map;
  e.min_correct_bits.assign(e.max_frac.size(), 53);
  e.min_correct_bits.back() = 17;
  in.runs = {r};
  const std::string html = html_report(in);
  CHECK(html.find("Correct bits: " + failing->case_id) != std::string::npos);
  const std::string card = between(html, "Correct bits: " + failing->case_id, "</svg>");
  CHECK(card.find("the fewest correct bits in each cell (53: correctly rounded)") != std::string::npos);
  CHECK(card.find(svg::bits_colour(17, 53)) != std::string::npos);
}
