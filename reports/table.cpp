// reports/table.cpp — fixed-width terminal tables.
#include "reports/table.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fpcert {

std::string short_num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string case_header() {
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}  {}\n", "case", "kernel", "status", "max abs",
                     "Frobenius", "max ULP", "gate", "time ms", "vs base", "tier");
}

std::string case_row(const CaseResult& c) {
  std::string base = "-";
  if (c.baseline_ratio) base = fmt::format("{:.2f}x", *c.baseline_ratio);
  const bool graded = c.status == CaseStatus::Pass || c.status == CaseStatus::Fail;
  const std::string tier = c.tier == Tier::None ? "-" : std::string(to_string(c.tier)) + (c.vacuous ? " (vacuous)" : "");
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}  {}\n", c.case_id, c.kernel, to_string(c.status),
                     graded ? short_num(c.metrics.max_abs) : "-", graded ? short_num(c.metrics.frobenius_rel) : "-",
                     graded ? short_num(c.metrics.ulp_max) : "-", graded ? short_num(c.gate_fraction) : "-",
                     c.time_ms_median > 0 ? fmt::format("{:.3g}", c.time_ms_median) : "-", base, tier);
}

std::string case_table(const RunResult& r) {
  std::string s = case_header();
  for (const auto& c : r.cases) s += case_row(c);
  return s;
}

std::string verdict_text(const RunResult& r) {
  std::string s;
  const int pass = r.count(CaseStatus::Pass), ns = r.count(CaseStatus::NotSupported);
  const int bad = static_cast<int>(r.cases.size()) - pass - ns;
  if (bad == 0) {
    s += fmt::format("CERTIFIED: {} case(s) passed{}\n", pass, ns ? fmt::format(", {} not supported", ns) : "");
    return s;
  }
  s += fmt::format("FAILED: {} of {} case(s) ({} fail, {} crashed, {} hung, {} error)\n", bad, r.cases.size(),
                   r.count(CaseStatus::Fail), r.count(CaseStatus::Crashed), r.count(CaseStatus::Hung), r.count(CaseStatus::Error));
  bool first = true;
  for (const auto& c : r.cases) {
    if (c.status == CaseStatus::Pass || c.status == CaseStatus::NotSupported) continue;
    s += fmt::format("  {} on {}: {}: {}\n", c.case_id, c.kernel, to_string(c.status), c.reason);
    if (first && c.status == CaseStatus::Fail) {
      for (const auto& x : c.checks)
        if (is_decisive(x.kind) && !x.passed) s += fmt::format("    check {}: {}\n", to_string(x.kind), x.detail);
      if (!c.envelope.variant.empty()) {
        s += fmt::format("    envelope: {}\n", c.envelope.allowed);
        for (const auto& t : c.envelope.terms) s += fmt::format("      {:<40} {}\n", t.name, t.formula);
        s += fmt::format("    {}\n", c.envelope.arithmetic);
      }
      for (const auto& w : c.worst)
        s += fmt::format("    worst ({}, {}): got {} ({}), ref {} (rounded {}), |err| {} vs allowed {}\n", w.i, w.j, w.got_bits,
                         short_num(w.got), short_num(w.ref_hi), w.ref_bits, short_num(w.err), short_num(w.allowed));
      if (!c.repro.empty()) s += fmt::format("    reproduce: {}\n", c.repro);
      first = false;
    }
  }
  return s;
}

}  // namespace fpcert
