// reports/mutation_report.cpp — the mutation score as terminal text.
#include "reports/mutation_report.hpp"

#include <fmt/format.h>

namespace fpcert {

namespace {

std::string kinds_text(const std::vector<CheckKind>& ks, const char* sep) {
  std::string s;
  for (CheckKind k : ks) s += (s.empty() ? "" : sep) + std::string(to_string(k));
  return s;
}

/// The ids of the mutants with outcome o, comma-separated ("-" when none).
std::string ids_with(const MutationScore& s, MutantOutcome o) {
  std::string r;
  for (const MutantResult& m : s.mutants)
    if (m.outcome == o) r += (r.empty() ? "" : ",") + m.fault;
  return r.empty() ? "-" : r;
}

}  // namespace

std::string score_text(int killed, int total) {
  return total == 0 ? "0/0" : fmt::format("{}/{} ({:.1f} %)", killed, total, 100.0 * killed / total);
}

std::string mutation_table(const MutationScore& s) {
  std::string t = fmt::format("{:<18} {:<12} {:<14} {:<20} {:<28} {}\n", "fault", "class", "outcome", "case", "failed check(s)", "detail");
  for (const MutantResult& m : s.mutants) {
    std::string detail = m.detail;
    if (detail.size() > 110) detail = detail.substr(0, 107) + "...";
    t += fmt::format("{:<18} {:<12} {:<14} {:<20} {:<28} {}\n", m.fault, m.fault_class, to_string(m.outcome),
                     m.case_id.empty() ? "-" : m.case_id, m.fired.empty() ? "-" : kinds_text(m.fired, ","), detail);
  }
  return t;
}

std::string heuristics_table(const MutationScore& s) {
  bool any = s.honest_heuristics.cases > 0;
  for (const MutantResult& m : s.mutants) any = any || m.heuristics.cases > 0;
  if (!any) return "";
  auto first = [](const std::string& id) { return id.empty() ? std::string() : " (" + id + ")"; };
  std::string t = "beside the heuristics, case by case (allclose: torch.allclose atol = rtol = 1e-2 against the exact result; 2x: max "
                  "error <= 2 x the unmutated kernel's + 1e-5):\n";
  const HeuristicVerdicts& h = s.honest_heuristics;
  t += fmt::format("  unmutated kernel, {} cases: fpcert refuses {}; false alarms: allclose {}{}, 2x {}{}\n", h.cases, h.fpcert_refused,
                   h.allclose_refused, first(h.first_allclose_refused), h.fa2x_refused, first(h.first_fa2x_refused));
  t += fmt::format("  {:<22} {:>6} {:>15} {:<36} {}\n", "mutant", "cases", "fpcert refuses", "allclose accepts of those", "2x accepts of those");
  for (const MutantResult& m : s.mutants) {
    const HeuristicVerdicts& x = m.heuristics;
    if (x.cases == 0) continue;
    t += fmt::format("  {:<22} {:>6} {:>15} {:<36} {}\n", m.fault, x.cases, x.fpcert_refused, fmt::format("{}{}", x.allclose_missed, first(x.first_allclose_missed)),
                     fmt::format("{}{}", x.fa2x_missed, first(x.first_fa2x_missed)));
  }
  return t;
}

std::string mutation_summary(const MutationScore& s) {
  std::string t = fmt::format("mutation score of {} on suite {}: {} killed for their own fault", s.kernel, s.suite,
                              score_text(s.count(MutantOutcome::Killed), s.total()));
  const int other = s.count(MutantOutcome::KilledOther), surv = s.count(MutantOutcome::Survived),
            na = s.count(MutantOutcome::NotApplicable);
  t += fmt::format("; {} by another check only, {} survived, {} not applicable ({:.1f} s)\n", other, surv, na, s.seconds);
  std::string classes;
  for (const ClassScore& c : s.by_class()) classes += fmt::format("{}{} {}/{}", classes.empty() ? "" : ", ", c.fault_class, c.killed, c.total);
  t += "  by class: " + classes + "\n";
  if (surv) t += "  survived: " + ids_with(s, MutantOutcome::Survived) + "\n";
  if (other) t += "  killed by another check only: " + ids_with(s, MutantOutcome::KilledOther) + "\n";
  for (const std::string& c : s.invalid_cases) t += "  the unmutated kernel did not pass " + c + " (no mutant judged there)\n";
  return t;
}

std::string mutation_score_header() {
  return fmt::format("{:<34} {:<18} {:>5} {:<30} {:<30} {:>7}\n", "kernel", "score (own fault)", "n/a", "killed by another check",
                     "survived", "seconds");
}

std::string mutation_score_row(const MutationScore& s) {
  return fmt::format("{:<34} {:<18} {:>5} {:<30} {:<30} {:>7.1f}\n", s.kernel, score_text(s.count(MutantOutcome::Killed), s.total()),
                     s.count(MutantOutcome::NotApplicable), ids_with(s, MutantOutcome::KilledOther), ids_with(s, MutantOutcome::Survived),
                     s.seconds);
}

std::string mutation_score_table(const std::vector<MutationScore>& scores) {
  std::string t = mutation_score_header();
  for (const MutationScore& s : scores) t += mutation_score_row(s);
  return t;
}

}  // namespace fpcert
