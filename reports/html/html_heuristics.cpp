// reports/html/html_heuristics.cpp — fpcert's verdict beside two tolerance heuristics in wide use, per mutation score
// that measured them (results/results.hpp, HeuristicVerdicts; docs/mutation.md, "Beside the heuristics"): torch.allclose
// at KernelBench's atol = rtol = 1e-2 and FlashAttention's "2x the same-precision reference's error" rule, on the
// unmutated kernel (a refusal there is a false alarm) and on each mutant (an acceptance there is a wrong kernel passed).
#include <fmt/format.h>

#include "reports/html/html_parts.hpp"

namespace fpcert::html {

namespace {

/// "n (first: case)" with n traceable to the results; `bad`: n > 0 is a finding.
std::string count_cell(const std::string& src, const std::string& ptr, int n, const std::string& first) {
  if (n == 0) return fmt::format("<td>{}</td>", vint(src, ptr, n));
  return fmt::format("<td class=\"badt\">{} (first: {})</td>", vint(src, ptr, n), html_escape(first));
}

}  // namespace

std::string heuristics_section(const RunResult& r, std::size_t ri) {
  const std::string src = fmt::format("r{}", ri);
  std::string rows;
  for (std::size_t si = 0; si < r.mutation.size(); ++si) {
    const MutationScore& s = r.mutation[si];
    const std::string base = fmt::format("/mutation/{}", si);
    const HeuristicVerdicts& h = s.honest_heuristics;
    if (h.cases == 0) continue;
    const std::string hp = base + "/honest_heuristics";
    rows += fmt::format("<tr><td>{}</td><td>(unmutated: false alarms)</td><td>{}</td><td>{}</td>{}{}</tr>", html_escape(s.kernel),
                        vint(src, hp + "/cases", h.cases), vint(src, hp + "/fpcert_refused", h.fpcert_refused),
                        count_cell(src, hp + "/allclose_refused", h.allclose_refused, h.first_allclose_refused),
                        count_cell(src, hp + "/fa2x_refused", h.fa2x_refused, h.first_fa2x_refused));
    for (std::size_t mi = 0; mi < s.mutants.size(); ++mi) {
      const MutantResult& m = s.mutants[mi];
      const HeuristicVerdicts& x = m.heuristics;
      if (x.cases == 0) continue;
      const std::string p = fmt::format("{}/mutants/{}/heuristics", base, mi);
      rows += fmt::format("<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td>{}{}</tr>", html_escape(s.kernel),
                          html_escape(m.what), html_escape(m.fault), vint(src, p + "/cases", x.cases),
                          vint(src, p + "/fpcert_refused", x.fpcert_refused),
                          count_cell(src, p + "/allclose_missed", x.allclose_missed, x.first_allclose_missed),
                          count_cell(src, p + "/fa2x_missed", x.fa2x_missed, x.first_fa2x_missed));
    }
  }
  if (rows.empty()) return {};
  return fmt::format("<section id=\"heuristics-{}\"><h2>fpcert beside the heuristics: suite {}</h2><p>Each kernel and each of its "
                     "mutants, case by case: the cases fpcert refused, and how many of those "
                     "<code>torch.allclose(out, exact, atol=1e-2, rtol=1e-2)</code> (KernelBench's tolerance; equal_nan False, as "
                     "torch's default) and FlashAttention's rule <code>max|out - exact| &lt;= 2 max|base - exact| + 1e-5</code> (the "
                     "base: the unmutated kernel) accepted \u2014 a wrong result passed. On the unmutated kernel's row, the cases "
                     "each heuristic refused: false alarms.</p><table><thead><tr><th>kernel</th><th>mutant</th><th>cases</th>"
                     "<th>fpcert refused</th><th>allclose 1e-2 accepted (of those)</th><th>2x rule accepted (of those)</th></tr>"
                     "</thead><tbody>{}</tbody></table></section>",
                     ri, html_escape(r.suite), rows);
}

}  // namespace fpcert::html
