// reports/html/html_attention.cpp — the attention and backward-pass sections of the HTML report (docs/report.md,
// "Attention" and "Backward passes"): per subject (kernel on its backend, over every run given), the largest error
// fraction, the case and where in the sequence it occurs, the LSE's worst, a plot of the worst fraction against its
// query row; per backward case, each output's (dQ, dK, dV; dx, dgamma/dbeta; dx) worst fraction, verdict and row.
// Read from the results alone: positions are derived from worst_index and the shape the runner records (achieved
// attention_*), tagged data-derive so that tests/reports/check_html.py recomputes them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/html/html_parts.hpp"
#include "reports/html/svg.hpp"

namespace fpcert::html {

namespace {

double got(const CaseResult& c, const std::string& key, double otherwise = -1) {
  const auto it = c.achieved.find(key);
  return it == c.achieved.end() ? otherwise : it->second;
}
std::int64_t geti(const CaseResult& c, const std::string& key) { return static_cast<std::int64_t>(got(c, key)); }

bool attention_forward(const CaseResult& c) { return c.achieved.count("attention_graded_rows") != 0; }
bool attention_backward(const CaseResult& c) { return c.achieved.count("attention_bwd_graded_rows") != 0; }
bool norm_backward(const CaseResult& c) { return c.achieved.count("norm_bwd_vacuous_dx") != 0; }
bool softmax_backward(const CaseResult& c) { return c.achieved.count("softmax_bwd_vacuous_elements") != 0; }

/// A position derived from the case record, which check_html.py recomputes: `what` is "<quantity>:<from>", the quantity
/// batch, head, query, column (of the forward's worst_index: from "worst"), row, head, query (of dQ's worst row), row,
/// kv_head, key (of dK's or dV's), or len_q / len_k (the shape the runner records in achieved).
std::string dpos(const std::string& src, std::size_t j, const std::string& what, std::int64_t v) {
  return fmt::format("<span class=\"d\" data-src=\"{}\" data-case=\"{}\" data-derive=\"{}\">{}</span>", src, case_ptr(j), what, v);
}

/// The query row of forward element e: batch, head, query within the sequence, column.
struct QueryPos {
  std::int64_t batch = 0, head = 0, query = 0, column = 0;
};
QueryPos query_pos(const CaseResult& c, std::int64_t e) {
  const std::int64_t d = std::max<std::int64_t>(c.n, 1), lq = std::max<std::int64_t>(geti(c, "attention_len_q"), 1),
                     hq = std::max<std::int64_t>(geti(c, "attention_heads_q"), 1), row = e / d;
  return {row / (hq * lq), (row / lq) % hq, row % lq, e % d};
}

std::string where_forward(const CaseResult& c, const std::string& src, std::size_t j) {
  if (c.worst_index < 0) return kDash;
  const QueryPos p = query_pos(c, c.worst_index);
  return fmt::format("batch {}, head {}, query {} of {}, column {}", dpos(src, j, "batch:worst", p.batch), dpos(src, j, "head:worst", p.head),
                     dpos(src, j, "query:worst", p.query), dpos(src, j, "len_q", geti(c, "attention_len_q")),
                     dpos(src, j, "column:worst", p.column));
}

/// The LSE's envelope check (the runner's detail starts "LSE:"), or -1 when the kernel writes no LSE.
int lse_check(const CaseResult& c) {
  for (std::size_t k = 0; k < c.checks.size(); ++k)
    if (c.checks[k].kind == CheckKind::Envelope && c.checks[k].detail.rfind("LSE:", 0) == 0) return static_cast<int>(k);
  return -1;
}

struct CaseRef {
  std::size_t run = 0, j = 0;
  const CaseResult* c = nullptr;
  std::string src() const { return fmt::format("r{}", run); }
};

/// Cases of `in` that `pick` accepts, per subject ("kernel (backend)"), in order of first appearance.
template <class Pick>
std::vector<std::pair<std::string, std::vector<CaseRef>>> by_subject(const ReportInput& in, Pick pick) {
  std::vector<std::pair<std::string, std::vector<CaseRef>>> out;
  for (std::size_t ri = 0; ri < in.runs.size(); ++ri)
    for (std::size_t j = 0; j < in.runs[ri].cases.size(); ++j) {
      const CaseResult& c = in.runs[ri].cases[j];
      if (!pick(c)) continue;
      const std::string name = c.kernel + " (" + c.backend + ")";
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == name; });
      if (it == out.end()) it = out.insert(out.end(), {name, {}});
      it->second.push_back({ri, j, &c});
    }
  return out;
}

