// tests/reports/audit_html_test.cpp — the audit's section of the HTML report (reports/html/html_audit.cpp): the page
// passes the strict checker with every number resolved in the audit's JSON (tests/reports/check_html.py --src a0=...),
// and the power table read back from the HTML gives each mutant's verdict for the rule and for fpcert side by side.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "base/atomic_file.hpp"
#include "reports/html/html.hpp"

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

/// A record as `fpcert audit` makes one (written by hand: the reports layer reads data only).
AuditRecord sample_audit() {
  AuditRecord r;
  r.kernel = "model_gemm_bf16_f32acc";
  r.traits = "in bf16/bf16 (rn) operand bf16/bf16 exact products, acc f32 (rn), out f32; order unknown";
  r.m = 16, r.n = 16, r.k = 64;
  r.inputs = "uniform:lo=0,hi=0.0078125";
  r.seeds = {1, 2, 3};
  r.rule = "allclose:rtol=1e-2,atol=1e-2";
  r.rule_text = "|got - ref| <= 0.01 + 0.01 |ref| <every element> & <a \"quoted\" word>";  // escaped on the page
  r.reference = "the exact product";
  r.elements = 768;
  r.admit_zero = 768;
  r.ref_abs_min = 4.1e-4, r.ref_abs_max = 2.5e-3;
  r.findings = {"an output of 0 meets the rule on 100 % of the elements"};
  AuditVariantRow v;
  v.name = "kernel model_gemm_bf16_f32acc", v.order = "unknown", v.runs = 3, v.fpcert = "pass 3/3", v.worst_ratio = 1.25e-4;
  r.variants.push_back(v);
  v.name = "order pairwise", v.order = "pairwise", v.fpcert = "", v.rule_failed = 1, v.labels = {{"reduction order", 1}}, v.worst_ratio = 1.5;
  r.variants.push_back(v);
  r.variant_runs = 6, r.false_alarm_runs = 1;
  // zeros: the rule passes it, fpcert refuses it; acc_f16: both refuse it; a dormant one
  r.mutants.push_back({"zeros", "every output +0", 3, 0, 3, 3, "fail: vacuous", 1.0});
  r.mutants.push_back({"acc_f16", "accumulate in f16", 3, 0, 0, 3, "fail: bitwise", 0.03125});
  r.mutants.push_back({"guard_write", "writes past C", 3, 3, 3, 3, "fail: guard", 0.0});
  r.repro_runs = 3, r.determinism = "deterministic";
  r.batch_declared = true, r.batch_note = "--batch-invariant";
  r.batch_rows = {{2, 2, 0, ""}, {64, 3, 3, "row 0 of A at position 0 of M = 64: C[0, 1] = 0x1p-9, at M = 1 0x1.000002p-9"}};
  r.seconds = 0.5;
  return r;
}

/// The cells of each body row of the table of class `cls`, tags stripped.
std::vector<std::vector<std::string>> table_rows(const std::string& html, const std::string& cls) {
  const auto at = html.find("<table class=\"" + cls + "\">");
  REQUIRE(at != std::string::npos);
  const auto body = html.find("<tbody>", at), end = html.find("</tbody>", at);
  const std::string t = html.substr(body, end - body);
  std::vector<std::vector<std::string>> rows;
  const std::regex tr("<tr[^>]*>(.*?)</tr>"), td("<td[^>]*>(.*?)</td>"), tag("<[^>]*>");
  for (auto i = std::sregex_iterator(t.begin(), t.end(), tr); i != std::sregex_iterator(); ++i) {
    const std::string row = (*i)[1];
    std::vector<std::string> cells;
    for (auto j = std::sregex_iterator(row.begin(), row.end(), td); j != std::sregex_iterator(); ++j)
      cells.push_back(std::regex_replace(std::string((*j)[1]), tag, ""));
    rows.push_back(cells);
  }
  return rows;
}

