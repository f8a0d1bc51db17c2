// tests/reports/html_test.cpp — the HTML report of real results (CPU models graded by the runner):
// strict parse, every number equal to the JSON's, verdict, failures with reproduction commands
// and worst elements, the gate arithmetic, the plots fed by the right cases; the conversion reader.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "base/error.hpp"
#include "reports/escape.hpp"
#include "reports/html/html.hpp"
#include "reports/html/html_parts.hpp"
#include "reports/html/svg.hpp"
#include "results/results_json.hpp"
#include "suites/experiments/presets.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/support/test_seed.hpp"

#ifndef FPCERT_SOURCE_DIR
#error "FPCERT_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

using namespace fpcert;
namespace fs = std::filesystem;

namespace {

/// A scratch directory for this process, removed at exit unless FPCERT_KEEP_TEST_FILES is set
/// (the checker's output for a failing test is in it: <file>.check.txt).
fs::path scratch() {
  struct Dir {
    fs::path p = fs::temp_directory_path() / fmt::format("fpcert_html_test_{}", ::getpid());
    Dir() { fs::create_directories(p); }
    ~Dir() {
      std::error_code ec;
      if (!std::getenv("FPCERT_KEEP_TEST_FILES")) fs::remove_all(p, ec);
    }
  };
  static const Dir d;
  return d.p;
}

void write(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

/// The sample runs are computed once (they are real runs of CPU models).
const std::vector<RunResult>& runs() {
  static const std::vector<RunResult> r = test::sample_runs(test::seed());
  return r;
}

/// What `fpcert convert --exhaustive --json` writes (cli/cmd/cmd_convert.cpp), plus fields a later
/// version may add: the reader must ignore them.
const char* kConversionJson = R"({
  "kind": "conversion", "command": "fpcert convert --from bf16 --to f16 --exhaustive --json c.json",
  "device": "cpu", "subject": "fpcert fast path", "from": "bf16", "to": "f16", "rounding": "rn",
  "saturation": "inf", "nan_payload": "preserve", "seed": 0, "first": 0, "patterns": 65536,
  "mpfr_checked": 65536,
  "outcomes": {"exact": 24832, "rounded": 1536, "overflow": 30464, "underflow_subnormal": 3584,
               "underflow_zero": 3582, "nan": 1536, "inf": 2},
  "mismatches": 2, "model_mismatches": 0, "nan_differences": 0,
  "listed": [{"src_bits": "0x4780", "src_value": "65536", "expected_bits": "0x7c00", "got_bits": "0x7bff",
              "outcome": "overflow", "model_bug": false, "note": "an extra field"}],
  "seconds": 0.0421, "passed": false,
  "schema_version": 2, "scale": {"mode": "pow2", "shift": -8}
})";

/// Run the strict checker; returns its exit status and keeps its output for the failure message.
int check_html(const fs::path& html, const std::vector<std::pair<std::string, fs::path>>& srcs, std::string& output,
               bool require_tagged = true) {
  std::string cmd = fmt::format("python3 '{}/tests/reports/check_html.py' '{}'", FPCERT_SOURCE_DIR, html.string());
  for (const auto& [id, p] : srcs) cmd += fmt::format(" --src '{}={}'", id, p.string());
  if (require_tagged) cmd += " --require-tagged";
  const fs::path out = html.string() + ".check.txt";
  cmd += fmt::format(" > '{}' 2>&1", out.string());
  const int rc = std::system(cmd.c_str());
  std::ifstream f(out);
  output.assign(std::istreambuf_iterator<char>(f), {});
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string text_of(const std::string& s) { return html_escape(s); }

}  // namespace

TEST_CASE("the sample results are real: rounding happened and some cases pass and some fail") {
  int pass = 0, fail = 0;
  for (const auto& r : runs())
    for (const auto& c : r.cases) {
      pass += c.status == CaseStatus::Pass;
      fail += c.status == CaseStatus::Fail;
      if (c.status == CaseStatus::Pass) CHECK(c.metrics.max_abs > 0);  // a zero error would prove nothing
    }
  CHECK(pass > 10);
  CHECK(fail >= 2);  // the mutant, at least
}

