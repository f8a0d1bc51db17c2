// tests/reports/attention_report_test.cpp — the attention and backward-pass sections of the HTML report
// (reports/html/html_attention.cpp): CPU models and fault-injected copies run through the certify path, the report
// written and read by the strict checker (every number equal to the JSON's, every derived position recomputed from the
// case), and the failing output of a wrong backward kernel named while its correct outputs read "within"; a record of
// FlashAttention's 2x rule beside fpcert (the benches' --json) read and rendered.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "reports/escape.hpp"
#include "reports/html/html.hpp"
#include "results/fa_rule.hpp"
#include "results/results_json.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/attention/attention_faults.hpp"
#include "suites/ops/attention_bwd/attention_bwd_faults.hpp"
#include "suites/ops/norm_bwd/norm_bwd_faults.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/report_check.hpp"

#ifndef FPCERT_SOURCE_DIR
#error "FPCERT_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

using namespace fpcert;

namespace {

RunResult run(const char* suite, const char* only, const std::vector<std::string>& kernels) {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  SuiteRunOptions o;
  o.only_case = only;
  return run_suite(*s, kernels, o);
}

/// The row of the output's table in the backward section: "<td>NAME</td><td class="num">...</td><td>VERDICT</td>".
std::string verdict_of(const std::string& html, std::size_t from, const std::string& name) {
  const std::size_t at = html.find("<td>" + name + "</td><td class=\"num\">", from);
  if (at == std::string::npos) return "(no row)";
  const std::size_t v = html.find("</span></td><td>", at);
  const std::size_t e = html.find("</td>", v + 16);
  return html.substr(v + 16, e - v - 16);
}

/// A backward run's report, checked strictly: where its backward section and the tables of the correct kernel and the
/// mutant start (npos: not there).
struct BackwardPage {
  std::string html;
  std::size_t sec = std::string::npos, good = std::string::npos, bad = std::string::npos;
};
BackwardPage backward_page(const RunResult& r, const std::string& tag, const std::string& good, const std::string& mutant) {
  const test::ReportCheck rc = test::check_report_tagged(r, tag);
  INFO(rc.output);
  CHECK(rc.ok);
  BackwardPage p{rc.html};
  p.sec = p.html.find("<section id=\"backward\">");
  if (p.sec == std::string::npos) return p;
  p.good = p.html.find("<h3>" + html_escape(good) + " (cpu)</h3>", p.sec);
  p.bad = p.html.find("<h3>" + html_escape(mutant) + " (cpu)</h3>", p.sec);
  return p;
}

}  // namespace

TEST_CASE("attention forward: per subject the largest error fraction and its query row, equal to the JSON's") {
  // attn_scale_after_softmax: softmax(Q K^T) with the scale applied to O; with scale 1/8 every O is off by a factor 8.
  const std::string mutant = register_attention_mutant("model_attention_f16_flash", Fault::AttnScaleAfterSoftmax);
  const RunResult r = run("attention_quick", "normal_l17_kv2", {"model_attention_f16_flash", "model_attention_f32_naive", mutant});
  REQUIRE(r.cases.size() == 3);
  CHECK(r.cases[0].status == CaseStatus::Pass);
  CHECK(r.cases[1].status == CaseStatus::Pass);
  REQUIRE(r.cases[2].status == CaseStatus::Fail);
  CHECK(r.cases[2].metrics.err_frac_max > 1);
  for (const CaseResult& c : r.cases) {
    INFO(c.kernel);
    REQUIRE(c.worst_index >= 0);
    CHECK(c.achieved.at("attention_len_q") == 17);
    CHECK(c.worst_index < c.m * c.n);  // rows batch x heads x len_q of head_dim
  }
  const test::ReportCheck rc = test::check_report_tagged(r, "attention_report");
  INFO(rc.output);
  CHECK(rc.ok);
  const std::string& h = rc.html;
  const std::size_t sec = h.find("<section id=\"attention\">");
  REQUIRE(sec != std::string::npos);
  CHECK(h.find("<section id=\"backward\">") == std::string::npos);
  for (const std::string& k : {std::string("model_attention_f16_flash (cpu)"), std::string("model_attention_f32_naive (cpu)"), mutant + " (cpu)"})
    CHECK(h.find("<tr><td>" + html_escape(k) + "</td>", sec) != std::string::npos);
  // The mutant's largest fraction is shown as beyond the bound, pointing at its case's metrics.
  CHECK(h.find("class=\"v badt\" data-src=\"r0\" data-ptr=\"/cases/2/metrics/err_frac_max\"", sec) != std::string::npos);
  CHECK(h.find("data-derive=\"query:worst\"", sec) != std::string::npos);
  CHECK(h.find("Where in the sequence each case", sec) != std::string::npos);  // the plot
}

