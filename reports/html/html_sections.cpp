// reports/html/html_sections.cpp — the report's sections: the banner, a run (environment, failures,
// results by kernel, plots, the gates' arithmetic), a conversion check.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "oracle/format.hpp"
#include "oracle/round.hpp"
#include "reports/html/html_parts.hpp"
#include "reports/html/svg.hpp"

namespace fpcert::html {
namespace {

struct Doc {
  std::string out;
  void add(const std::string& s) { out += s; }
};

}  // namespace

std::string env_table(const Environment& e, const std::string& src, const std::string& base) {
  std::string s = "<dl class=\"env\">";
  auto row = [&](const char* name, const std::string& v, bool wide = false) {
    s += fmt::format("<div{}><dt>{}</dt><dd>{}</dd></div>", wide ? " class=\"wide\"" : "", name,
                     v.empty() ? kDash : "<code>" + html_escape(v) + "</code>");
  };
  auto row_int = [&](const char* name, const char* key, int v, const char* unit) {
    s += fmt::format("<div><dt>{}</dt><dd>{}</dd></div>", name,
                     v > 0 ? vint(src, base + "/" + key, v) + unit : std::string(kDash));
  };
  row("fpcert version", e.fpcert_version);
  row("timestamp (UTC)", e.timestamp);
  row("host", e.host);
  row("CPU", e.cpu);
  row("compiler", e.compiler);
  row("device (GPU)", e.device);
  row("compute capability", e.compute_capability);
  row_int("SM count", "sm_count", e.sm_count, "");
  s += fmt::format("<div><dt>clocks</dt><dd>{} SM, {} memory</dd></div>",
                   e.clock_mhz > 0 ? vint(src, base + "/clock_mhz", e.clock_mhz) + " MHz" : std::string(kDash),
                   e.mem_clock_mhz > 0 ? vint(src, base + "/mem_clock_mhz", e.mem_clock_mhz) + " MHz" : std::string(kDash));
  row("driver", e.driver);
  row("CUDA runtime", e.cuda_runtime);
  row("cuBLAS", e.cublas);
  row("CUDA architectures", e.cuda_archs);
  row("build flags", e.build_flags, true);
  row("command", e.command, true);
  s += "</dl>";
  return s;
}

namespace {

/// The counts line of a run, every number tagged.
std::string counts_line(const RunResult& r, const std::string& src) {
  std::string s;
  struct C {
    CaseStatus st;
    const char* key;
    const char* label;
  };
  for (const C& c : {C{CaseStatus::Pass, "pass", "passed"}, C{CaseStatus::Fail, "fail", "failed"},
                     C{CaseStatus::NotSupported, "not_supported", "not supported"}, C{CaseStatus::Crashed, "crashed", "crashed"},
                     C{CaseStatus::Hung, "hung", "hung"}, C{CaseStatus::Error, "error", "error"}}) {
    const int n = r.count(c.st);
    if (n == 0 && c.st != CaseStatus::Pass && c.st != CaseStatus::Fail) continue;
    if (!s.empty()) s += ", ";
    s += vint(src, std::string("/counts/") + c.key, n) + " " + c.label;
  }
  return s;
}

std::string worst_table(const CaseResult& c, const std::string& src, const std::string& base) {
  if (c.worst.empty()) return "";
  std::string s =
      "<div class=\"scroll\"><table class=\"worst\"><thead><tr><th class=\"num\">i</th><th class=\"num\">j</th><th>got (bits)</th>"
      "<th class=\"num\">got</th><th class=\"num\">reference (hi)</th><th class=\"num\">reference (lo)</th><th>reference rounded (bits)</th>"
      "<th class=\"num\">|err|</th><th class=\"num\">allowed</th><th class=\"num\">ULPs</th><th class=\"num\">(|A||B|)<sub>ij</sub></th>";
  const bool tiled = c.tile_m > 0 && c.tile_n > 0;
  if (tiled) s += "<th>in the declared tile</th>";
  s += "</tr></thead><tbody>";
  for (std::size_t w = 0; w < c.worst.size(); ++w) {
    const WorstElement& e = c.worst[w];
    const std::string p = fmt::format("{}/worst/{}", base, w);
    s += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td>{}</tr>",
        vint(src, p + "/i", e.i), vint(src, p + "/j", e.j), html_escape(e.got_bits), vnum(src, p + "/got", e.got),
        vnum(src, p + "/ref_hi", e.ref_hi), vnum(src, p + "/ref_lo", e.ref_lo), html_escape(e.ref_bits), vnum(src, p + "/err", e.err),
        vnum(src, p + "/allowed", e.allowed), vnum(src, p + "/ulps", e.ulps), vnum(src, p + "/abs_sum", e.abs_sum),
        tiled ? "<td>" + html_escape(tile_position(c, e.i, e.j)) + "</td>" : "");
  }
  s += "</tbody></table></div>";
  return s;
}

/// A case's run-to-run spread (a kernel declaring run-to-run nondeterminism), each figure tagged with its JSON pointer.
std::string spread_cell(const CaseResult& c, const std::string& src, const std::string& b) {
  const RunSpread& p = *c.spread;
  const std::string sp = b + "/spread";
  std::string s = fmt::format("run to run (declared): {} of {} later run(s) differ in {} element(s), max {} ulp", vint(src, sp + "/differing_runs", p.differing_runs),
                              std::max(0, p.runs - 1), vint(src, sp + "/elements", p.elements), vnum(src, sp + "/max_ulps", p.max_ulps));
  if (p.worst_index >= 0)
    s += fmt::format("; difference / allowed {} ({} ulp allowed there: {})", vnum(src, sp + "/max_frac", p.max_frac, p.max_frac > 1 ? "badt" : ""),
                     vnum(src, sp + "/worst_allowed_ulps", p.worst_allowed_ulps), html_escape(p.bound));
  s += fmt::format("; order-free elements {}, differing {}", vint(src, sp + "/order_free", p.order_free),
                   vint(src, sp + "/order_free_differ", p.order_free_differ));
  return s;
}

std::string failure_card(const CaseResult& c, std::size_t idx, const std::string& src, const std::string& anchor) {
  const std::string b = case_ptr(idx);
  std::string s = fmt::format("<article class=\"failure\" id=\"{}\"><h4>{} on <code>{}</code> {}</h4>", anchor, html_escape(c.case_id),
                              html_escape(c.kernel), status_badge(c.status));
  s += fmt::format("<p><b>Why:</b> {}</p>", c.reason.empty() ? kDash : html_escape(c.reason));
  if (!case_note(c).empty()) s += fmt::format("<p><b>Case:</b> {}</p>", html_escape(case_note(c)));
  for (const auto& f : c.flags)
    if (!is_note(f)) s += fmt::format("<p class=\"flag\">\u26a0 {}</p>", html_escape(f));
  s += fmt::format("<p><b>Inputs:</b> <code>{}</code>, M\u00d7N\u00d7K = {}\u00d7{}\u00d7{}</p>", html_escape(c.spec), vint(src, b + "/m", c.m),
                   vint(src, b + "/n", c.n), vint(src, b + "/k", c.k));
  s += "<p><b>Reproduce:</b></p>";
  s += c.repro.empty() ? "<p class=\"muted\">no reproduction command was recorded for this case</p>"
                       : "<pre class=\"repro\"><code>" + html_escape(c.repro) + "</code></pre>";
  if (graded(c)) {
    s += fmt::format("<p><b>Gate</b> ({}): <code>{}</code>; gate fraction {} (pass \u2264 1)</p>", html_escape(variant_name(c)),
                     html_escape(c.bound.allowed), vnum(src, b + "/gate_fraction", c.gate_fraction));
    if (!c.bound.arithmetic.empty()) s += "<pre><code>" + html_escape(c.bound.arithmetic) + "</code></pre>";
  }
  const Metrics& m = c.metrics;
  std::string extra;
  if (m.nonfinite > 0)
    extra += fmt::format("<li>{} non-finite output(s) where the reference is finite, first at flat index {}</li>",
                         vint(src, b + "/metrics/nonfinite", m.nonfinite), vint(src, b + "/metrics/first_nonfinite", m.first_nonfinite));
  if (m.unwritten > 0)
    extra += fmt::format("<li>{} output(s) never written (still the NaN pre-fill), first at flat index {}</li>",
                         vint(src, b + "/metrics/unwritten", m.unwritten), vint(src, b + "/metrics/first_unwritten", m.first_unwritten));
  if (m.guard_violations > 0)
    extra += fmt::format("<li>{} guard byte(s) changed outside C: {}</li>", vint(src, b + "/metrics/guard_violations", m.guard_violations),
                         html_escape(m.first_guard_violation));
  if (!m.deterministic && !c.spread)
    extra += fmt::format("<li>not deterministic: {} element(s) differ between runs</li>",
                         vint(src, b + "/metrics/nondeterministic_elements", m.nondeterministic_elements));
  if (c.spread) extra += "<li>" + spread_cell(c, src, b) + "</li>";
  if (!extra.empty()) s += "<ul>" + extra + "</ul>";
  s += batch_list(c, src, b) + error_map_block(c, src, b);
  if (!c.worst.empty()) {
    s += "<p><b>Worst elements by the course gate</b> (its error over allowed error), with their bits:</p>";
    s += worst_table(c, src, b);
  }
  s += "</article>";
  return s;
}

std::string gate_bar(double gf) {
  if (!std::isfinite(gf) || gf < 0) return "";
  const double w = std::min(gf, 1.0) * 100;
  return fmt::format("<span class=\"gf{}\" aria-hidden=\"true\"><span style=\"width:{:.0f}%\"></span></span>", gf > 1 ? " over" : "", w);
}

std::string metrics_table(const RunResult& r, const std::string& kernel, const std::string& src) {
  bool any_base = false, any_time = false;
  for (const auto& c : r.cases)
    if (c.kernel == kernel) {
      any_base |= c.baseline_ratio.has_value() || c.speed_ratio.has_value();
      any_time |= c.time_ms_median > 0 || c.tflops > 0;
    }
  std::string s =
      "<div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>case</th><th>status</th><th>tier</th><th class=\"num\">M\u00d7N\u00d7K</th>"
      "<th class=\"num\" title=\"max over the outputs of |c - ref| / allowed, allowed the envelope's per-element bound: the case passes "
      "iff <= 1\">error fraction</th><th class=\"num\" title=\"99th percentile of |c - ref| / allowed\">err frac p99</th>"
      "<th class=\"num\" title=\"max |c - ref|\">max abs</th><th class=\"num\" title=\"||C - Cref||_F / ||Cref||_F\">Frobenius</th>"
      "<th class=\"num\" title=\"||C - Cref||_max / ||Cref||_max\">max rel</th><th class=\"num\" title=\"max |c - ref| / (|A||B|)_ij\">"
      "componentwise</th><th class=\"num\" title=\"over the outputs that are not cancellation-dominated\">ULP max</th>"
      "<th class=\"num\">ULP median</th><th class=\"num\">ULP p99</th><th class=\"num\" title=\"outputs left out of the ULP "
      "statistics: (|A||B|)_ij / |ref_ij| > 1024\">cancel\u00adlation-dominated</th>"
      "<th class=\"num\" title=\"Inf/NaN where the reference is finite\">non-finite</th><th>deterministic</th><th>gate</th>"
      "<th class=\"num\" title=\"the course gate's max err / allowed: reported, never decides\">course gate fraction</th>";
  if (any_time) s += "<th class=\"num\">time ms (median)</th><th class=\"num\">TFLOP/s</th>";
  if (any_base) s += "<th class=\"num\" title=\"this kernel's max abs error / the baseline's\">vs baseline (error)</th><th class=\"num\" title=\"baseline time / this time\">vs baseline (speed)</th>";
  s += "</tr></thead><tbody>";
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.kernel != kernel) continue;
    const std::string b = case_ptr(i);
    const Metrics& m = c.metrics;
    std::string flags;
    for (const auto& f : c.flags)
      if (!is_note(f)) flags += fmt::format(" <span class=\"flag\" title=\"{}\">\u26a0</span>", html_escape(f));
    const std::string note = case_note(c);
    s += fmt::format("<tr><td class=\"case\" title=\"{}\">{}{}</td><td>{}</td><td>{}{}</td><td class=\"num\">{}\u00d7{}\u00d7{}</td>",
                     html_escape(note.empty() ? c.spec : note + " \u2014 " + c.spec),
                     html_escape(c.case_id), flags, status_badge(c.status), html_escape(std::string(to_string(c.tier))),
                     c.vacuous ? " <span class=\"flag\" title=\"the bound admits an all-zeros output here: no evidence\">vacuous</span>" : "",
                     vint(src, b + "/m", c.m), vint(src, b + "/n", c.n), vint(src, b + "/k", c.k));
    if (graded(c)) {
      auto cell = [&](const char* key, double v) { return "<td class=\"num\">" + vnum(src, b + "/metrics/" + key, v) + "</td>"; };
      s += fmt::format("<td class=\"num\">{}{}</td>", vnum(src, b + "/metrics/err_frac_max", m.err_frac_max, m.err_frac_max > 1 ? "badt" : ""),
                       gate_bar(m.err_frac_max));
      s += cell("err_frac_p99", m.err_frac_p99);
      s += cell("max_abs", m.max_abs) + cell("frobenius_rel", m.frobenius_rel) + cell("max_rel", m.max_rel) +
           cell("componentwise", m.componentwise) + cell("ulp_max", m.ulp_max) + cell("ulp_median", m.ulp_median) + cell("ulp_p99", m.ulp_p99);
      s += "<td class=\"num\">" + vint(src, b + "/metrics/ulp_cancelled", m.ulp_cancelled) + "</td>";
      s += fmt::format("<td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}{}</td>",
                       vint(src, b + "/metrics/nonfinite", m.nonfinite),
                       c.spread ? spread_cell(c, src, b) : vbool(src, b + "/metrics/deterministic", m.deterministic),
                       html_escape(variant_name(c)), vnum(src, b + "/gate_fraction", c.gate_fraction), "");
    } else {
      s += fmt::format("<td colspan=\"14\" class=\"muted\">{}</td>", html_escape(c.reason));
    }
    if (any_time) {
      s += "<td class=\"num\">" + (c.time_ms_median > 0 ? vnum(src, b + "/time_ms_median", c.time_ms_median) : std::string(kDash)) + "</td>";
      s += "<td class=\"num\">" + (c.tflops > 0 ? vnum(src, b + "/tflops", c.tflops) : std::string(kDash)) + "</td>";
    }
    if (any_base) {
      s += "<td class=\"num\">" + (c.baseline_ratio ? vnum(src, b + "/baseline_ratio", *c.baseline_ratio) + "\u00d7" : std::string(kDash)) +
           "</td>";
      s += "<td class=\"num\">" + (c.speed_ratio ? vnum(src, b + "/speed_ratio", *c.speed_ratio) + "\u00d7" : std::string(kDash)) + "</td>";
    }
    s += "</tr>";
  }
  s += "</tbody></table></div>";
  return s;
}

