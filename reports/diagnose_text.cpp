// reports/diagnose_text.cpp — the terminal text of a diagnosis (diagnose_text.hpp).
#include "reports/diagnose_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fpcert {

std::string diagnosis_text(const DiagnosisRecord& r) {
  std::string s = fmt::format("diagnosis of {} ({})\n", r.kernel, r.declared);
  for (std::size_t i = 0; i < r.cases.size(); ++i) s += fmt::format("  {} {}\n", i == 0 ? "case:      " : "separating:", r.cases[i]);
  if (!r.failed_checks.empty()) s += fmt::format("  failed checks: {}\n", fmt::join(r.failed_checks, ", "));
  s += fmt::format("  {}: {}\n", r.kind, r.verdict);
  s += fmt::format("  {} hypotheses in {:.2f} s; best first:\n", r.tried, r.seconds);
  s += fmt::format("    {:>3}  {:<34} {:>9}  {:<10} {:>9}  {}\n", "#", "hypothesis", "bitwise", "envelope", "max ulps", "look-alikes on every case");
  int n = 0;
  for (const DiagnosisHypothesis& h : r.ranked) {
    const double f = 100.0 * h.fraction();
    const std::string frac = h.matched == h.elements ? "100 %" : fmt::format("{:.1f} %", std::min(f, 99.9));
    const std::string env = h.envelope_holds         ? "holds"
                            : h.envelope_exceed < 0  ? "n/a"
                            : h.envelope_exceed > 0  ? fmt::format("{} out", h.envelope_exceed)
                                                     : "vacuous";
    const std::string ulps = h.matched == h.elements ? "-" : std::isinf(h.max_ulps) ? "inf" : fmt::format("{:.3g}", h.max_ulps);
    s += fmt::format("    {:>3}  {:<34} {:>9}  {:<10} {:>9}  {}\n", ++n, h.id, frac, env, ulps, fmt::join(h.same_as, ", "));
  }
  if (!r.unexplained.empty()) {
    s += "  elements no hypothesis reproduces (first ones):\n";
    for (const DiagnosisElement& e : r.unexplained)
      s += fmt::format("    {} ({}, {}): got {:.9g}, exact {:.9g}, top hypothesis {:.9g}\n", e.case_label, e.i, e.j, e.got, e.ref, e.best);
  }
  for (const DiagnosisSeparation& x : r.separations)
    s += fmt::format("  separation of {} and {}: {} ({}): {}\n", x.first, x.second, x.spec, x.why, x.outcome.empty() ? "not run" : x.outcome);
  if (!r.hint.empty()) s += "  hint: " + r.hint + "\n";
  for (const std::string& x : r.notes) s += "  note: " + x + "\n";
  return s;
}

}  // namespace fpcert
