// reports/table.cpp — fixed-width terminal tables.
#include "reports/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace fpcert {

std::string short_num(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string case_header() {
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}  {}\n", "case", "kernel", "status", "max abs",
                     "Frobenius", "max ULP", "err/allow", "time ms", "vs base", "tier");
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
  std::string tier = c.tier == Tier::None ? "-" : std::string(to_string(c.tier)) + (c.vacuous ? " (vacuous)" : "");
  if (c.order && c.tier != Tier::None) tier += c.order->used ? " (revealed order)" : " (declared order: revealed one not used)";
  if (c.spread) tier += fmt::format(" (run to run: {} el, {} ulp)", c.spread->elements, short_num(c.spread->max_ulps));
  if (graded && c.metrics.correct_bits_min >= 0)  // fp64 outputs: bits equal to the correctly rounded result (docs/fp64.md)
    tier += fmt::format(" (correct bits min {}, median {})", c.metrics.correct_bits_min, short_num(c.metrics.correct_bits_median));
  return fmt::format("{:<24} {:<28} {:<8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}  {}\n", c.case_id, c.kernel, to_string(c.status),
                     graded ? short_num(c.metrics.max_abs) : "-", graded ? short_num(c.metrics.frobenius_rel) : "-",
                     graded ? short_num(c.metrics.ulp_max) : "-", graded ? short_num(c.metrics.err_frac_max) : "-",
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
    if (first && c.status == CaseStatus::Fail && !c.conversion) {
      for (const auto& x : c.checks)
        if (is_decisive(x.kind) && !x.passed) s += fmt::format("    check {}: {}\n", to_string(x.kind), x.detail);
      if (!c.envelope.allowed.empty()) {
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

std::string order_text(const RunResult& r) {
  struct Group {
    const OrderRecord* rec;
    std::string kernel;
    std::vector<std::string> used, fell_back;
  };
  std::vector<Group> groups;  // kernel and shape, first seen first
  for (const auto& c : r.cases) {
    if (!c.order) continue;
    const OrderRecord& o = *c.order;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.kernel == c.kernel && g.rec->m == o.m && g.rec->n == o.n && g.rec->k == o.k;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{&o, c.kernel, {}, {}});
    if (o.used && c.tier == Tier::Bitwise) it->used.push_back(c.case_id);
    else it->fell_back.push_back(c.case_id + ": " + (!o.used ? o.fallback : fmt::format("not graded with it (tier {})", to_string(c.tier))));
  }
  std::string s;
  for (const Group& g : groups) {
    const OrderRecord& o = *g.rec;
    const std::string from = o.source == "file" ? "read from " + (o.file.empty() ? std::string("a file") : o.file) : "revealed";
    s += fmt::format("order of {} at {}x{}x{}: {}, not declared\n", g.kernel, o.m, o.n, o.k, from);
    if (!o.tree.empty()) s += fmt::format("  tree: {}\n", o.tree);
    if (o.used) {
      s += fmt::format("  arithmetic (chosen and checked on random inputs): {}\n", o.arithmetic);
      s += fmt::format("  checks: {}; {} launch(es)\n", o.checks, o.launches);
    }
    if (!g.used.empty()) {
      std::string list;
      for (const auto& u : g.used) list += (list.empty() ? "" : ", ") + u;
      s += fmt::format("  bitwise with this order: {}\n", list);
    }
    for (const auto& f : g.fell_back) s += fmt::format("  fell back: {}\n", f);
  }
  return s;
}

std::string spread_text(const RunResult& r) {
  std::string s;
  for (const auto& c : r.cases) {
    if (!c.spread) continue;
    const RunSpread& p = *c.spread;
    if (s.empty()) s = "run-to-run spread of the kernels that declare it (docs/bound_model.md, \"Nondeterministic kernels\"):\n";
    s += fmt::format("  {} on {}: {} of {} later run(s) differ, {} element(s) (at most {} in one run), max {} ulp", c.case_id, c.kernel,
                     p.differing_runs, std::max(0, p.runs - 1), p.elements, p.max_elements, short_num(p.max_ulps));
    if (p.worst_index >= 0)
      s += fmt::format("; largest difference / allowed {} ({} ulp allowed there)", short_num(p.max_frac), short_num(p.worst_allowed_ulps));
    s += fmt::format("; order-free {} ({} differ){}\n", p.order_free, p.order_free_differ, p.envelope_exceed ? "; LATER RUN BEYOND THE ENVELOPE" : "");
  }
  return s;
}

std::string coverage_table(const RunResult& r) {
  // One line per class (sorted by name), its cases in the order they ran. One kernel: each case with its status.
  // Several: each case with its status counts over the kernels, naming only the kernels it did not pass or skip
  // (a line per class a reviewer reads at once, not one entry per kernel).
  struct Tally {
    std::map<std::string, int> by_status;
    std::vector<std::string> refused;  // kernels whose case failed, crashed, hung or erred
  };
  std::map<std::string, std::vector<std::pair<std::string, Tally>>> by_class;
  for (const auto& c : r.cases)
    for (const auto& cls : c.coverage) {
      auto& cases = by_class[cls];
      auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& e) { return e.first == c.case_id; });
      if (it == cases.end()) it = cases.insert(cases.end(), {c.case_id, Tally{}});
      ++it->second.by_status[std::string(to_string(c.status))];
      if (c.status != CaseStatus::Pass && c.status != CaseStatus::NotSupported) it->second.refused.push_back(c.kernel);
    }
  if (by_class.empty()) return "";
  const bool many = r.kernels.size() > 1;
  std::string s = fmt::format("{:<28} {}\n", "coverage class", many ? "covered by (status: kernels)" : "covered by (status)");
  for (const auto& [cls, cases] : by_class) {
    std::string list;
    for (const auto& [id, t] : cases) {
      std::string st;
      for (const auto& [status, n] : t.by_status) st += (st.empty() ? "" : ", ") + (many ? fmt::format("{} {}", status, n) : status);
      std::string who;
      if (many)
        for (const auto& k : t.refused) who += (who.empty() ? ": " : ", ") + k;
      list += (list.empty() ? "" : ", ") + fmt::format("{} ({}{})", id, st, who);
    }
    s += fmt::format("{:<28} {}\n", cls, list);
  }
  return s;
}

}  // namespace fpcert
