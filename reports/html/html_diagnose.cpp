// reports/html/html_diagnose.cpp — the diagnoses of the failed cases in the HTML report (docs/diagnose.md, issue 47):
// for each (certify --diagnose with --html, or a diagnosis JSON given to fpcert report) the verdict sentence, the
// ranked hypotheses with the share of elements each reproduces bit for bit, its envelope and residual, and, when no
// known arithmetic explains the output, the first elements no hypothesis reproduces. Numbers point into document d<i>
// (diagnosis_to_json of the i-th record).
#include <fmt/format.h>

#include <cmath>

#include "reports/html/html_parts.hpp"

namespace fpcert::html {

namespace {

std::string envelope_cell(const DiagnosisHypothesis& h, const std::string& src, const std::string& base) {
  if (h.envelope_holds) return "holds everywhere";
  if (h.envelope_exceed < 0) return "n/a (not an arithmetic)";
  if (h.envelope_exceed == 0) return "vacuous (no evidence)";
  return vint(src, base + "/envelope_exceed", h.envelope_exceed) + " elements out";
}

std::string one_diagnosis(const DiagnosisRecord& r, std::size_t di) {
  const std::string src = fmt::format("d{}", di);
  const bool bad = r.kind == "logic_error" || r.kind == "not_arithmetic";
  std::string s = fmt::format("<article id=\"diagnosis-{}\"><h3>{} on {}</h3>", di, html_escape(r.kernel),
                              html_escape(r.cases.empty() ? std::string("?") : r.cases.front()));
  s += "<dl><dt>declared</dt><dd>" + html_escape(r.declared) + "</dd>";
  for (std::size_t i = 1; i < r.cases.size(); ++i) s += "<dt>separating case</dt><dd>" + html_escape(r.cases[i]) + "</dd>";
  if (!r.failed_checks.empty()) {
    std::string checks;
    for (const std::string& c : r.failed_checks) checks += (checks.empty() ? "" : ", ") + html_escape(c);
    s += "<dt>failed checks</dt><dd>" + checks + "</dd>";
  }
  s += fmt::format("<dt>verdict</dt><dd><strong class=\"{}\">{}</strong>: {}</dd>", bad ? "fail" : "pass", html_escape(r.kind),
                   html_escape(r.verdict));
  for (const DiagnosisSeparation& x : r.separations)
    s += "<dt>separation</dt><dd>" + html_escape(fmt::format("{} and {} on {} ({}): {}", x.first, x.second, x.spec, x.why,
                                                             x.outcome.empty() ? "not run" : x.outcome)) + "</dd>";
  if (!r.hint.empty()) s += "<dt>hint</dt><dd>" + html_escape(r.hint) + "</dd>";
  s += fmt::format("<dt>hypotheses evaluated</dt><dd>{} in {} s</dd></dl>", vint(src, "/hypotheses_tried", r.tried),
                   vnum(src, "/seconds", r.seconds));
  s += "<table><thead><tr><th>#</th><th>hypothesis</th><th>in words</th><th>bit for bit</th><th>of elements</th>"
       "<th>fraction</th><th>envelope</th><th>residual (max ulps)</th><th>look-alikes on every case</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const DiagnosisHypothesis& h = r.ranked[i];
    const std::string base = fmt::format("/ranked/{}", i);
    std::string same;
    for (const std::string& x : h.same_as) same += (same.empty() ? "" : ", ") + html_escape(x);
    // JSON has no infinity: an infinite residual (a NaN or Inf where a finite value was due) is written as text.
    const std::string ulps = h.matched == h.elements ? std::string(kDash)
                             : std::isfinite(h.max_ulps) ? vnum(src, base + "/max_ulps", h.max_ulps)
                                                         : std::string("inf");
    s += fmt::format("<tr><td class=\"num\">{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                     i + 1, html_escape(h.id), html_escape(h.what), vint(src, base + "/matched", h.matched),
                     vint(src, base + "/elements", h.elements), vnum(src, base + "/fraction", h.fraction()),
                     envelope_cell(h, src, base), ulps, same.empty() ? std::string(kDash) : same);
  }
  s += "</tbody></table>";
  if (!r.unexplained.empty()) {
    s += "<p>No known arithmetic reproduces these elements (the first ones):</p><table><thead><tr><th>case</th><th>i</th>"
         "<th>j</th><th>kernel wrote</th><th>exact</th><th>top hypothesis</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < r.unexplained.size(); ++i) {
      const DiagnosisElement& e = r.unexplained[i];
      const std::string base = fmt::format("/unexplained/{}", i);
      s += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                       html_escape(e.case_label), vint(src, base + "/i", e.i), vint(src, base + "/j", e.j),
                       vnum(src, base + "/got", e.got), vnum(src, base + "/ref", e.ref), vnum(src, base + "/best", e.best));
    }
    s += "</tbody></table>";
  }
  for (const std::string& n : r.notes) s += "<p class=\"note\">" + html_escape(n) + "</p>";
  return s + "</article>";
}

}  // namespace

std::string diagnoses_section(const ReportInput& in) {
  if (in.diagnoses.empty()) return {};
  std::string s = "<section id=\"diagnoses\"><h2>Diagnoses: rounding or a bug?</h2>"
                  "<p>Each failed case\u2019s output compared bit for bit with the declared arithmetic changed once or twice "
                  "(docs/diagnose.md): the hypotheses ranked by the share of elements they reproduce, then by their "
                  "envelope. A passing kernel appears here when an arithmetic more precise than its declaration reproduces its output "
                  "bit for bit (the hint).</p>";
  for (std::size_t i = 0; i < in.diagnoses.size(); ++i) s += one_diagnosis(in.diagnoses[i], i);
  return s + "</section>";
}

}  // namespace fpcert::html