std::string forward_plot(const std::vector<std::pair<std::string, std::vector<CaseRef>>>& subjects) {
  std::vector<double> xs, ys;
  for (const auto& [name, cases] : subjects)
    for (const CaseRef& x : cases)
      if (graded(*x.c) && x.c->worst_index >= 0) xs.push_back(static_cast<double>(query_pos(*x.c, x.c->worst_index).query)), ys.push_back(x.c->metrics.err_frac_max);
  if (xs.empty()) return {};
  ys.push_back(1);  // the gate stays in view
  svg::Plot p(svg::fit_axis(svg::Scale::Linear, xs, "query row of the worst element (within its sequence)", true, true),
              svg::fit_axis(svg::Scale::Log, ys, "largest err / allowed of the case"));
  p.title("Where in the sequence each case's worst error occurs");
  p.hline(1, {"#000000", 1.2, "5 4"}, "the bound (fraction 1)");  // black: apart from the subjects' palette
  std::size_t si = 0;
  for (const auto& [name, cases] : subjects) {
    std::vector<double> x, y;
    std::vector<std::string> tips;
    for (const CaseRef& r : cases) {
      if (!graded(*r.c) || r.c->worst_index < 0) continue;
      const QueryPos q = query_pos(*r.c, r.c->worst_index);
      x.push_back(static_cast<double>(q.query));
      y.push_back(r.c->metrics.err_frac_max);
      tips.push_back(fmt::format("{}: {}, query {} of {}, err / allowed {:.4g}", name, r.c->case_id, q.query, geti(*r.c, "attention_len_q"),
                                 r.c->metrics.err_frac_max));
    }
    svg::Style st{svg::palette(si), 0, "", svg::marker_cycle(si), 5, false};
    p.series(x, y, st, name, tips);
    ++si;
  }
  if (p.dropped()) p.note(fmt::format("{} case(s) with a fraction 0 not drawn (log axis)", p.dropped()));
  return figure(p.render(), "Each graded case is one marker: the query row (within its batch and head) of the element with the largest "
                            "error fraction, and that fraction. The run JSON keeps the worst element of a case, not a fraction per row: "
                            "this is where each case's worst lies, not a profile along one sequence.");
}

std::string forward_section(const ReportInput& in) {
  const auto subjects = by_subject(in, attention_forward);
  if (subjects.empty()) return {};
  std::string s = "<section id=\"attention\"><h2>Attention</h2><p>Per subject (kernel on its backend, over every run given): the "
                  "largest error fraction err / allowed of O over its graded cases (the case passes its envelope check iff "
                  "&lt;= 1), the case and where it lies in the sequence (batch, query head, query row within the sequence, "
                  "column of the head dimension), and the largest fraction of the log-sum-exp LSE.</p><table><thead><tr>"
                  "<th>subject</th><th>cases graded</th><th>failed</th><th>largest err / allowed (O)</th><th>case</th>"
                  "<th>where</th><th>LSE: largest err / bound</th><th>its case</th></tr></thead><tbody>";
  std::string details;
  for (const auto& [name, cases] : subjects) {
    const CaseRef* worst = nullptr;
    const CaseRef* lse = nullptr;
    int ngraded = 0, failed = 0;
    for (const CaseRef& x : cases) {
      if (!graded(*x.c)) continue;
      ++ngraded;
      failed += x.c->status == CaseStatus::Fail;
      if (!worst || x.c->metrics.err_frac_max > worst->c->metrics.err_frac_max) worst = &x;
      if (lse_check(*x.c) >= 0 && (!lse || got(*x.c, "attention_lse_max_error_over_bound") > got(*lse->c, "attention_lse_max_error_over_bound")))
        lse = &x;
    }
    if (!worst) {
      s += fmt::format("<tr><td>{}</td><td>0</td><td>0</td><td colspan=\"5\">no graded case ({} not supported, crashed or hung)</td></tr>",
                       html_escape(name), cases.size());
      continue;
    }
    const std::string wp = case_ptr(worst->j) + "/metrics/err_frac_max";
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>", html_escape(name), ngraded, failed,
                     vnum(worst->src(), wp, worst->c->metrics.err_frac_max, worst->c->metrics.err_frac_max > 1 ? "badt" : ""),
                     html_escape(worst->c->case_id), where_forward(*worst->c, worst->src(), worst->j));
    if (lse) {
      const double v = got(*lse->c, "attention_lse_max_error_over_bound");
      s += fmt::format("<td class=\"num\">{}</td><td>{}</td></tr>",
                       vnum(lse->src(), case_ptr(lse->j) + "/achieved/attention_lse_max_error_over_bound", v, v > 1 ? "badt" : ""),
                       html_escape(lse->c->case_id));
    } else {
      s += "<td>not written</td><td>" + std::string(kDash) + "</td></tr>";
    }
    details += fmt::format("<details class=\"batches\"{}><summary><b>{}</b>: every case</summary><div class=\"scroll\"><table "
                           "class=\"metrics\"><thead><tr><th>case</th><th>verdict</th><th class=\"num\">err / allowed (O)</th>"
                           "<th>where</th><th class=\"num\">LSE err / bound</th></tr></thead><tbody>",
                           failed ? " open" : "", html_escape(name));
    for (const CaseRef& x : cases) {
      const bool g = graded(*x.c);
      const double l = got(*x.c, "attention_lse_max_error_over_bound");
      details += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                             html_escape(x.c->case_id), status_badge(x.c->status),
                             g ? vnum(x.src(), case_ptr(x.j) + "/metrics/err_frac_max", x.c->metrics.err_frac_max,
                                      x.c->metrics.err_frac_max > 1 ? "badt" : "")
                               : std::string(kDash),
                             g ? where_forward(*x.c, x.src(), x.j) : std::string(kDash),
                             g && lse_check(*x.c) >= 0 ? vnum(x.src(), case_ptr(x.j) + "/achieved/attention_lse_max_error_over_bound", l, l > 1 ? "badt" : "")
                                                       : std::string(kDash));
    }
    details += "</tbody></table></div></details>";
  }
  return s + "</tbody></table>" + forward_plot(subjects) + details + "</section>";
}

