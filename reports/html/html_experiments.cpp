// reports/html/html_experiments.cpp — the report's experiment parts: an experiment record's section (its
// method, then each table) and, in a run of a suite's preset, the source's metrics beside fpcert's
// verdict (docs/experiments.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "reports/html/html_parts.hpp"
#include "results/conversion.hpp"
#include "results/results_json.hpp"

namespace fpcert::html {

using nlohmann::json;

/// A run of a suite's preset (notes "preset"): the source's normwise metrics per case and kernel, to
/// read next to the source's table (suites/experiments/presets.hpp, panorama_suite_record, for the terminal).
std::string preset_table(const RunResult& r, const std::string& src) {
  const auto it = r.notes.find("preset");
  if (it == r.notes.end()) return "";
  std::string s = fmt::format(
      "<h3>The source\u2019s metrics (preset <code>{}</code>)</h3><p class=\"muted\">E<sub>F</sub> = \u2016C \u2212 C*\u2016<sub>F</sub> / "
      "\u2016C*\u2016<sub>F</sub>; E<sub>max</sub> with the two infinity norms the source may mean: elementwise maximum, and "
      "the max-row-sum (induced) norm. The gate fraction and status are fpcert\u2019s verdict on the same output.</p>",
      html_escape(it->second));
  s += "<div class=\"scroll\"><table class=\"preset\"><thead><tr><th>case</th><th>kernel</th><th class=\"num\">K</th>"
       "<th class=\"num\">E<sub>F</sub></th><th class=\"num\">E<sub>max</sub> (elementwise)</th><th class=\"num\">E<sub>max</sub> "
       "(row-sum)</th><th class=\"num\">left out</th><th class=\"num\">gate fraction</th><th>status</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    const std::string b = case_ptr(i);
    // the norms leave out non-finite outputs and references beyond the output's range; none left: a dash
    const std::int64_t left_out = c.metrics.nonfinite + c.metrics.ref_overflow;
    const bool norms = graded(c) && left_out < c.m * c.n;
    auto cell = [&](const char* key, double v) {
      return "<td class=\"num\">" + (norms ? vnum(src, b + "/metrics/" + key, v) : std::string(kDash)) + "</td>";
    };
    const std::string left =
        graded(c) ? vsum({{src, b + "/metrics/nonfinite"}, {src, b + "/metrics/ref_overflow"}}, left_out) : std::string(kDash);
    s += fmt::format("<tr><td class=\"case\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td>{}{}{}<td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td>{}</td></tr>",
                     html_escape(c.case_id), html_escape(c.kernel), vint(src, b + "/k", c.k), cell("frobenius_rel", c.metrics.frobenius_rel),
                     cell("max_rel", c.metrics.max_rel), cell("rowsum_rel", c.metrics.rowsum_rel), left,
                     graded(c) ? vnum(src, b + "/gate_fraction", c.gate_fraction) : std::string(kDash), status_badge(c.status));
  }
  s += "</tbody></table></div>";
  return s;
}

/// An experiment record (results/experiment_record.hpp): its method, then each table; every number
/// tagged with its pointer into the record (data-src e<i>, "/tables/<t>/rows/<r>/<key>").
std::string experiment_section(const ExperimentRecord& e, std::size_t ei) {
  const std::string src = fmt::format("e{}", ei);
  std::string s = fmt::format("<section class=\"exp\" id=\"exp-{}\"><h2>Experiment <code>{}</code>{}</h2>", ei, html_escape(e.experiment),
                              e.preset.empty() ? "" : " \u2014 preset <code>" + html_escape(e.preset) + "</code>");
  if (!e.source.empty()) s += "<p><b>Source:</b> " + html_escape(e.source) + "</p>";
  s += "<p><b>Method.</b> " + html_escape(e.method) + "</p>";
  if (!e.deviations.empty()) s += "<p class=\"flag\">\u26a0 This run differs: " + html_escape(e.deviations) + "</p>";
  if (!e.device.empty()) s += "<p><b>Device:</b> " + html_escape(e.device) + "</p>";
  for (std::size_t t = 0; t < e.tables.size(); ++t) {
    const ExperimentTable& tb = e.tables[t];
    if (!tb.title.empty()) s += "<h3>" + html_escape(tb.title) + "</h3>";
    s += "<div class=\"scroll\"><table class=\"experiment\"><thead><tr>";
    for (const auto& c : tb.columns) s += fmt::format("<th{}>{}</th>", c.format.empty() ? "" : " class=\"num\"", html_escape(c.label));
    s += "</tr></thead><tbody>";
    for (std::size_t r = 0; r < tb.rows.size(); ++r) {
      s += "<tr>";
      for (const auto& c : tb.columns) {
        const std::string ptr = fmt::format("/tables/{}/rows/{}/{}", t, r, json_pointer_token(c.key));
        const json v = tb.rows[r].contains(c.key) ? tb.rows[r].at(c.key) : json(nullptr);
        std::string cell;
        if (v.is_null()) cell = kDash;
        else if (v.is_boolean()) cell = vbool(src, ptr, v.get<bool>());
        else if (v.is_number_integer()) cell = vint(src, ptr, v.get<std::int64_t>());
        else if (v.is_number_unsigned()) cell = vint(src, ptr, v.get<std::uint64_t>());
        else if (v.is_number() || (!c.format.empty() && (v == "inf" || v == "-inf" || v == "nan")))  // json_number's non-finite
          cell = vnum(src, ptr, number_from_json(v));
        else cell = html_escape(v.is_string() ? v.get<std::string>() : v.dump());
        s += fmt::format("<td{}>{}</td>", c.format.empty() ? "" : " class=\"num\"", cell);
      }
      s += "</tr>";
    }
    s += "</tbody></table></div>";
    if (!tb.note.empty()) s += "<p class=\"muted\">" + html_escape(tb.note) + "</p>";
  }
  if (!e.env.fpcert_version.empty()) s += "<h3>Environment</h3>" + env_table(e.env, src, "/environment");
  s += "</section>";
  return s;
}

}  // namespace fpcert::html
