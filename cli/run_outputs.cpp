// cli/run_outputs.cpp — verdicts, JSON, JUnit and HTML of a run (certify, run-suite, merge).
#include "cli/run_outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "base/atomic_file.hpp"
#include "base/input_file.hpp"
#include "cli/exit_codes.hpp"
#include "reports/html/html.hpp"
#include "reports/junit.hpp"
#include "reports/table.hpp"
#include "results/compare.hpp"
#include "results/results_json.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::cli {

RunResult join_suites(const std::vector<RunResult>& rs) {
  if (rs.size() == 1) return rs.front();
  RunResult m;
  m.kind = rs.front().kind;
  m.env = rs.back().env;
  m.kernels = rs.front().kernels;
  for (const auto& r : rs) {
    for (const auto& k : r.kernels)  // suites of several operations hold different kernels: every one, once
      if (std::find(m.kernels.begin(), m.kernels.end(), k) == m.kernels.end()) m.kernels.push_back(k);
    m.suite += (m.suite.empty() ? "" : "+") + r.suite;
    m.cases.insert(m.cases.end(), r.cases.begin(), r.cases.end());
    m.mutation.insert(m.mutation.end(), r.mutation.begin(), r.mutation.end());
    for (const auto& [k, v] : r.notes) m.notes.emplace(k, v);
  }
  m.notes["suites"] = m.suite;
  return m;
}

std::vector<RunResult> split_suites(const RunResult& r) {
  if (!r.notes.count("suites")) return {r};
  std::vector<RunResult> out;
  std::string names = r.notes.at("suites");
  for (std::size_t from = 0;;) {
    const auto plus = names.find('+', from);
    RunResult s;
    s.kind = r.kind;
    s.env = r.env;
    s.kernels = r.kernels;
    s.suite = names.substr(from, plus == std::string::npos ? std::string::npos : plus - from);
    for (const auto& c : r.cases)
      if (c.suite == s.suite) s.cases.push_back(c);
    for (const auto& m : r.mutation)
      if (m.suite == s.suite) s.mutation.push_back(m);
    s.notes = r.notes;
    s.notes.erase("suites");
    out.push_back(std::move(s));
    if (plus == std::string::npos) break;
    from = plus + 1;
  }
  return out;
}

std::string junit_all(const std::vector<RunResult>& rs) {
  if (rs.size() == 1) return junit_xml(rs.front());
  std::string body;
  std::size_t tests = 0;
  int failures = 0, errors = 0, skipped = 0;
  double secs = 0;
  for (const auto& r : rs) {
    const std::string x = junit_xml(r);
    const auto b = x.find("  <testsuite ");
    const auto e = x.rfind("</testsuites>");
    if (b != std::string::npos && e != std::string::npos) body += x.substr(b, e - b);
    tests += r.cases.size();
    failures += r.count(CaseStatus::Fail);
    errors += r.count(CaseStatus::Crashed) + r.count(CaseStatus::Hung) + r.count(CaseStatus::Error);
    skipped += r.count(CaseStatus::NotSupported);
    for (const auto& c : r.cases) secs += c.wall_seconds;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fpcert\" tests=\"{}\" failures=\"{}\" "
                     "errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n{}</testsuites>\n",
                     tests, failures, errors, skipped, secs, body);
}

void complete_certify(RunResult& r, bool evidence) {
  std::erase_if(r.mutation, [&r](const MutationScore& s) {
    for (const CaseResult& c : r.cases)
      if (c.suite == s.suite && c.kernel == s.kernel && c.status != CaseStatus::Pass && c.status != CaseStatus::NotSupported) {
        r.notes["mutation " + s.kernel] = "not measured: the kernel itself failed";
        return true;
      }
    return false;
  });
  if (!evidence) return;
  const std::size_t before = r.cases.size();
  require_evidence(r);
  // An evidence case belongs to the suite that ran its kernel (the last one that did), else to the last suite.
  const std::string last = split_suites(r).back().suite;
  for (std::size_t i = before; i < r.cases.size(); ++i) {
    std::string suite = last;
    for (std::size_t j = 0; j < before; ++j)
      if (r.cases[j].kernel == r.cases[i].kernel) suite = r.cases[j].suite;
    r.cases[i].suite = suite;
  }
}

int write_run_outputs(const RunResult& r, const OutputPaths& out, bool merged, const RunResult* old,
                      const std::vector<DiagnosisRecord>* diagnoses) {
  const std::vector<RunResult> per_suite = split_suites(r);
  if (merged)
    for (const auto& s : per_suite) {
      if (per_suite.size() > 1) fmt::print("== suite {} ==\n", s.suite);
      std::fputs((s.kind == RunKind::Conversion ? conversion_case_header() : case_header()).c_str(), stdout);
      for (const auto& c : s.cases) std::fputs(case_row(c).c_str(), stdout);
      std::fputs(verdict_text(s).c_str(), stdout);
    }
  if (per_suite.size() > 1) fmt::print("== all suites ({}) ==\n{}", r.suite, verdict_text(r));
  if (!out.json.empty()) {
    write_file_atomic(out.json, to_json(r).dump(2) + "\n");
    fmt::print("results: {}\n", printable(out.json));
  }
  if (!out.junit.empty()) {
    write_file_atomic(out.junit, junit_all(per_suite));
    fmt::print("JUnit: {}\n", printable(out.junit));
  }
  if (old) fmt::print("{}", comparison_text(compare_runs(*old, r), *old, r));
  if (!out.html.empty()) {
    ReportInput in;
    if (old) in.runs.push_back(*old);  // first: the report compares each run with the old one of its suite
    in.runs.insert(in.runs.end(), per_suite.begin(), per_suite.end());
    if (diagnoses) in.diagnoses = *diagnoses;
    write_html_report(out.html, in);
    fmt::print("HTML report: {}{}\n", printable(out.html), old ? " (with the comparison)" : "");
  }
  std::fflush(stdout);
  if (r.shard.present() && r.cases.empty()) {
    fmt::print("shard {}: no case of the run falls in this shard\n", r.shard.shard);
    return kExitPass;
  }
  if (r.count(CaseStatus::NotSupported) == static_cast<int>(r.cases.size())) {
    std::fprintf(stderr, "fpcert: nothing ran: every case was not supported (%s)\n",
                 r.cases.empty() ? "no cases" : r.cases.front().reason.c_str());
    return kExitKernelFailed;
  }
  return exit_code(r);
}

}  // namespace fpcert::cli