/// One output of a backward case: its name, its largest fraction (tagged), its verdict and where.
struct Output {
  std::string name, fraction, where;
  bool judged = false, within = true;
};

std::vector<Output> backward_outputs(const CaseResult& c, const std::string& src, std::size_t j) {
  std::vector<Output> out;
  if (attention_backward(c)) {
    const std::int64_t lq = std::max<std::int64_t>(geti(c, "attention_len_q"), 1), lk = std::max<std::int64_t>(geti(c, "attention_len_k"), 1);
    for (const char* n : {"dQ", "dK", "dV"}) {
      const std::string fk = std::string("attention_bwd_max_error_over_bound_") + n, rk = std::string("attention_bwd_worst_row_") + n;
      Output o{n, kDash, kDash};
      if (c.achieved.count(fk)) {
        const double f = got(c, fk);
        const std::int64_t row = geti(c, rk);
        o.judged = true;
        o.within = f <= 1;
        o.fraction = vnum(src, case_ptr(j) + "/achieved/" + fk, f, o.within ? "" : "badt");
        const std::string tag = std::string(":") + n;
        if (o.name == "dQ")
          o.where = fmt::format("row {}: head {}, query {} of {}", dpos(src, j, "row" + tag, row),
                                dpos(src, j, "head" + tag, (row / lq) % std::max<std::int64_t>(geti(c, "attention_heads_q"), 1)),
                                dpos(src, j, "query" + tag, row % lq), dpos(src, j, "len_q", lq));
        else
          o.where = fmt::format("row {}: kv head {}, key {} of {}", dpos(src, j, "row" + tag, row),
                                dpos(src, j, "kv_head" + tag, (row / lk) % std::max<std::int64_t>(geti(c, "attention_heads_kv"), 1)),
                                dpos(src, j, "key" + tag, row % lk), dpos(src, j, "len_k", lk));
      }
      out.push_back(std::move(o));
    }
    return out;
  }
  if (!norm_backward(c) && !softmax_backward(c)) return out;
  // Norm and softmax backward: dx's envelope check, and (norm) dgamma/dbeta's, whose detail the runner prefixes.
  const bool norm = norm_backward(c);
  Output dx{"dx", kDash, kDash}, par{"dgamma/dbeta", kDash, kDash};
  for (std::size_t k = 0; k < c.checks.size(); ++k) {
    const CheckResult& ch = c.checks[k];
    if (ch.kind != CheckKind::Envelope) continue;
    const bool is_par = ch.detail.rfind("dgamma", 0) == 0;
    Output& o = is_par ? par : dx;
    if (is_par) o.name = ch.detail.rfind("dgamma/dbeta", 0) == 0 ? "dgamma/dbeta" : "dgamma";
    o.judged = true;
    o.within = ch.passed;
    o.fraction = vnum(src, fmt::format("{}/checks/{}/measured", case_ptr(j), k), ch.measured, ch.passed ? "" : "badt");
    o.where = html_escape(is_par ? ch.detail.substr(ch.detail.find(':') + 2) : ch.detail);
  }
  out.push_back(std::move(dx));
  if (norm) out.push_back(std::move(par));
  return out;
}

