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
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}\n", "case", "kernel", "status", "max abs",
                     "Frobenius", "max ULP", "gate", "time ms", "vs base");
}

std::string conversion_case_header() {
  return fmt::format("{:<38} {:<8} {:>12} {:>10} {:>9} {:>9}\n", "conversion kernel", "status", "patterns", "mismatch", "NaN diff", "seconds");
}

std::string case_row(const CaseResult& c) {
  if (c.conversion) {
    const ConversionResult& v = *c.conversion;
    const bool checked = c.status == CaseStatus::Pass || c.status == CaseStatus::Fail;
    return fmt::format("{:<38} {:<8} {:>12} {:>10} {:>9} {:>9.2f}{}\n", c.case_id, to_string(c.status), checked ? std::to_string(v.patterns) : "-",
                       checked ? std::to_string(v.mismatches + v.model_mismatches) : "-",
                       checked ? std::to_string(v.nan_differences) : "-", c.wall_seconds,
                       c.status == CaseStatus::Pass ? "" : "  " + c.reason);
  }
  std::string base = "-";
  if (c.baseline_ratio) base = fmt::format("{:.2f}x", *c.baseline_ratio);
  const bool graded = c.status == CaseStatus::Pass || c.status == CaseStatus::Fail;
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}\n", c.case_id, c.kernel, to_string(c.status),
                     graded ? short_num(c.metrics.max_abs) : "-", graded ? short_num(c.metrics.frobenius_rel) : "-",
                     graded ? short_num(c.metrics.ulp_max) : "-", graded ? short_num(c.gate_fraction) : "-",
                     c.time_ms_median > 0 ? fmt::format("{:.3g}", c.time_ms_median) : "-", base);
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
    if (first && c.status == CaseStatus::Fail && !c.conversion) {
      s += fmt::format("    gate ({}): {}\n", c.bound.variant ? to_string(*c.bound.variant) : "", c.bound.allowed);
      for (const auto& t : c.bound.terms) s += fmt::format("      {:<40} {}\n", t.name, t.formula);
      s += fmt::format("    {}\n", c.bound.arithmetic);
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