/// The record's JSON through the report's reader and renderer, as `fpcert report STEM.json -o STEM.html` does, the page
/// checked by tests/reports/check_html.py with every number resolved in that JSON; the page.
std::string rendered_and_checked(const AuditRecord& a, const std::string& stem) {
  fs::create_directories("audit_html");
  const fs::path json = "audit_html/" + stem + ".json", page = "audit_html/" + stem + ".html";
  write_file_atomic(json.string(), audit_to_json(a).dump(2));
  ReportInput in;
  read_report_file(json.string(), in);
  REQUIRE(in.audits.size() == 1);
  const std::string html = html_report(in);
  write_file_atomic(page.string(), html);
  const std::string check = "audit_html/check_" + stem + ".txt";
  const std::string cmd = fmt::format("python3 '{}/tests/reports/check_html.py' '{}' --src 'a0={}' --require-tagged > '{}' 2>&1",
                                      FPCERT_SOURCE_DIR, page.string(), json.string(), check);
  const int rc = std::system(cmd.c_str());
  std::ifstream f(check);
  const std::string out{std::istreambuf_iterator<char>(f), {}};
  CHECK_MESSAGE((WIFEXITED(rc) && WEXITSTATUS(rc) == 0), out);
  return html;
}

}  // namespace

TEST_CASE("audit html: a reviewer's table of the rule, fpcert beside it, every number from the audit JSON") {
  const AuditRecord a = sample_audit();
  const std::string html = rendered_and_checked(a, "a");
  CHECK(html.find("&lt;every element&gt; &amp; &lt;a &quot;quoted&quot; word&gt;") != std::string::npos);
  CHECK(html.find("FAILED") != std::string::npos);  // the rule is wanting (a false alarm; zeros passed): the banner says so

  // The power table: mutant, fault, runs, dormant, rule passes, the rule, fpcert refuses, fpcert, defect.
  const auto power = table_rows(html, "audit-power");
  REQUIRE(power.size() == 3);
  REQUIRE(power[0].size() == 9);
  CHECK(power[0][0] == "zeros");
  CHECK(power[0][5] == "passed");  // the rule passes the zeros kernel on every seed
  CHECK(power[0][7] == "caught");  // fpcert refuses it on every seed
  CHECK(power[1][0] == "acc_f16");
  CHECK(power[1][5] == "caught");
  CHECK(power[1][8] == "0.03125");
  CHECK(power[2][5] == "dormant");
  // The summary: false alarms, mutants caught of the 2 that changed the output, smallest defect detected: the rule
  // catches acc_f16 only (0.03125), fpcert both zeros (1) and acc_f16, so its smallest is 0.03125 too.
  const auto sum = table_rows(html, "audit-summary");
  REQUIRE(sum.size() == 2);
  CHECK(sum[0][1] == "1");
  CHECK(sum[0][2] == "1");
  CHECK(sum[0][3] == "0.03125");
  CHECK(sum[1][2] == "2");
  CHECK(sum[1][3] == "0.03125");
  // False alarms with their labels, and the batch table.
  const auto fa = table_rows(html, "audit-false-alarms");
  REQUIRE(fa.size() == 2);
  CHECK(fa[1][6] == "reduction order × 1");
  const auto batch = table_rows(html, "audit-batch");
  REQUIRE(batch.size() == 2);
  CHECK(batch[1][0] == "64");
  CHECK(batch[1][2] == "3");
  CHECK(html.find("reproducible</b> over") != std::string::npos);
}

TEST_CASE("audit html: a softmax audit names its rows and logits; an allowance is listed; the page passes the checker") {
  AuditRecord a = sample_audit();
  a.op = "softmax";
  a.allow = {"tf32"};  // (a GEMM option; the section lists whatever the record holds)
  CHECK(audit_from_json(audit_to_json(a)).op == "softmax");
  const std::string html = rendered_and_checked(a, "s");
  CHECK(html.find("softmax over") != std::string::npos);
  CHECK(html.find("<dt>allowed</dt><dd><code>tf32</code>") != std::string::npos);
}