TEST_CASE("the report parses under the strict checker and every number shown equals the JSON's") {
  ReportInput in;
  in.runs = runs();
  in.conversions.push_back(conversion_from_json(nlohmann::json::parse(kConversionJson)));
  std::vector<std::pair<std::string, fs::path>> srcs;
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const fs::path p = scratch() / fmt::format("r{}.json", i);
    write(p, to_json(in.runs[i]).dump(1));
    srcs.push_back({fmt::format("r{}", i), p});
  }
  write(scratch() / "c0.json", kConversionJson);
  srcs.push_back({"c0", scratch() / "c0.json"});
  const fs::path html = scratch() / "report.html";
  write_html_report(html.string(), in);
  std::string out;
  const int rc = check_html(html, srcs, out);
  INFO(out);
  CHECK(rc == 0);
  // It checked many numbers, not none.
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("([0-9]+) numbers checked")));
  CHECK(std::stoi(m[1]) > 500);

  // The checker itself fails on a wrong number and on broken nesting (it can fail).
  std::string bad = html_report(in);
  const auto pos = bad.find("data-ptr=\"/cases/0/metrics/max_abs\"");
  REQUIRE(pos != std::string::npos);
  const auto gt = bad.find('>', pos);
  const auto lt = bad.find('<', gt);
  bad.replace(gt + 1, lt - gt - 1, "9.999");
  write(scratch() / "bad_number.html", bad);
  CHECK(check_html(scratch() / "bad_number.html", srcs, out) == 1);
  CHECK(out.find("expected") != std::string::npos);
  std::string nest = html_report(in);
  nest.replace(nest.find("</td>"), 5, "</th>");
  write(scratch() / "bad_nesting.html", nest);
  CHECK(check_html(scratch() / "bad_nesting.html", srcs, out) == 1);
}

TEST_CASE("verdict banner and failures with their reproduction command and worst elements and the gate arithmetic") {
  const auto& rs = runs();
  const std::string html = html_report(rs);
  bool all_pass = true;
  for (const auto& r : rs) all_pass &= r.passed();
  REQUIRE(!all_pass);
  CHECK(html.find("<div class=\"verdict\">FAILED</div>") != std::string::npos);
  CHECK(html.find("CERTIFIED</div>") == std::string::npos);
  for (const auto& r : rs) {
    CHECK(html.find(text_of(r.env.command)) != std::string::npos);
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      const CaseResult& c = r.cases[i];
      CAPTURE(c.case_id);
      CAPTURE(c.kernel);
      if (c.status == CaseStatus::Fail) {
        REQUIRE(!c.repro.empty());
        CHECK(html.find("<pre class=\"repro\"><code>" + text_of(c.repro) + "</code></pre>") != std::string::npos);
        CHECK(html.find(text_of(c.reason)) != std::string::npos);
        for (const auto& w : c.worst) CHECK(html.find("<code>" + text_of(w.got_bits) + "</code>") != std::string::npos);
      }
      if (c.status == CaseStatus::Pass || c.status == CaseStatus::Fail) {
        // The bound's terms with their formulas, and the allowed-error inequality.
        for (const auto& t : c.bound.terms) CHECK(html.find("<code>" + text_of(t.formula) + "</code>") != std::string::npos);
        CHECK(html.find(text_of(c.bound.allowed)) != std::string::npos);
        CHECK(html.find(text_of(c.bound.arithmetic)) != std::string::npos);
      }
    }
  }
  // A run that passes on its own reads CERTIFIED.
  RunResult ok = rs.front();
  std::erase_if(ok.cases, [](const CaseResult& c) { return c.kernel != "model_gemm_f32"; });
  REQUIRE(!ok.cases.empty());
  REQUIRE(ok.passed());
  const std::string good = html_report(std::vector<RunResult>{ok});
  CHECK(good.find("<div class=\"verdict\">CERTIFIED</div>") != std::string::npos);
  CHECK(good.find("FAILED") == std::string::npos);
}

