// reports/tc_card_html.cpp — tensor-core behaviour cards as HTML (reports/tc_card_html.hpp).
#include "reports/tc_card_html.hpp"

#include <cmath>
#include <cstdio>

#include "oracle/format.hpp"
#include "reports/escape.hpp"
#include "reports/html/svg.hpp"

namespace fpcert {
namespace {


std::string hex(std::uint32_t v) { return code_hex(v); }

/// "0x3c00 (1)" for a code of the format with this tag; integers for s8/s32.
std::string code_text(const std::string& tag, std::uint32_t code) {
  if (tag == "s8") return std::to_string(static_cast<int>(static_cast<std::int8_t>(code & 0xFF)));
  if (tag == "s32") return std::to_string(static_cast<std::int32_t>(code));
  const Format* f = find_format(tag);
  if (!f) return hex(code);
  const double v = to_double(*f, from_container(*f, code));
  char b[64];
  if (std::isnan(v)) std::snprintf(b, sizeof b, "NaN");
  else std::snprintf(b, sizeof b, "%.9g", v);
  return hex(code) + " (" + b + ")";
}

std::string status(const BehaviourCard& c) {
  if (c.supported && !c.why.empty()) return "<span class=\"bad\">device failure</span>";
  if (!c.supported) return "<span class=\"ns\">not supported</span>";
  if (c.passed()) return "<span class=\"ok\">model validated</span>";
  return "<span class=\"bad\">disagreements</span>";
}

std::string query_html(const BehaviourCard& c, const CardQuery& q) {
  std::string s = "<tr><td>" + html_escape(q.note) + "</td><td>";
  for (std::size_t i = 0; i < q.products.size(); ++i) {
    if (i) s += "<br>";
    s += "a<sub>" + std::to_string(q.products[i].i) + "</sub>=" + html_escape(code_text(c.a_format, q.products[i].a)) + " b=" +
         html_escape(code_text(c.b_format, q.products[i].b));
  }
  if (q.products.empty()) s += "(all products 0)";
  s += "</td><td>" + html_escape(code_text(c.acc_format, q.c)) + "</td><td>" + html_escape(code_text(c.acc_format, q.observed)) + "</td><td" +
       (q.observed == q.model ? "" : " class=\"bad\"") + ">" + html_escape(code_text(c.acc_format, q.model)) + "</td></tr>";
  return s;
}

std::string card_html(const BehaviourCard& c) {
  std::string s = "<section class=\"card\" id=\"tc-" + html_escape(c.id) + "\"><h2>" + html_escape(c.id) + " " + status(c) + "</h2>";
  s += "<p class=\"insn\"><code>" + html_escape(c.instruction) + "</code> — m" + std::to_string(c.m) + "n" + std::to_string(c.n) + "k" +
       std::to_string(c.k) + ", " + html_escape(c.a_format) + " × " + html_escape(c.b_format) + " + " + html_escape(c.acc_format) + "; measured on " +
       html_escape(c.device) + "</p>";
  if (!c.supported) return s + "<p>Not supported here: " + html_escape(c.why) + ". Nothing was measured; this is not a pass.</p></section>";
  if (!c.why.empty()) return s + "<p>" + html_escape(c.why) + ". Nothing was measured; this is not a pass.</p></section>";
  s += "<p class=\"summary\"><b>Model.</b> " + html_escape(c.summary) + "</p>";
  char line[256];
  std::snprintf(line, sizeof line, "<p><b>Probe:</b> %d queries, %d not reproduced by the fitted model. <b>Validation:</b> %llu samples, %llu disagreements (%.1f s).</p>",
                c.probe_queries, c.probe_disagreements, static_cast<unsigned long long>(c.validated_samples()),
                static_cast<unsigned long long>(c.validation_disagreements()), c.seconds);
  s += line;
  s += "<table><thead><tr><th>property</th><th>how it was probed</th><th>observed</th><th>conclusion</th><th>queries</th><th>not reproduced</th></tr></thead><tbody>";
  for (const auto& p : c.properties) {
    s += "<tr><td>" + html_escape(p.name) + "</td><td>" + html_escape(p.method) + "</td><td>" + html_escape(p.observed) + "</td><td>" + html_escape(p.conclusion);
    if (!p.alternatives.empty()) {
      s += "<br><small>also consistent: ";
      for (std::size_t i = 0; i < p.alternatives.size(); ++i) s += (i ? "; " : "") + html_escape(p.alternatives[i]);
      s += "</small>";
    }
    s += "</td><td>" + std::to_string(p.queries) + "</td><td" + (p.disagree ? " class=\"bad\"" : "") + ">" + std::to_string(p.disagree) + "</td></tr>";
  }
  s += "</tbody></table>";
  s += "<details><summary>deciding queries (inputs, instruction's D, model's D)</summary><table><thead><tr><th>query</th><th>products</th><th>C</th>"
       "<th>instruction</th><th>model</th></tr></thead><tbody>";
  for (const auto& p : c.properties)
    for (const auto& q : p.examples) s += query_html(c, q);
  s += "</tbody></table></details>";
  s += "<table><thead><tr><th>distribution</th><th>samples</th><th>disagreements</th></tr></thead><tbody>";
  for (const auto& v : c.validation)
    s += "<tr><td>" + html_escape(v.distribution) + "</td><td>" + std::to_string(v.samples) + "</td><td" + (v.disagreements ? " class=\"bad\"" : "") + ">" +
         std::to_string(v.disagreements) + "</td></tr>";
  s += "</tbody></table>";
  if (!c.disagreements.empty()) {
    s += "<h3>Disagreements (first " + std::to_string(c.disagreements.size()) + ")</h3><table><thead><tr><th>distribution</th><th>a (row of A)</th>"
         "<th>b (column of B)</th><th>C</th><th>instruction</th><th>model</th></tr></thead><tbody>";
    for (const auto& d : c.disagreements) {
      std::string a, b;
      for (std::size_t i = 0; i < d.a.size(); ++i) a += (i ? " " : "") + hex(d.a[i]);
      for (std::size_t i = 0; i < d.b.size(); ++i) b += (i ? " " : "") + hex(d.b[i]);
      s += "<tr><td>" + html_escape(d.distribution) + "</td><td class=\"codes\">" + a + "</td><td class=\"codes\">" + b + "</td><td>" +
           html_escape(code_text(c.acc_format, d.c)) + "</td><td>" + html_escape(code_text(c.acc_format, d.device)) + "</td><td>" +
           html_escape(code_text(c.acc_format, d.model)) + "</td></tr>";
    }
    s += "</tbody></table>";
  }
  if (!c.published.empty()) {
    s += "<h3>Against the published models</h3><table><thead><tr><th>property</th><th>fpcert</th><th>MMA-Sim (Xie et al. 2025)</th>"
         "<th>Khattak &amp; Mikaitis 2025</th><th>verdict</th></tr></thead><tbody>";
    for (const auto& r : c.published)
      s += "<tr><td>" + html_escape(r.property) + "</td><td>" + html_escape(r.fpcert) + "</td><td>" + html_escape(r.mma_sim.empty() ? "(no model)" : r.mma_sim) +
           "</td><td>" + html_escape(r.khattak_mikaitis.empty() ? "(no model)" : r.khattak_mikaitis) + "</td><td" +
           (r.verdict.find("differs") != std::string::npos ? " class=\"bad\"" : "") + ">" + html_escape(r.verdict) + "</td></tr>";
    s += "</tbody></table>";
  }
  return s + "</section>";
}

constexpr const char* kCss =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#fafafa;color:#222}main{max-width:1200px;margin:auto;padding:1em}"
    "table{border-collapse:collapse;margin:.6em 0;width:100%}th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}"
    "th{background:#eee}.ok{color:#176317;font-weight:600}.bad{color:#a40000;font-weight:600}.ns{color:#777;font-weight:600}"
    "section.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em 1em;margin:1em 0}code{font-size:90%}"
    ".codes{font-family:monospace;font-size:85%;word-break:break-all}small{color:#555}"
    "@media (max-width:700px){main{padding:.3em}th,td{padding:2px 3px;font-size:12px}}"
    "@media print{body{background:#fff}section.card{border:none;break-inside:avoid-page}details{display:block}}";

}  // namespace

std::string tc_cards_section(const std::vector<BehaviourCard>& cards) {
  std::string s = "<section class=\"tc-cards\"><h1>Tensor-core behaviour cards</h1><table><thead><tr><th>instruction</th><th>status</th>"
                  "<th>fused length</th><th>alignment bits</th><th>result</th><th>C</th><th>validation</th></tr></thead><tbody>";
  for (const auto& c : cards) {
    s += "<tr><td><a href=\"#tc-" + html_escape(c.id) + "\">" + html_escape(c.id) + "</a></td><td>" + status(c) + "</td>";
    if (c.supported && !c.integer && c.probe_queries > 0) {
      const FusedDotParams& p = c.params;
      s += "<td>" + std::to_string(p.fused_length) + "</td><td>" + std::to_string(p.align_bits) + "</td><td>" + html_escape(std::string(to_string(p.block_rounding))) +
           " to " + std::to_string(p.acc_bits) + " bits</td><td>" + html_escape(std::string(to_string(p.c_join))) + "</td>";
    } else if (c.supported && c.integer) {
      s += "<td colspan=\"4\">" + html_escape(c.summary) + "</td>";
    } else {
      s += "<td colspan=\"4\">" + html_escape(c.why) + "</td>";
    }
    s += "<td>" + std::to_string(c.validated_samples()) + " samples, " + std::to_string(c.validation_disagreements()) + " disagreements</td></tr>";
  }
  s += "</tbody></table>";
  for (const auto& c : cards) s += card_html(c);
  return s + "</section>";
}

std::string tc_cards_page(const std::vector<BehaviourCard>& cards, const std::string& command) {
  std::string s = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>fpcert tensor-core behaviour cards</title><style>";
  s += kCss;
  s += "</style></head><body><main>";
  s += "<p><code>" + html_escape(command) + "</code></p>";
  s += tc_cards_section(cards);
  s += "<footer><p>Generated by fpcert probe tensor-cores. The model and the probes are described in docs/tensor_cores.md. "
       "One self-contained file: no script, no network.</p></footer></main></body></html>\n";
  return s;
}

}  // namespace fpcert
