// reports/junit.cpp — JUnit XML: <testsuites><testsuite><testcase>, failures with reasons.
#include "reports/junit.hpp"

#include <fmt/format.h>

namespace fpcert {

std::string xml_escape(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') r += '?';
        else r += ch;
    }
  }
  return r;
}

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
                   xml_escape(r.suite), r.cases.size(), failures, errors, skipped, total_s, xml_escape(r.env.timestamp),
                   xml_escape(r.env.host));
  s += "    <properties>\n";
  auto prop = [&](const char* n, const std::string& v) {
    s += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", n, xml_escape(v));
  };
  prop("fpcert_version", r.env.fpcert_version);
  prop("command", r.env.command);
  prop("device", r.env.device);
  prop("compute_capability", r.env.compute_capability);
  prop("cuda_runtime", r.env.cuda_runtime);
  prop("build_flags", r.env.build_flags);
  s += "    </properties>\n";
  for (const auto& c : r.cases) {
    s += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3f}\">\n", xml_escape(r.suite), xml_escape(c.kernel),
                     xml_escape(c.case_id), c.wall_seconds);
    const std::string detail = fmt::format("gate {}: {}; max abs {:.4g}, gate fraction {:.4g}; spec {}; reproduce: {}", c.bound.variant,
                                           c.bound.arithmetic, c.metrics.max_abs, c.gate_fraction, c.spec, c.repro);
    switch (c.status) {
      case CaseStatus::Pass: break;
      case CaseStatus::NotSupported: s += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.reason)); break;
      case CaseStatus::Fail:
        s += fmt::format("      <failure message=\"{}\" type=\"gate\">{}</failure>\n", xml_escape(c.reason), xml_escape(detail));
        break;
      default:
        s += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", xml_escape(c.reason), to_string(c.status),
                         xml_escape(detail));
    }
    s += "    </testcase>\n";
  }
  s += "  </testsuite>\n</testsuites>\n";
  return s;
}

}  // namespace fpcert
