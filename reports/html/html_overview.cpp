// reports/html/html_overview.cpp — the report's first screen: a kernel x suite matrix of verdicts (pass, fail,
// not supported, vacuous) with the largest error fraction of each cell, the verdict tier and the mutation
// score of each kernel, and the environment and exact command of each run behind a fold. Everything is
// read from fields of the results (status, tier, vacuous, metrics.err_frac_max, mutation), never from ids.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/html/html_parts.hpp"

namespace fpcert::html {
namespace {


/// The verdict of one kernel on one run, from its cases' fields.
struct Cell {
  int cases = 0, failed = 0, passed = 0, not_supported = 0, vacuous = 0;
  double worst = -1;           ///< largest err_frac_max over the graded cases (-1: none graded)
  std::size_t worst_case = 0;  ///< its index in the run
  std::string verdict() const {
    if (cases == 0) return "";
    if (failed) return "fail";
    if (passed == 0) return "not supported";
    if (vacuous == passed) return "vacuous";
    return "pass";
  }
};

Cell cell_of(const RunResult& r, const std::string& kernel) {
  Cell c;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& x = r.cases[i];
    if (x.kernel != kernel) continue;
    ++c.cases;
    if (bad(x)) ++c.failed;
    else if (x.status == CaseStatus::NotSupported) ++c.not_supported;
    else {
      ++c.passed;
      c.vacuous += x.vacuous;
    }
    if (graded(x) && (c.worst < 0 || x.metrics.err_frac_max > c.worst || std::isnan(x.metrics.err_frac_max))) {
      c.worst = x.metrics.err_frac_max;
      c.worst_case = i;
    }
  }
  return c;
}

std::string verdict_badge(const std::string& v) {
  const char* cls = v == "pass" ? "pass" : v == "fail" ? "fail" : "ns";
  return fmt::format("<span class=\"badge {}\">{}</span>", cls, v);
}

/// The tiers a kernel's graded cases were decided with, strongest first: "bitwise (12)", ...
std::string tiers_text(const std::vector<RunResult>& runs, const std::string& kernel) {
  std::map<Tier, int> n;
  for (const auto& r : runs)
    if (gemm_run(r))
      for (const auto& c : r.cases)
        if (c.kernel == kernel && graded(c)) ++n[c.tier];
  std::string s;
  for (const Tier t : {Tier::Bitwise, Tier::EnvelopeStatistical, Tier::Envelope, Tier::None})
    if (n.count(t))
      s += fmt::format("{}<span class=\"tier\">{}</span>&nbsp;\u00d7{}", s.empty() ? "" : "<br>", html_escape(std::string(to_string(t))),
                       n[t]);
  return s.empty() ? std::string(kDash) : s;
}

/// The mutation scores of a kernel, one per run that measured one: killed / applicable mutants.
std::string mutation_text(const std::vector<RunResult>& runs, const std::string& kernel) {
  std::string s;
  for (std::size_t ri = 0; ri < runs.size(); ++ri)
    for (std::size_t mi = 0; mi < runs[ri].mutation.size(); ++mi) {
      const MutationScore& m = runs[ri].mutation[mi];
      if (m.kernel != kernel) continue;
      const int killed = m.count(MutantOutcome::Killed), total = m.total();
      s += fmt::format("{}<span class=\"{}\">{}/{}</span> <span class=\"muted\">({:.0f}%, {})</span>", s.empty() ? "" : "<br>",
                       killed == total ? "okt" : "badt", killed, total, 100 * m.score(), html_escape(m.suite));
    }
  return s.empty() ? "<span class=\"na\" title=\"no mutation score in these results (run-suite, or certify --no-mutation)\">\u2014</span>" : s;
}

}  // namespace

bool gemm_run(const RunResult& r) {
  return r.kind != RunKind::Conversion && std::any_of(r.cases.begin(), r.cases.end(), [](const CaseResult& c) { return !c.conversion; });
}

