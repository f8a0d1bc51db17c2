// reports/junit.cpp — JUnit XML: <testsuites><testsuite><testcase>, failures with reasons.
#include "reports/junit.hpp"

#include <fmt/format.h>

#include "reports/escape.hpp"

namespace fpcert {

namespace {
/// JUnit text: the one escaper, control characters shown as '?' (reports/escape.hpp).
std::string esc(const std::string& s) { return xml_escape(s, ControlChars::Replace); }
}  // namespace

std::string junit_xml(const RunResult& r) {
  const int failures = r.count(CaseStatus::Fail);
  const int errors = r.count(CaseStatus::Crashed) + r.count(CaseStatus::Hung) + r.count(CaseStatus::Error);
  const int skipped = r.count(CaseStatus::NotSupported);
  double total_s = 0;
  for (const auto& c : r.cases) total_s += c.wall_seconds;
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format("<testsuites name=\"fpcert\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                   r.cases.size(), failures, errors, skipped, total_s);
  s += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\" timestamp=\"{}\" hostname=\"{}\">\n",
                   esc(r.suite), r.cases.size(), failures, errors, skipped, total_s, esc(r.env.timestamp),
                   esc(r.env.host));
  s += "    <properties>\n";
  auto prop = [&](const char* n, const std::string& v) {
    s += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", n, esc(v));
  };
  prop("fpcert_version", r.env.fpcert_version);
  prop("command", r.env.command);
  prop("device", r.env.device);
  prop("compute_capability", r.env.compute_capability);
  prop("cuda_runtime", r.env.cuda_runtime);
  prop("build_flags", r.env.build_flags);
  s += "    </properties>\n";
  for (const auto& c : r.cases) {
    s += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3f}\">\n", esc(r.suite), esc(c.kernel),
                     esc(c.case_id), c.wall_seconds);
    const std::string detail =
        c.conversion ? fmt::format("{} -> {}, rounding {}, saturation {}: {} patterns, {} mismatches{}", c.conversion->from, c.conversion->to,
                                   c.conversion->rounding, c.conversion->saturation, c.conversion->patterns,
                                   c.conversion->mismatches + c.conversion->model_mismatches,
                                   c.repro.empty() ? "" : "; reproduce: " + c.repro)
                     : fmt::format("gate {}: {}; max abs {:.4g}, gate fraction {:.4g}; spec {}; reproduce: {}",
                                   c.bound.variant ? to_string(*c.bound.variant) : "", c.bound.arithmetic, c.metrics.max_abs,
                                   c.gate_fraction, c.spec, c.repro);
    switch (c.status) {
      case CaseStatus::Pass: break;
      case CaseStatus::NotSupported: s += fmt::format("      <skipped message=\"{}\"/>\n", esc(c.reason)); break;
      case CaseStatus::Fail:
        s += fmt::format("      <failure message=\"{}\" type=\"gate\">{}</failure>\n", esc(c.reason), esc(detail));
        break;
      default:
        s += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", esc(c.reason), to_string(c.status),
                         esc(detail));
    }
    s += "    </testcase>\n";
  }
  s += "  </testsuite>\n</testsuites>\n";
  return s;
}

}  // namespace fpcert