/// Where a kernel's summation order came from when it is not its declaration (certify --order revealed /
/// FILE, docs/reveal.md): per shape the revealed trees, the arithmetic checked on random inputs, what the
/// revelation cost and checked, and the cases that used it or fell back to the declared tier with why.
std::string order_block(const RunResult& r, const std::string& kernel, const std::string& src) {
  std::vector<std::vector<std::size_t>> shapes;  // case indices per shape, first seen first
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.kernel != kernel || !c.order) continue;
    auto it = std::find_if(shapes.begin(), shapes.end(), [&](const auto& v) {
      const OrderRecord& o = *r.cases[v.front()].order;
      return o.m == c.order->m && o.n == c.order->n && o.k == c.order->k;
    });
    if (it == shapes.end()) shapes.push_back({i});
    else it->push_back(i);
  }
  if (shapes.empty()) return "";
  std::string s = "<div class=\"order\"><p><b>Summation order: revealed, not declared.</b> The bitwise tier emulates the tree found "
                  "from outside on the probe launches at each shape; a kernel whose order changes with the data or between calls is "
                  "caught by the bitwise comparison itself.</p><ul>";
  for (const auto& idx : shapes) {
    const std::size_t i0 = idx.front();
    const OrderRecord& o = *r.cases[i0].order;
    const std::string b = case_ptr(i0) + "/order";
    s += fmt::format("<li><b>{}\u00d7{}\u00d7{}</b>, {}: ", vint(src, b + "/m", o.m), vint(src, b + "/n", o.n), vint(src, b + "/k", o.k),
                     o.source == "file" ? "read from <code>" + html_escape(o.file) + "</code>" : std::string("revealed"));
    s += o.tree.empty() ? std::string("no tree") : html_escape(o.tree);
    if (o.used)
      s += fmt::format(" <span class=\"muted\">({} launch(es); arithmetic: {}; checks: {})</span>", vint(src, b + "/launches", o.launches),
                       html_escape(o.arithmetic), html_escape(o.checks));
    std::string used, fell;
    for (std::size_t i : idx) {
      const CaseResult& c = r.cases[i];
      if (c.order->used && c.tier == Tier::Bitwise) used += (used.empty() ? "" : ", ") + ("<code>" + html_escape(c.case_id) + "</code>");
      else
        fell += fmt::format("<li><code>{}</code> has the {} tier: {}</li>", html_escape(c.case_id), html_escape(std::string(to_string(c.tier))),
                            html_escape(c.order->used ? std::string("a weaker tier asked for") : c.order->fallback));
    }
    if (!used.empty()) s += "<br>bitwise with this order: " + used;
    if (!fell.empty()) s += "<br>fell back to the declared order:<ul>" + fell + "</ul>";
    s += "</li>";
  }
  return s + "</ul></div>";
}