TEST_CASE("plots: error vs K has a point per graded K-family case and there are kappa and ULP and exponent plots") {
  const auto& rs = runs();
  const std::string html = html_report(rs);
  const RunResult& ak = rs[0];
  REQUIRE(ak.suite == "accuracy-vs-k");
  int graded = 0;
  for (const auto& c : ak.cases) graded += c.status == CaseStatus::Pass || c.status == CaseStatus::Fail;
  // Each point carries a hover title "<case> on <kernel>: max rel ..., bound rtol ...".
  const std::regex tip("<title>k[0-9]+_(uniform|normal) on [a-z0-9_]+: max rel [^<]*bound rtol");
  const auto n = std::distance(std::sregex_iterator(html.begin(), html.end(), tip), std::sregex_iterator());
  CHECK(n == graded);
  CHECK(html.find("Error vs K (independent gate)") != std::string::npos);
  CHECK(count(html, "reference slope") >= 2);                // sqrt K and K
  for (const auto& k : ak.kernels) CHECK(html.find("bound rtol (" + k + ")") != std::string::npos);
  CHECK(html.find("Error vs condition number") != std::string::npos);
  CHECK(html.find("ULP error: k64_uniform") != std::string::npos);
  CHECK(html.find("Exponent range: gate fraction") != std::string::npos);
  // The heat map has a cell per (exponent case, kernel), each with its tip.
  const RunResult& ex = rs[3];
  REQUIRE(ex.suite == "exponent-range");
  for (const auto& c : ex.cases) {
    if (c.status != CaseStatus::Pass && c.status != CaseStatus::Fail) continue;
    CHECK(html.find(fmt::format("<title>{} on {}: gate fraction {:.4g}", c.case_id, c.kernel, c.gate_fraction)) != std::string::npos);
  }
  // No SVG coordinate is NaN or Inf.
  CHECK(!std::regex_search(html, std::regex(R"re(\s(x|y|cx|cy|d|points|width|height)="[^"]*(nan|inf))re")));
}

TEST_CASE("every case id and reason and spec is escaped") {
  RunResult r = runs()[1];
  r.cases[0].case_id = "<script>alert(1)</script>";
  r.cases[0].reason = "a & b < c";
  r.cases[0].status = CaseStatus::Fail;
  r.cases[0].spec = "\"quoted\" 'spec'";
  const std::string html = html_report(std::vector<RunResult>{r});
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("a &amp; b &lt; c") != std::string::npos);
  const fs::path p = scratch() / "escaped.html";
  write(p, html);
  write(scratch() / "escaped.json", to_json(r).dump());
  std::string out;
  CHECK_MESSAGE(check_html(p, {{"r0", scratch() / "escaped.json"}}, out) == 0, out);
}