TEST_CASE("attention backward: dQ, dK, dV graded apart; a dQ-only fault named on dQ, dK and dV within") {
  // abwd_dq_scale_missing: dQ = dS K without s; dK and dV do not read dQ.
  const std::string mutant = register_attention_bwd_mutant("model_attention_bwd_f16_flash", Fault::AbwdDqScaleMissing);
  const RunResult r = run("attention_backward_quick", "normal_l17_kv2", {"model_attention_bwd_f16_flash", mutant});
  REQUIRE(r.cases.size() == 2);
  for (const CaseResult& c : r.cases) {
    INFO(c.kernel);
    // The case's largest fraction is the largest of its outputs' (one grading, split by output).
    double most = 0;
    for (const char* n : {"dQ", "dK", "dV"}) {
      REQUIRE(c.achieved.count(std::string("attention_bwd_max_error_over_bound_") + n));
      most = std::max(most, c.achieved.at(std::string("attention_bwd_max_error_over_bound_") + n));
      const double row = c.achieved.at(std::string("attention_bwd_worst_row_") + n);
      CHECK(row >= 0);
      CHECK(row < (n[1] == 'Q' ? c.m : 2 * 2 * c.k));  // dQ: batch x heads_q x len_q rows; dK, dV: batch 2 x heads_kv 2 x len_k
    }
    CHECK(most == c.metrics.err_frac_max);
  }
  CHECK(r.cases[0].status == CaseStatus::Pass);
  REQUIRE(r.cases[1].status == CaseStatus::Fail);
  CHECK(r.cases[1].achieved.at("attention_bwd_max_error_over_bound_dQ") > 1);
  CHECK(r.cases[1].achieved.at("attention_bwd_max_error_over_bound_dK") <= 1);
  CHECK(r.cases[1].achieved.at("attention_bwd_max_error_over_bound_dV") <= 1);

  const BackwardPage p = backward_page(r, "attention_bwd_report", "model_attention_bwd_f16_flash", mutant);
  const std::string& h = p.html;
  const std::size_t sec = p.sec, good = p.good, bad = p.bad;
  REQUIRE(good != std::string::npos);
  REQUIRE(bad != std::string::npos);
  for (const char* n : {"dQ", "dK", "dV"}) CHECK(verdict_of(h, good, n) == "within");
  CHECK(verdict_of(h, bad, "dQ") == "<b class=\"badt\">beyond the bound</b>");
  CHECK(verdict_of(h, bad, "dK") == "within");
  CHECK(verdict_of(h, bad, "dV") == "within");
  CHECK(h.find("data-derive=\"key:dK\"", sec) != std::string::npos);
  CHECK(h.find("data-derive=\"query:dQ\"", sec) != std::string::npos);
}