/// Gates of one kernel, grouped: cases whose bound has the same terms share one block.
std::string gates_section(const RunResult& r, const std::string& kernel, const std::string& src) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;  // key, case indices (first seen order)
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.kernel != kernel || !graded(c) || !c.bound.variant) continue;
    std::string key = variant_name(c) + "|" + repr(c.bound.rtol) + "|" + repr(c.bound.out_term) + "|" + (c.bound.vacuous ? "v" : "") + "|" +
                      c.bound.allowed;
    for (const auto& t : c.bound.terms) key += "|" + t.name + "=" + t.formula;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {i}});
    else it->second.push_back(i);
  }
  if (groups.empty()) return "";
  std::string s;
  for (const auto& [key, idx] : groups) {
    const CaseResult& c0 = r.cases[idx.front()];
    const std::string b0 = case_ptr(idx.front());
    std::string names;
    for (std::size_t i : idx) names += (names.empty() ? "" : ", ") + ("<code>" + html_escape(r.cases[i].case_id) + "</code>");
    s += fmt::format("<div class=\"gate\"><h5>{} gate, K = {}{} \u2014 {}</h5>", html_escape(variant_name(c0)), vint(src, b0 + "/k", c0.k),
                     c0.bound.vacuous ? " <span class=\"badt\">(vacuous: K\u00b7u \u2265 1, no rigorous bound)</span>" : "", names);
    s += "<div class=\"scroll\"><table class=\"terms\"><thead><tr><th>term</th><th>formula</th><th class=\"num\">value</th></tr></thead><tbody>";
    for (std::size_t t = 0; t < c0.bound.terms.size(); ++t) {
      const BoundTerm& bt = c0.bound.terms[t];
      s += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td></tr>", html_escape(bt.name), html_escape(bt.formula),
                       vnum(src, fmt::format("{}/bound/terms/{}/value", b0, t), bt.value));
    }
    s += "</tbody></table></div>";
    s += fmt::format("<p class=\"eq\">rtol = {}", vnum(src, b0 + "/bound/rtol", c0.bound.rtol));
    if (c0.bound.variant == BoundVariant::Independent) {
      s += "; atol = rtol \u00b7 max|ref|:";
      for (std::size_t i : idx)
        s += fmt::format(" {} {}{}", html_escape(r.cases[i].case_id), vnum(src, case_ptr(i) + "/bound/atol", r.cases[i].bound.atol),
                         i == idx.back() ? "" : ",");
    } else {
      s += fmt::format("; u_out = {}", vnum(src, b0 + "/bound/out_term", c0.bound.out_term));
    }
    s += "</p>";
    s += fmt::format("<p>Allowed error per element: <code>{}</code></p>", html_escape(c0.bound.allowed));
    std::set<std::string> distinct;
    for (std::size_t i : idx) distinct.insert(r.cases[i].bound.arithmetic);
    std::set<std::string> seen;
    std::string ar;
    for (std::size_t i : idx) {
      const std::string& a = r.cases[i].bound.arithmetic;
      if (a.empty() || !seen.insert(a).second) continue;
      // One line per distinct arithmetic; named by case only where the cases differ (their atol).
      ar += (distinct.size() > 1 ? html_escape(r.cases[i].case_id) + ": " : "") + html_escape(a) + "\n";
    }
    if (!ar.empty()) s += "<pre><code>" + ar + "</code></pre>";
    s += "</div>";
  }
  return s;
}

}  // namespace

