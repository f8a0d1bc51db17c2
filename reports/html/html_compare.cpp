// reports/html/html_compare.cpp — the run-to-run comparison (results/compare.hpp) as a section: what a reviewer
// wants on a pull request. Verdicts that flipped, error fractions that grew beyond the stated factor,
// timings that changed, cases in one run only; every number points into the run it came from.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/html/html_parts.hpp"
#include "results/compare.hpp"

namespace fpcert::html {
namespace {

std::string ratio_text(double r) {
  if (r <= 0 || std::isnan(r)) return kDash;
  if (std::isinf(r)) return "\u221e";
  return fmt::format("{:.3g}\u00d7", r);
}

}  // namespace

std::string comparison_section(const RunResult& o, std::size_t oi, const RunResult& n, std::size_t ni) {
  const RunComparison d = compare_runs(o, n);
  const std::string so = fmt::format("r{}", oi), sn = fmt::format("r{}", ni);
  int slower = 0, faster = 0;
  for (const auto& c : d.changes) {
    slower += c.slower;
    faster += c.faster;
  }
  const int flipped = d.count_flipped(), grew = d.count_regressions();
  const bool worse = grew > 0 || std::any_of(d.changes.begin(), d.changes.end(), [&](const CaseChange& c) {
                       return c.flipped && n.cases[c.new_index].status != CaseStatus::Pass;
                     });
  std::string s = fmt::format("<section class=\"compare\" id=\"compare-{}-{}\"><h2>What changed: suite <code>{}</code>, run {} \u2192 run {}</h2>",
                              oi, ni, html_escape(n.suite), oi + 1, ni + 1);
  s += fmt::format("<p><b class=\"{}\">{}</b>: {} case(s) matched by kernel and case; <b>{}</b> verdict(s) flipped, <b>{}</b> error "
                   "fraction(s) grew more than {:g}\u00d7, {} case(s) slower and {} faster beyond {:g}\u00d7; {} case(s) only in the old "
                   "run, {} only in the new.</p>",
                   worse ? "badt" : "okt", worse ? "REGRESSED" : "NO REGRESSION", d.matched, flipped, grew, d.growth_factor, slower, faster,
                   d.speed_factor, d.only_old.size(), d.only_new.size());
  s += fmt::format("<p class=\"muted\">Old: run {} ({}, <code>{}</code>); new: run {} ({}, <code>{}</code>). The error fraction is the "
                   "largest |c \u2212 ref| / allowed of a case (the envelope\u2019s per-element bound; pass \u2264 1); it grew when the new "
                   "one exceeds {:g}\u00d7 the old, fractions below 2<sup>\u221210</sup> counting as 2<sup>\u221210</sup> (far from the "
                   "gate, their changes do not matter). Speed: the median time of the timed runs, compared only where both runs timed the case at least {} times (a median of "
                   "fewer is noise); compare runs made on the same machine. Flipped verdicts are listed first, then grown error fractions.</p>",
                   oi + 1, html_escape(o.env.timestamp.empty() ? "no timestamp" : o.env.timestamp), html_escape(o.env.command), ni + 1,
                   html_escape(n.env.timestamp.empty() ? "no timestamp" : n.env.timestamp), html_escape(n.env.command), d.growth_factor,
                   kCompareMinTimedRuns);
  if (!d.changes.empty()) {
    s += "<div class=\"scroll\"><table class=\"diff\"><thead><tr><th>case</th><th>kernel</th><th>verdict (old \u2192 new)</th>"
         "<th class=\"num\">error fraction old</th><th class=\"num\">error fraction new</th><th>ratio</th><th class=\"num\">time ms old</th>"
         "<th class=\"num\">time ms new</th><th>ratio</th></tr></thead><tbody>";
    for (const CaseChange& c : d.changes) {
      const CaseResult& a = o.cases[c.old_index];
      const CaseResult& b = n.cases[c.new_index];
      const std::string pa = case_ptr(c.old_index), pb = case_ptr(c.new_index);
      const bool graded_both = graded(a) && graded(b);
      std::string verdict = status_badge(a.status);
      if (c.flipped) verdict += " \u2192 " + status_badge(b.status);
      else verdict += " <span class=\"muted\">(unchanged)</span>";
      const std::string link = bad(b) ? fmt::format("<a href=\"#fail-{}-{}\">{}</a>", ni, c.new_index, html_escape(b.case_id))
                                      : fmt::format("<a href=\"#run-{}\">{}</a>", ni, html_escape(b.case_id));
      s += fmt::format("<tr><td class=\"case\">{}</td><td><code>{}</code></td><td>{}</td>", link, html_escape(b.kernel), verdict);
      s += "<td class=\"num\">" + (graded(a) ? vnum(so, pa + "/metrics/err_frac_max", a.metrics.err_frac_max) : std::string(kDash)) + "</td>";
      s += "<td class=\"num\">" + (graded(b) ? vnum(sn, pb + "/metrics/err_frac_max", b.metrics.err_frac_max) : std::string(kDash)) + "</td>";
      s += fmt::format("<td class=\"{}\">{}</td>", c.grew ? "grew" : c.shrank ? "better" : "", graded_both ? ratio_text(c.frac_ratio) : kDash);
      s += "<td class=\"num\">" + (a.time_ms_median > 0 ? vnum(so, pa + "/time_ms_median", a.time_ms_median) : std::string(kDash)) + "</td>";
      s += "<td class=\"num\">" + (b.time_ms_median > 0 ? vnum(sn, pb + "/time_ms_median", b.time_ms_median) : std::string(kDash)) + "</td>";
      s += fmt::format("<td class=\"{}\">{}</td></tr>", c.slower ? "bad" : c.faster ? "better" : "", ratio_text(c.time_ratio));
    }
    s += "</tbody></table></div>";
  } else {
    s += "<p>No verdict, error fraction or timing changed beyond the stated factors.</p>";
  }
  auto list = [&](const std::vector<std::size_t>& idx, const RunResult& r, const char* what) {
    if (idx.empty()) return std::string();
    std::string l;
    for (std::size_t i : idx)
      l += fmt::format("{}<code>{}</code> on <code>{}</code> {}", l.empty() ? "" : ", ", html_escape(r.cases[i].case_id),
                       html_escape(r.cases[i].kernel), status_badge(r.cases[i].status));
    return fmt::format("<p><b>{}:</b> {}</p>", what, l);
  };
  s += list(d.only_old, o, "Only in the old run");
  s += list(d.only_new, n, "Only in the new run");
  return s + "</section>";
}

}  // namespace fpcert::html