TEST_CASE("conversion records: the CPU form of fpcert convert with extra fields ignored and outcome lists accepted") {
  const ConversionResult c = conversion_from_json(nlohmann::json::parse(kConversionJson));
  CHECK(c.from == "bf16");
  CHECK(c.to == "f16");
  CHECK(c.patterns == 65536);
  CHECK(c.mismatches == 2);
  CHECK(!c.passed);
  REQUIRE(c.outcomes.size() == 7);
  std::uint64_t total = 0;
  for (const auto& o : c.outcomes) total += o.count;
  CHECK(total == c.patterns);
  REQUIRE(c.listed.size() == 1);
  CHECK(c.listed[0].got_bits == "0x7bff");

  auto j = nlohmann::json::parse(R"({"kind":"conversion","from":"f32","to":"e4m3","outcomes":[{"name":"exact","count":3},{"class":"nan","count":1}],"mismatches":0})");
  const ConversionResult l = conversion_from_json(j);
  REQUIRE(l.outcomes.size() == 2);
  CHECK(l.outcomes_listed);
  CHECK(l.outcomes[1].name == "nan");
  CHECK(l.passed);  // no "passed": no mismatches means passed
  CHECK_THROWS_AS(conversion_from_json(nlohmann::json::parse(R"({"kind":"conversion"})")), InputError);

  // Files: one object, a {"conversions": [...]} object, JSON lines; results .json and .jsonl.
  ReportInput in;
  write(scratch() / "one.json", kConversionJson);
  read_report_file((scratch() / "one.json").string(), in);
  write(scratch() / "many.json", fmt::format("{{\"conversions\": [{}, {}]}}", kConversionJson, j.dump()));
  read_report_file((scratch() / "many.json").string(), in);
  write(scratch() / "lines.jsonl", nlohmann::json::parse(kConversionJson).dump() + "\n" + j.dump() + "\n");
  read_report_file((scratch() / "lines.jsonl").string(), in);
  CHECK(in.conversions.size() == 5);
  write(scratch() / "run.json", to_json(runs()[1]).dump());
  read_report_file((scratch() / "run.json").string(), in);
  std::string lines;
  for (const auto& cs : runs()[1].cases) lines += to_json(cs).dump() + "\n";
  write(scratch() / "partial.jsonl", lines);
  read_report_file((scratch() / "partial.jsonl").string(), in);
  REQUIRE(in.runs.size() == 2);
  CHECK(in.runs[1].cases.size() == runs()[1].cases.size());

  // Bad files: a clear message naming the file.
  for (const char* text : {"", "{\"hello\": 1}", "not json at all\n", "[1, 2, 3]"}) {
    CAPTURE(text);
    const fs::path p = scratch() / "bad.json";
    write(p, text);
    try {
      read_report_file(p.string(), in);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(read_report_file((scratch() / "does-not-exist.json").string(), in), InputError);
}

TEST_CASE("experiment records and preset runs: tables tagged into their JSON, read back by fpcert report") {
  // A real preset record (a small split-scalar panorama run), with the values a table may hold:
  // non-finite numbers (json_number strings), null, integers, booleans.
  ExperimentRecord e = split_scalar_panorama_record(split_scalar_panorama(3000, test::seed()), 3000, test::seed());
  e.env = runs()[0].env;
  ExperimentTable extra;
  extra.title = "edge values";
  extra.columns = {{"name", "name", ""}, {"x", "x", "e"}, {"n", "n", "int"}, {"flag", "flag", "g"}};
  extra.rows.push_back({{"name", "inf"}, {"x", json_number(INFINITY)}, {"n", -3}, {"flag", true}});
  extra.rows.push_back({{"name", "<nan> & null"}, {"x", json_number(NAN)}, {"n", nullptr}, {"flag", false}});
  e.tables.push_back(extra);
  const fs::path ej = scratch() / "e0.json";
  write(ej, to_json(e).dump(2));
  // A preset run: the source's metrics table reads the run's own metrics.
  RunResult r = runs()[0];
  r.notes["preset"] = "panorama";
  const fs::path rj = scratch() / "r0p.json";
  write(rj, to_json(r).dump(1));
  ReportInput in;
  read_report_file(rj.string(), in);
  read_report_file(ej.string(), in);  // recognised as an experiment record, not a run
  REQUIRE(in.runs.size() == 1);
  REQUIRE(in.experiments.size() == 1);
  CHECK(in.experiments[0].method == e.method);
  CHECK(in.experiments[0].tables.size() == 2);
  const fs::path html = scratch() / "experiments.html";
  write_html_report(html.string(), in);
  std::string out;
  const int rc = check_html(html, {{"r0", rj}, {"e0", ej}}, out);
  INFO(out);
  CHECK(rc == 0);
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("([0-9]+) numbers checked")));
  CHECK(std::stoi(m[1]) > 500);
  const std::string s = html_report(in);
  CHECK(s.find("preset <code>panorama</code>") != std::string::npos);
  CHECK(s.find("E<sub>max</sub> (row-sum)") != std::string::npos);
  CHECK(s.find("data-src=\"r0\" data-ptr=\"/cases/0/metrics/rowsum_rel\"") != std::string::npos);
  CHECK(s.find("data-src=\"e0\" data-ptr=\"/tables/0/rows/6/p99\"") != std::string::npos);  // 9xbf16's P99
  CHECK(s.find(html_escape(e.method)) != std::string::npos);
  CHECK(s.find("&lt;nan&gt; &amp; null") != std::string::npos);
  // A record that fails its own checks turns the banner.
  e.passed = false;
  ReportInput bad;
  bad.experiments.push_back(e);
  CHECK(html_report(bad).find("<div class=\"verdict\">FAILED</div>") != std::string::npos);
  // A malformed record is an InputError naming the file.
  write(scratch() / "bad_exp.json", R"({"kind": "experiment", "tables": [{"rows": 3}]})");
  CHECK_THROWS_AS(read_report_file((scratch() / "bad_exp.json").string(), in), InputError);
}

TEST_CASE("a conversion case shows its declared NaN convention and what it writes into the destination") {
  auto j = nlohmann::json::parse(kConversionJson);
  j["nan_payload"] = "nvidia";
  CHECK(html::conversion_section(conversion_from_json(j), "c", "c0", "").find("<code>nvidia</code>: every NaN input -&gt; 0x7fff") !=
        std::string::npos);
  j["to"] = "e2m1";
  j["nan_payload"] = "ml_dtypes";
  CHECK(html::conversion_section(conversion_from_json(j), "c", "c0", "").find("<code>ml_dtypes</code>: +NaN -&gt; 0x08, -NaN -&gt; 0x00") !=
        std::string::npos);
  // A PRESERVE of a plugin built for ABI minor 0 or 1 keeps its leniency, and the report says so.
  j["to"] = "f16";
  j["nan_payload"] = "preserve";
  j["nan_counted_apart"] = true;
  const std::string s = html::conversion_section(conversion_from_json(j), "c", "c0", "");
  CHECK(s.find("sign and the payload&#39;s top bits kept") != std::string::npos);
  CHECK(s.find("ABI minor 0 or 1") != std::string::npos);
}