std::string run_title(const RunResult& r) {
  std::string k;
  for (const auto& n : r.kernels) k += (k.empty() ? "" : ", ") + n;
  if (k.empty()) {
    std::vector<std::string> seen;
    for (const auto& c : r.cases)
      if (std::find(seen.begin(), seen.end(), c.kernel) == seen.end()) seen.push_back(c.kernel);
    for (const auto& n : seen) k += (k.empty() ? "" : ", ") + n;
  }
  return k;
}

std::vector<std::string> kernels_of(const RunResult& r) {
  std::vector<std::string> seen;
  for (const auto& n : r.kernels)
    if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(n);
  for (const auto& c : r.cases)
    if (std::find(seen.begin(), seen.end(), c.kernel) == seen.end()) seen.push_back(c.kernel);
  // Kernels listed without cases (e.g. a baseline that ran nothing) get no table.
  std::vector<std::string> out;
  for (const auto& n : seen)
    for (const auto& c : r.cases)
      if (c.kernel == n) {
        out.push_back(n);
        break;
      }
  return out;
}

/// A run of conversion cases: one line per case, then each case's record (only the failing ones
/// when there are many, as the banner does for a sweep).
static std::string conversion_run_body(const RunResult& r, std::size_t ri, const std::string& src) {
  std::string s = "<h3>Conversion kernels</h3><div class=\"scroll\"><table><thead><tr><th>kernel</th><th>status</th>"
                  "<th class=\"num\">patterns</th><th class=\"num\">mismatches</th><th>reason</th></tr></thead><tbody>";
  for (std::size_t j = 0; j < r.cases.size(); ++j) {
    const CaseResult& c = r.cases[j];
    const std::string b = case_ptr(j) + "/conversion";
    const bool checked = c.conversion && c.conversion->has_patterns;
    s += fmt::format("<tr><td><a href=\"#run-{}-conv-{}\"><code>{}</code></a></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                     "<td>{}</td></tr>",
                     ri, j, html_escape(c.kernel), status_badge(c.status), checked ? vint(src, b + "/patterns", c.conversion->patterns) : kDash,
                     checked ? vint(src, b + "/mismatches", c.conversion->mismatches) : kDash, html_escape(c.reason));
  }
  s += "</tbody></table></div>";
  const bool summarise = r.cases.size() > 8;
  for (std::size_t j = 0; j < r.cases.size(); ++j) {
    const CaseResult& c = r.cases[j];
    if (!c.conversion || (summarise && c.status == CaseStatus::Pass)) continue;
    s += conversion_section(*c.conversion, fmt::format("run-{}-conv-{}", ri, j), src, case_ptr(j) + "/conversion");
  }
  return s;
}