std::string backward_section(const ReportInput& in) {
  const auto subjects = by_subject(in, [](const CaseResult& c) { return attention_backward(c) || norm_backward(c) || softmax_backward(c); });
  if (subjects.empty()) return {};
  std::string s = "<section id=\"backward\"><h2>Backward passes</h2><p>Each gradient a backward kernel writes is graded by its own "
                  "per-element bound (docs/backward.md): per case, each output\u2019s largest err / bound, its verdict (within: "
                  "&lt;= 1) and where its worst element lies. A case fails when any output is beyond its bound or another check "
                  "fails (special values, unwritten elements, guards: the case\u2019s card names them).</p>";
  for (const auto& [name, cases] : subjects) {
    s += "<h3>" + html_escape(name) + "</h3><div class=\"scroll\"><table><thead><tr><th>case</th><th>verdict</th><th>output</th>"
         "<th class=\"num\">largest err / bound</th><th>output verdict</th><th>where</th></tr></thead><tbody>";
    for (const CaseRef& x : cases) {
      const std::vector<Output> outs = graded(*x.c) ? backward_outputs(*x.c, x.src(), x.j) : std::vector<Output>{};
      if (outs.empty()) {
        s += fmt::format("<tr><td>{}</td><td>{}</td><td colspan=\"4\">{}</td></tr>", html_escape(x.c->case_id), status_badge(x.c->status),
                         x.c->reason.empty() ? std::string("not graded") : html_escape(x.c->reason));
        continue;
      }
      for (std::size_t k = 0; k < outs.size(); ++k) {
        const Output& o = outs[k];
        s += "<tr>";
        if (k == 0)
          s += fmt::format("<td rowspan=\"{}\">{}</td><td rowspan=\"{}\">{}</td>", outs.size(), html_escape(x.c->case_id), outs.size(),
                           status_badge(x.c->status));
        s += fmt::format("<td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>", html_escape(o.name), o.fraction,
                         !o.judged ? std::string("not judged") : o.within ? "within" : "<b class=\"badt\">beyond the bound</b>", o.where);
      }
    }
    s += "</tbody></table></div>";
  }
  return s + "</section>";
}

}  // namespace

std::string attention_sections(const ReportInput& in) { return forward_section(in) + backward_section(in); }

}  // namespace fpcert::html

namespace fpcert::html {

std::string fa_rule_section(const FaRuleRecord& f, std::size_t fi) {
  const std::string src = fmt::format("f{}", fi);
  // A variant's verdict by one judge: on the correct kernel a refused case is a false alarm; on a fault, any refused
  // case catches it.
  auto verdict = [](bool correct, int failed) -> std::string {
    if (correct) return failed ? "<b class=\"badt\">false alarm</b>" : "passes";
    return failed ? "caught" : "<b class=\"badt\">missed</b>";
  };
  std::string rows;
  int faults = 0, fa = 0, fp = 0;
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const FaRuleRow& x = f.rows[i];
    const std::string p = fmt::format("/rows/{}", i);
    if (!x.correct) ++faults, fa += x.fa_failed > 0, fp += x.fpcert_failed > 0;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>"
                        "<td class=\"num\">{}</td></tr>",
                        html_escape(x.variant), vint(src, p + "/cases", x.cases), verdict(x.correct, x.fpcert_failed),
                        vint(src, p + "/fpcert_failed", x.fpcert_failed), verdict(x.correct, x.fa_failed), vint(src, p + "/fa_failed", x.fa_failed),
                        vnum(src, p + "/worst_ratio", x.worst_ratio, x.worst_ratio > 1 ? "badt" : ""));
  }
  return fmt::format("<section id=\"fa-rule-{}\"><h2>FlashAttention\u2019s 2x rule beside fpcert: {} ({})</h2><p>FlashAttention\u2019s "
                     "tests accept an output when <code>{}</code> (out_ref: the exact result rounded once into the dtype; out_pt: the "
                     "same computation in the dtype, rounded after each step). On the correct kernel and on each fault it carries, "
                     "every case of the suite <code>{}</code> is judged by the rule and by fpcert; a fault is caught by a judge when "
                     "one of its cases is refused, and a refusal on the correct kernel is a false alarm. The last column: the largest "
                     "left side / right side of the rule over the cases (&gt; 1: the rule refused).</p><p>Faults caught: fpcert {} of "
                     "{}, the 2x rule {} of {}.</p><table><thead><tr><th>variant</th><th>cases</th><th>fpcert</th>"
                     "<th class=\"num\">cases fpcert refused</th><th>2x rule</th><th class=\"num\">cases the rule refused</th>"
                     "<th class=\"num\">worst lhs / rhs</th></tr></thead><tbody>{}</tbody></table></section>",
                     fi, html_escape(f.kernel), html_escape(f.operation), html_escape(f.rule), html_escape(f.suite), fp, faults, fa, faults, rows);
}

}  // namespace fpcert::html