TEST_CASE("norm backward: dx and dgamma/dbeta apart; a dgamma fault named on dgamma/dbeta, dx within") {
  // nbwd_dgamma_no_xhat: dgamma = sum dy, x-hat left out; dx is computed apart.
  const std::string mutant = register_norm_bwd_mutant("model_layernorm_bwd_f32", Fault::NbwdDGammaNoXhat);
  const RunResult r = run("norm_backward_quick", "uniform_n33", {"model_layernorm_bwd_f32", mutant});
  REQUIRE(r.cases.size() == 2);
  CHECK(r.cases[0].status == CaseStatus::Pass);
  REQUIRE(r.cases[1].status == CaseStatus::Fail);
  const BackwardPage p = backward_page(r, "norm_bwd_report", "model_layernorm_bwd_f32", mutant);
  const std::string& h = p.html;
  const std::size_t good = p.good, bad = p.bad;
  REQUIRE(good != std::string::npos);
  REQUIRE(bad != std::string::npos);
  CHECK(verdict_of(h, good, "dx") == "within");
  CHECK(verdict_of(h, good, "dgamma/dbeta") == "within");
  CHECK(verdict_of(h, bad, "dx") == "within");
  CHECK(verdict_of(h, bad, "dgamma/dbeta") == "<b class=\"badt\">beyond the bound</b>");
}

TEST_CASE("FlashAttention's 2x rule beside fpcert: a bench record read by fpcert report, each count tagged, verdicts in words") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fpcert_fa_rule_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The shape bench_attention_fa_rule --json writes: the correct kernel refused by the rule on one case (a false alarm),
  // one fault both catch (its lhs infinite), one only fpcert catches (the rule's lhs / rhs 0.5: accepted).
  FaRuleRecord rec{"attention", "model_attention_f16_flash", "attention", "max|out - out_ref| <= 2 max|out_pt - out_ref| + 1e-5",
                   {{"correct kernel", true, 13, 1, 0, 1.25}, {"attn_zeros", false, 13, 13, 13, std::numeric_limits<double>::infinity()}, {"attn_p_rounded_lower", false, 13, 0, 4, 0.5}}};
  write_file_atomic((dir / "f0.json").string(), fa_rule_to_json(rec).dump(1));
  ReportInput in;
  read_report_file((dir / "f0.json").string(), in);
  REQUIRE(in.fa_rules.size() == 1);
  CHECK(in.runs.empty());
  CHECK(in.fa_rules[0].rows.size() == 3);
  CHECK(in.fa_rules[0].rows[2].worst_ratio == 0.5);
  CHECK(std::isinf(in.fa_rules[0].rows[1].worst_ratio));  // written "inf": JSON has no infinity
  write_html_report((dir / "r.html").string(), in);
  const std::string cmd = "python3 '" + std::string(FPCERT_SOURCE_DIR) + "/tests/reports/check_html.py' '" + (dir / "r.html").string() +
                          "' --src 'f0=" + (dir / "f0.json").string() + "' --require-tagged > '" + (dir / "check.txt").string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir / "check.txt"), page(dir / "r.html");
  const std::string out{std::istreambuf_iterator<char>(log), {}}, h{std::istreambuf_iterator<char>(page), {}};
  INFO(out);
  CHECK((WIFEXITED(rc) && WEXITSTATUS(rc) == 0));
  CHECK(h.find("<section id=\"fa-rule-0\">") != std::string::npos);
  CHECK(h.find("Faults caught: fpcert 2 of 2, the 2x rule 1 of 2.") != std::string::npos);
  CHECK(h.find("<tr><td>correct kernel</td>") != std::string::npos);
  CHECK(h.find("<b class=\"badt\">false alarm</b>") != std::string::npos);  // the rule on the correct kernel
  CHECK(h.find("<b class=\"badt\">missed</b>") != std::string::npos);       // the rule on attn_p_rounded_lower
  CHECK(h.find("data-ptr=\"/rows/2/fpcert_failed\"") != std::string::npos);

  // A record without its rows: refused, naming the file and the field.
  nlohmann::json broken = fa_rule_to_json(rec);
  broken.erase("rows");
  write_file_atomic((dir / "broken.json").string(), broken.dump());
  ReportInput none;
  try {
    read_report_file((dir / "broken.json").string(), none);
    FAIL("a record without rows was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("broken.json") != std::string::npos);
    CHECK(std::string(e.what()).find("'rows'") != std::string::npos);
  }
  std::error_code ec;
  if (!std::getenv("FPCERT_KEEP_TEST_FILES")) fs::remove_all(dir, ec);
}