/// The class -> case table (docs/suites.md, "Coverage classes"): which case exercises which class.
std::string coverage_section(const RunResult& r) {
  std::map<std::string, std::vector<const CaseResult*>> by_class;
  for (const auto& c : r.cases)
    for (const auto& cls : c.coverage) by_class[cls].push_back(&c);
  if (by_class.empty()) return "";
  std::string s = "<h3>Coverage: which case exercises which class</h3><table><tr><th>class</th><th>cases</th></tr>";
  for (const auto& [cls, cases] : by_class) {
    std::string list;
    for (const CaseResult* c : cases)
      list += fmt::format("{}<code>{}</code>{} {}", list.empty() ? "" : ", ", html_escape(c->case_id),
                          r.kernels.size() > 1 ? " (" + html_escape(c->kernel) + ")" : "", status_badge(c->status));
    s += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>", html_escape(cls), list);
  }
  return s + "</table>";
}

std::string run_section(const RunResult& r, std::size_t ri) {
  const std::string src = fmt::format("r{}", ri);
  const std::string id = fmt::format("run-{}", ri);
  const bool ok = r.passed();
  std::string s = fmt::format("<section class=\"run\" id=\"{}\"><h2>Suite <code>{}</code> \u2014 {}</h2>", id, html_escape(r.suite.empty() ? "?" : r.suite),
                              html_escape(run_title(r)));
  s += fmt::format("<p><b class=\"{}\">{}</b>: {} ({} results)</p>", ok ? "okt" : "badt", ok ? "CERTIFIED" : "FAILED", counts_line(r, src),
                   html_escape(std::string(to_string(r.kind))));
  if (!r.notes.empty()) {
    s += "<dl class=\"kv\">";
    for (const auto& [k, v] : r.notes) s += fmt::format("<dt>{}</dt><dd>{}</dd>", html_escape(k), html_escape(v));
    s += "</dl>";
  }
  s += preset_table(r, src);
  s += "<details class=\"fold\"><summary>Environment and exact command</summary>" + env_table(r.env, src, "/environment") + "</details>";
  if (r.kind == RunKind::Conversion) return s + conversion_run_body(r, ri, src) + "</section>";
  std::string fails;
  for (std::size_t i = 0; i < r.cases.size(); ++i)
    if (bad(r.cases[i])) fails += failure_card(r.cases[i], i, src, fmt::format("fail-{}-{}", ri, i));
  if (!fails.empty()) s += fmt::format("<h3 id=\"{}-failures\">Failures</h3>", id) + fails;
  s += "<h3>Results by kernel</h3>";
  const auto run_kernels = kernels_of(r);
  for (std::size_t ki = 0; ki < run_kernels.size(); ++ki) {
    const std::string& k = run_kernels[ki];
    std::string traits, backend;
    for (const auto& c : r.cases)
      if (c.kernel == k) {
        traits = c.kernel_traits;
        backend = c.backend;
        break;
      }
    s += fmt::format("<h4 id=\"{}-k{}\"><code>{}</code>{}</h4>", id, ki, html_escape(k), backend.empty() ? "" : " <span class=\"muted\">(" + html_escape(backend) + ")</span>");
    if (!traits.empty()) s += "<p class=\"muted\">" + html_escape(traits) + "</p>";
    s += order_block(r, k, src);
    s += metrics_table(r, k, src);
  }
  s += coverage_section(r);
  s += plots_section(r, src, id);
  s += passing_error_maps(r, src) + passing_batch_lists(r, src);
  std::string gates;
  for (const auto& k : kernels_of(r)) {
    const std::string g = gates_section(r, k, src);
    if (!g.empty()) gates += fmt::format("<h4><code>{}</code></h4><div class=\"gates\">", html_escape(k)) + g + "</div>";
  }
  if (!gates.empty())
    s += "<h3>Gates: the bound model\u2019s arithmetic</h3><p class=\"muted\">Each gate adds one term per error source (storage "
         "rounding of A and B, products, accumulation, output), each with its growth law; the per-element inequality below is what "
         "every output was checked against, and the gate fraction is the largest ratio of error to allowed error.</p>" +
         gates;
  s += "</section>";
  return s;
}

