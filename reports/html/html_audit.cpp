// reports/html/html_audit.cpp — `fpcert audit` in the HTML report (docs/audit.md, "In the HTML report"): a test's
// acceptance rule as a reviewer reads it: the static findings, the false alarms with their labels and flake rate, the
// power table (each mutant caught or passed by the rule and by fpcert, the replacement, side by side, with the defect's
// size and the smallest defect each detects), reproducibility and batch invariance. Numbers point into a<i>, the
// audit as audit_to_json writes it (html.hpp states the contract).
#include <fmt/format.h>

#include <cmath>

#include "reports/html/html_parts.hpp"

namespace fpcert::html {
namespace {

std::string caught(bool yes, const char* y, const char* n) { return fmt::format("<b class=\"{}\">{}</b>", yes ? "okt" : "badt", yes ? y : n); }

}  // namespace

std::string audit_section(const AuditRecord& a, std::size_t ai) {
  const std::string src = fmt::format("a{}", ai);
  const bool wanting = audit_finds_wanting(a);
  std::string s = fmt::format("<section id=\"audit-{}\" class=\"audit\"><h2>Audit of a test's rule: <code>{}</code> on <code>{}</code></h2>", ai,
                              html_escape(a.rule), html_escape(a.kernel));
  s += fmt::format("<p>Verdict on the rule: {}</p>", caught(!wanting, "no false alarm, no missed fault fpcert refuses",
                                                          "wanting: it fails correct arithmetic, misses a fault fpcert refuses, or a declaration is refuted"));
  s += "<dl class=\"env\">";
  auto dd = [&](const char* k, const std::string& v) { s += fmt::format("<dt>{}</dt><dd>{}</dd>", k, v); };
  dd("rule", html_escape(a.rule_text));
  dd("kernel", "<code>" + html_escape(a.kernel) + "</code>: " + html_escape(a.traits));
  std::string seeds;
  for (std::size_t i = 0; i < a.seeds.size(); ++i) seeds += (i ? ", " : "") + vint(src, fmt::format("/seeds/{}", i), a.seeds[i]);
  if (a.op != "gemm")  // softmax, log_softmax, layernorm, rmsnorm: rows
    dd("shape", fmt::format("{} over {} rows of {} {}; inputs <code>{}</code>; seeds {}", html_escape(a.op), vint(src, "/m", a.m), vint(src, "/n", a.n),
                            a.op == "softmax" || a.op == "log_softmax" ? "logits" : "entries", html_escape(a.inputs), seeds));
  else
    dd("shape", fmt::format("m = {}, n = {}, k = {}; inputs <code>{}</code>; seeds {}", vint(src, "/m", a.m), vint(src, "/n", a.n),
                            vint(src, "/k", a.k), html_escape(a.inputs), seeds));
  for (const std::string& al : a.allow) dd("allowed", "<code>" + html_escape(al) + "</code>: admitted as correct arithmetic, not a fault");
  dd("reference", html_escape(a.reference));
  dd("time", vnum(src, "/seconds", a.seconds) + " s");
  s += "</dl>";

  // Static findings.
  s += fmt::format("<h3>Static findings</h3><p>Over {} elements (|ref| in [{}, {}]): unsatisfiable on {} of the seeds ({} elements), "
                   "tolerance below half an ulp on {}, below fpcert's envelope on {} ({} through cancellation), an output of 0 admitted on {}.</p>",
                   vint(src, "/static/elements", a.elements), vnum(src, "/static/ref_abs_min", a.ref_abs_min),
                   vnum(src, "/static/ref_abs_max", a.ref_abs_max), vint(src, "/static/cr_fail_runs", a.cr_fail_runs),
                   vint(src, "/static/cr_fail", a.cr_fail), vint(src, "/static/below_half_ulp", a.below_half_ulp),
                   vint(src, "/static/below_bound", a.below_bound), vint(src, "/static/below_bound_cancel", a.below_bound_cancel),
                   vint(src, "/static/admit_zero", a.admit_zero));
  s += "<ul class=\"audit-findings\">";
  for (const std::string& f : a.findings) s += "<li>" + html_escape(f) + "</li>";
  if (a.findings.empty()) s += "<li>none</li>";
  s += "</ul>";

  // False alarms.
  s += "<h3>False alarms: the correct arithmetic of the declaration</h3>"
       "<table class=\"audit-false-alarms\"><thead><tr><th>arithmetic</th><th>order</th><th>runs</th><th>rule failed</th>"
       "<th>worst error / tolerance</th><th>fpcert</th><th>labels</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < a.variants.size(); ++i) {
    const AuditVariantRow& v = a.variants[i];
    const std::string p = fmt::format("/false_alarms/variants/{}", i);
    std::string labels;
    for (const auto& [l, n] : v.labels) labels += (labels.empty() ? "" : "<br>") + html_escape(l) + " \u00d7 " + vint(src, p + "/labels/" + l, n);
    s += fmt::format("<tr class=\"{}\"><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                     "<td>{}</td><td>{}</td></tr>",
                     v.rule_failed ? "bad" : "ok", html_escape(v.name), html_escape(v.order), vint(src, p + "/runs", v.runs),
                     vint(src, p + "/rule_failed", v.rule_failed), vnum(src, p + "/worst_ratio", v.worst_ratio),
                     v.fpcert.empty() ? kDash : html_escape(v.fpcert), labels.empty() ? kDash : labels);
  }
  s += fmt::format("</tbody></table><p>Flake rate: {} of {} runs fail the rule ({}).</p>", vint(src, "/false_alarms/failed_runs", a.false_alarm_runs),
                   vint(src, "/false_alarms/runs", a.variant_runs), vnum(src, "/false_alarms/flake_rate",
                                                                          a.variant_runs ? static_cast<double>(a.false_alarm_runs) / a.variant_runs : 0.0));