std::string overview(const ReportInput& in) {
  std::vector<std::size_t> cols;  // GEMM runs, in order
  std::vector<std::string> kernels;
  for (std::size_t ri = 0; ri < in.runs.size(); ++ri) {
    if (!gemm_run(in.runs[ri])) continue;
    cols.push_back(ri);
    for (const auto& k : kernels_of(in.runs[ri]))
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
  }
  if (cols.empty()) return "";
  std::map<std::string, int> suite_seen;
  for (std::size_t ri : cols) ++suite_seen[in.runs[ri].suite];
  std::string s =
      "<section class=\"overview\" id=\"overview\"><h2>Verdicts: kernel \u00d7 suite</h2>"
      "<p class=\"muted\">Each cell: the kernel\u2019s verdict on the suite, the cases that passed, and the largest <b>error "
      "fraction</b> err/allowed of any output of any graded case (allowed: the envelope\u2019s per-element bound; pass \u2264 1). "
      "<b>fail</b>: a case failed, crashed or hung; <b>not supported</b> (n/s): the kernel declined the case; <b>vacuous</b>: "
      "every passing case\u2019s bound admits an all-zeros output (no evidence). Tier: how the graded cases were decided. Mutation "
      "score: injected faults refused for their own fault / faults applicable.</p>"
      "<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th>kernel</th>";
  for (std::size_t ri : cols) {
    const RunResult& r = in.runs[ri];
    s += fmt::format("<th><a href=\"#run-{}\">{}</a>{}</th>", ri, html_escape(r.suite.empty() ? "?" : r.suite),
                     suite_seen[r.suite] > 1 ? fmt::format(" <span class=\"muted\">(run {})</span>", ri + 1) : "");
  }
  s += "<th>tier</th><th>mutation score</th></tr></thead><tbody>";
  for (const auto& k : kernels) {
    s += fmt::format("<tr><td class=\"case\"><code>{}</code></td>", html_escape(k));
    for (std::size_t ri : cols) {
      const RunResult& r = in.runs[ri];
      const Cell c = cell_of(r, k);
      if (c.cases == 0) {
        s += fmt::format("<td class=\"na\">{}</td>", kDash);
        continue;
      }
      const std::string v = c.verdict();
      const auto ks = kernels_of(r);
      const auto ki = static_cast<std::size_t>(std::find(ks.begin(), ks.end(), k) - ks.begin());
      std::string title = fmt::format("{} of {} case(s) passed", c.passed, c.cases);
      if (c.failed) title += fmt::format(", {} failed, crashed or hung", c.failed);
      if (c.not_supported) title += fmt::format(", {} not supported", c.not_supported);
      if (c.vacuous) title += fmt::format(", {} vacuous", c.vacuous);
      s += fmt::format("<td class=\"verdict-cell{}\" title=\"{}\"><a href=\"#run-{}-k{}\">{}</a> {}/{}{}", v == "fail" ? " bad" : "",
                       title, ri, ki, verdict_badge(v), c.passed, c.cases,
                       c.not_supported ? fmt::format(" <span class=\"muted\">({} n/s)</span>", c.not_supported) : "");
      if (c.worst >= 0 || std::isnan(c.worst))
        s += fmt::format("<br><span class=\"muted\">err/allowed</span> {}",
                         vnum(fmt::format("r{}", ri), case_ptr(c.worst_case) + "/metrics/err_frac_max", c.worst,
                              c.worst > 1 || std::isnan(c.worst) ? "badt" : ""));
      s += "</td>";
    }
    s += fmt::format("<td>{}</td><td>{}</td></tr>", tiers_text(in.runs, k), mutation_text(in.runs, k));
  }
  s += "</tbody></table></div>";
  // Where each run came from, folded.
  s += "<details class=\"fold\"><summary>Environment and exact command of each run</summary>";
  for (std::size_t ri : cols) {
    const RunResult& r = in.runs[ri];
    s += fmt::format("<h4>Run {}: <code>{}</code></h4>", ri + 1, html_escape(r.suite));
    s += r.env.command.empty() ? "<p class=\"muted\">no command recorded</p>"
                               : "<pre class=\"repro\"><code>" + html_escape(r.env.command) + "</code></pre>";
    s += env_table(r.env, fmt::format("r{}", ri), "/environment");
  }
  s += "</details></section>";
  return s;
}

}  // namespace fpcert::html