namespace {

/// The declared NaN convention with what it writes into the destination (oracle/round.hpp), and the
/// leniency a PRESERVE of a plugin built for ABI minor 0 or 1 keeps.
std::string nan_convention_text(const ConversionResult& c) {
  if (c.nan_payload.empty()) return "";
  std::string t = "<code>" + html_escape(c.nan_payload) + "</code>";
  const Format* dst = find_format(c.to);
  const auto n = parse_nan_payload(c.nan_payload);
  if (dst && n) t += ": " + html_escape(describe_nan_convention(*dst, *n));
  if (c.record.is_object() && c.record.value("nan_counted_apart", false))
    t += " <span class=\"muted\">(a plugin of ABI minor 0 or 1: NaN results with other payload or sign bits counted apart unless "
         "--strict-nan)</span>";
  return t;
}

}  // namespace

std::string conversion_section(const ConversionResult& c, const std::string& id, const std::string& src, const std::string& b) {
  std::string s = fmt::format("<section class=\"conv\" id=\"{}\"><h2>Conversion <code>{}</code> \u2192 <code>{}</code>{}</h2>", id,
                              html_escape(c.from), html_escape(c.to),
                              c.subject.empty() ? "" : " <span class=\"muted\">(" + html_escape(c.subject) + ")</span>");
  s += fmt::format("<p><b class=\"{}\">{}</b>: {} mismatch(es){}</p>", c.passed ? "okt" : "badt", c.passed ? "PASS" : "FAIL",
                   vint(src, b + "/mismatches", c.mismatches),
                   c.has_model_mismatches && c.model_mismatches
                       ? fmt::format(", {} where fpcert\u2019s fast model disagrees with MPFR", vint(src, b + "/model_mismatches", c.model_mismatches))
                       : "");
  s += "<dl class=\"kv\">";
  auto kv = [&](const char* k, const std::string& v) {
    if (!v.empty()) s += fmt::format("<dt>{}</dt><dd>{}</dd>", k, v);
  };
  kv("rounding", c.rounding.empty() ? "" : "<code>" + html_escape(c.rounding) + "</code>");
  kv("saturation", c.saturation.empty() ? "" : "<code>" + html_escape(c.saturation) + "</code>");
  kv("NaN convention (declared)", nan_convention_text(c));
  kv("subject", html_escape(c.subject));
  kv("device", html_escape(c.device));
  if (c.has_patterns) kv("patterns", vint(src, b + "/patterns", c.patterns));
  if (c.has_mpfr_checked) kv("checked against MPFR", vint(src, b + "/mpfr_checked", c.mpfr_checked));
  if (c.has_nan_differences && c.nan_differences)
    kv("NaN results other than fpcert’s, accepted", vint(src, b + "/nan_differences", c.nan_differences) +
                                                            (c.nan_payload == "any" ? " (the declared convention accepts any NaN)"
                                                                                    : " (not counted as mismatches)"));
  if (c.has_seconds) kv("seconds", vnum(src, b + "/seconds", c.seconds));
  kv("command", c.command.empty() ? "" : "<code>" + html_escape(c.command) + "</code>");
  s += "</dl>";
  if (c.has_environment) s += "<h3>Environment</h3>" + env_table(c.env, src, b + "/environment");
  // Outcome bars.
  std::vector<std::string> cats;
  std::vector<double> counts;
  std::vector<std::string> tips;
  std::string table = "<div class=\"scroll\"><table><thead><tr><th>outcome</th><th class=\"num\">patterns</th></tr></thead><tbody>";
  for (const auto& o : c.outcomes) {
    const std::string ptr = b + (c.outcomes_listed ? "/outcomes/" + o.key + "/count" : "/outcomes/" + o.key);
    table += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td></tr>", html_escape(o.name), vint(src, ptr, o.count));
    if (o.count == 0) continue;
    cats.push_back(o.name);
    counts.push_back(static_cast<double>(o.count));
    tips.push_back(fmt::format("{}: {} pattern(s)", o.name, o.count));
  }
  table += "</tbody></table></div>";
  if (!cats.empty()) {
    svg::BarChart bc(cats, svg::fit_axis(svg::Scale::Log, counts, "source patterns (log scale)", true), true, 600,
                     std::max(140.0, 80.0 + 24.0 * static_cast<double>(cats.size())));
    bc.title(fmt::format("Outcomes: {} \u2192 {}", c.from, c.to));
    bc.group("", counts, c.passed ? "#0072B2" : "#D55E00", tips);
    s += "<div class=\"figs\">" +
         figure(bc.render(), "Every source bit pattern, classified by what the correctly rounded conversion does with it (exact, "
                             "rounded, overflow, underflow to subnormal or zero, NaN, \u2026); outcome classes with no pattern are "
                             "listed in the table only.") +
         "</div>";
  }
  s += table;
  if (!c.listed.empty()) {
    s += "<h3>Mismatches (first listed)</h3><div class=\"scroll\"><table><thead><tr><th>source bits</th><th>source value</th>"
         "<th>expected</th><th>got</th><th>outcome</th><th>where</th></tr></thead><tbody>";
    for (const auto& m : c.listed)
      s += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                       html_escape(m.src_bits), html_escape(m.src_value), html_escape(m.expected_bits), html_escape(m.got_bits), html_escape(m.outcome),
                       m.model_bug ? "fpcert model \u2260 MPFR" : "subject");
    s += "</tbody></table></div>";
    if (!c.command.empty()) s += "<p><b>Reproduce:</b></p><pre class=\"repro\"><code>" + html_escape(c.command) + "</code></pre>";
  }
  s += "</section>";
  return s;
}