  // Power, the rule and the replacement side by side.
  if (!a.mutants.empty()) {
    s += "<h3>Power: mutants of the kernel on the same inputs</h3>";
    if (a.sample_rows > 0)
      s += fmt::format("<p>On a sample of at most {} of the {} rows of C per seed, every column.</p>", vint(src, "/power_rows", a.sample_rows),
                       vint(src, "/m", a.m));
    s += "<table class=\"audit-power\"><thead><tr><th>mutant</th><th>fault</th><th>runs</th><th>dormant</th><th>rule passes</th>"
         "<th>the rule</th><th>fpcert refuses</th><th>fpcert (replacement)</th><th>defect: max |mutant \u2212 kernel| / max |ref|</th></tr></thead><tbody>";
    int live = 0, rule_caught = 0, fpcert_caught = 0;
    for (std::size_t i = 0; i < a.mutants.size(); ++i) {
      const AuditMutantRow& m = a.mutants[i];
      const std::string p = fmt::format("/power/{}", i);
      const bool active = m.dormant < m.runs;
      const bool rule_ok = m.rule_passed == 0, fp_ok = m.fpcert_refused == m.runs;
      if (active) ++live, rule_caught += rule_ok, fpcert_caught += fp_ok;
      s += fmt::format("<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                       !active ? "dormant" : rule_ok ? "ok" : "bad", html_escape(m.mutant), html_escape(m.what), vint(src, p + "/runs", m.runs),
                       vint(src, p + "/dormant", m.dormant), vint(src, p + "/rule_passed", m.rule_passed),
                       !active ? "dormant" : caught(rule_ok, "caught", "passed"), vint(src, p + "/fpcert_refused", m.fpcert_refused),
                       caught(fp_ok, "caught", m.fpcert_refused ? "caught on some seeds" : "passed"),
                       std::isfinite(m.defect) ? vnum(src, p + "/defect", m.defect) : std::string("inf"));
    }
    s += "</tbody></table>";
    const auto smallest = [&](const char* who, double d) {
      return d < 0 ? std::string("none caught") : vnum(src, std::string("/smallest_detected/") + who, d);
    };
    s += fmt::format("<table class=\"audit-summary\"><thead><tr><th>check</th><th>false alarms (runs)</th><th>mutants caught on every seed, "
                     "of {} that changed the output</th><th>smallest defect detected</th></tr></thead><tbody>"
                     "<tr><td>the rule <code>{}</code></td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>"
                     "<tr><td>fpcert\u2019s per-element bound (the replacement)</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>"
                     "</tbody></table>",
                     live, html_escape(a.rule), vint(src, "/false_alarms/failed_runs", a.false_alarm_runs), rule_caught,
                     smallest("rule", a.smallest_detected(false)),
                     a.variants.empty() || a.variants.front().fpcert.empty() ? std::string(kDash) : "on the kernel: " + html_escape(a.variants.front().fpcert),
                     fpcert_caught, smallest("fpcert", a.smallest_detected(true)));
  }

  // Reproducibility and batch invariance.
  s += fmt::format("<h3>Reproducibility and batch invariance</h3><p>Reproducibility (declared {}): {}.</p>", html_escape(a.determinism),
                   a.reproducible ? caught(true, "reproducible", "") + " over " + vint(src, "/reproducibility/runs", a.repro_runs) + " runs"
                                  : caught(false, "", "differs") + " at " + html_escape(a.repro_first));
  if (a.batch_declared) {
    s += fmt::format("<p>Batch invariance declared ({}): each probe row embedded in a batch of M rows must give its M = 1 result bit for bit.</p>"
                     "<table class=\"audit-batch\"><thead><tr><th>M</th><th>probe rows</th><th>differ</th><th>first difference</th></tr></thead><tbody>",
                     html_escape(a.batch_note));
    for (std::size_t i = 0; i < a.batch_rows.size(); ++i) {
      const AuditBatchRow& b = a.batch_rows[i];
      const std::string p = fmt::format("/batch_invariance/sizes/{}", i);
      s += fmt::format("<tr class=\"{}\"><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                       b.differ ? "bad" : "ok", vint(src, p + "/batch", b.batch), vint(src, p + "/probes", b.probes), vint(src, p + "/differ", b.differ),
                       b.first.empty() ? kDash : html_escape(b.first));
    }
    s += "</tbody></table>";
  } else {
    s += "<p>Batch invariance: not declared (not checked).</p>";
  }
  return s + "</section>";
}

}  // namespace fpcert::html