std::string banner(const ReportInput& in) {
  bool ok = true;
  for (const auto& r : in.runs) ok &= r.passed();
  for (const auto& c : in.conversions) ok &= c.passed;
  for (const auto& e : in.experiments) ok &= e.passed;
  for (const auto& a : in.audits) ok &= !audit_finds_wanting(a);
  std::string s = fmt::format("<header class=\"banner {}\"><h1>fpcert accuracy report</h1><div class=\"verdict\">{}</div>", ok ? "ok" : "bad",
                              ok ? "CERTIFIED" : "FAILED");
  if (in.runs.empty() && in.conversions.empty() && in.experiments.empty() && in.audits.empty()) s += "<p>No results.</p>";
  s += "<ul>";
  for (std::size_t i = 0; i < in.experiments.size(); ++i) {
    const ExperimentRecord& e = in.experiments[i];
    s += fmt::format("<li><a href=\"#exp-{}\">experiment <code>{}</code>{}</a> on {}: <b class=\"{}\">{}</b></li>", i, html_escape(e.experiment),
                     e.preset.empty() ? "" : " (preset " + html_escape(e.preset) + ")", html_escape(e.device.empty() ? "?" : e.device),
                     e.passed ? "okt" : "badt", e.passed ? "done" : "its checks failed");
  }
  for (std::size_t i = 0; i < in.runs.size(); ++i) {
    const RunResult& r = in.runs[i];
    if (gemm_run(r)) continue;  // in the kernel x suite matrix below (html_overview.cpp)
    s += fmt::format("<li><a href=\"#run-{}\">suite <code>{}</code></a> on {}: <b class=\"{}\">{}</b> \u2014 {}</li>", i, html_escape(r.suite),
                     html_escape(run_title(r)), r.passed() ? "okt" : "badt", r.passed() ? "certified" : "failed", counts_line(r, fmt::format("r{}", i)));
  }
  // Many conversions (a whole sweep): one summary line, then only the failing ones.
  const bool summarise = in.conversions.size() > 8;
  if (summarise) {
    std::size_t passed = 0;
    for (const auto& c : in.conversions) passed += c.passed;
    s += fmt::format("<li>conversions: {} checked, <b class=\"okt\">{} passed</b>, <b class=\"{}\">{} failed</b> (each below)</li>",
                     in.conversions.size(), passed, passed == in.conversions.size() ? "okt" : "badt", in.conversions.size() - passed);
  }
  for (std::size_t i = 0; i < in.conversions.size(); ++i) {
    const ConversionResult& c = in.conversions[i];
    if (summarise && c.passed) continue;
    s += fmt::format("<li><a href=\"#conv-{}\">conversion <code>{}</code> \u2192 <code>{}</code></a> ({}, {}): <b class=\"{}\">{}</b> \u2014 "
                     "{} mismatch(es)</li>",
                     i, html_escape(c.from), html_escape(c.to), html_escape(c.rounding), html_escape(c.saturation), c.passed ? "okt" : "badt",
                     c.passed ? "pass" : "fail", vint(fmt::format("c{}", i), "/mismatches", c.mismatches));
  }
  s += "</ul>";
  if (!ok) {
    // Which gates failed, across runs.
    std::vector<std::pair<std::string, std::string>> refs;
    std::int64_t total = 0;
    std::string list;
    for (std::size_t ri = 0; ri < in.runs.size(); ++ri) {
      const RunResult& r = in.runs[ri];
      for (const char* k : {"fail", "crashed", "hung", "error"}) refs.push_back({fmt::format("r{}", ri), std::string("/counts/") + k});
      total += r.count(CaseStatus::Fail) + r.count(CaseStatus::Crashed) + r.count(CaseStatus::Hung) + r.count(CaseStatus::Error);
      for (std::size_t i = 0; i < r.cases.size(); ++i) {
        const CaseResult& c = r.cases[i];
        if (!bad(c)) continue;
        list += fmt::format("<li><a href=\"#fail-{}-{}\">{} on <code>{}</code></a>: {}{}</li>", ri, i, html_escape(c.case_id), html_escape(c.kernel),
                            c.status != CaseStatus::Fail ? html_escape(std::string(to_string(c.status))) + ": "
                            : c.conversion             ? std::string("conversion: ")
                                                       : html_escape(variant_name(c)) + " gate: ",
                            html_escape(c.reason));
      }
    }
    // Folded: the matrix below says which kernel failed where; the list says why, case by case.
    if (!in.runs.empty())
      s += fmt::format("<details class=\"failed\"><summary><b>Failed gates</b> ({} case(s)): why, case by case</summary><ul class=\"failed\">{}</ul>"
                       "</details>",
                       vsum(refs, total), list);
  }
  // Table of contents.
  s += "<nav class=\"toc\">";
  for (std::size_t i = 0; i < in.runs.size(); ++i) s += fmt::format("<a href=\"#run-{}\">{}</a> ", i, html_escape(in.runs[i].suite));
  for (std::size_t i = 0; i < in.conversions.size(); ++i)
    s += fmt::format("<a href=\"#conv-{}\">{}\u2192{}</a> ", i, html_escape(in.conversions[i].from), html_escape(in.conversions[i].to));
  for (std::size_t i = 0; i < in.experiments.size(); ++i)
    s += fmt::format("<a href=\"#exp-{}\">{}</a> ", i, html_escape(in.experiments[i].experiment));
  s += "</nav></header>";
  return s;
}


}  // namespace fpcert::html
