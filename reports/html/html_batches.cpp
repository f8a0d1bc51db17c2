// reports/html/html_batches.cpp — the per-batch list of a strided batched GEMM case (docs/suites.md,
// "batch.strided"; docs/report.md): every batch's verdict, largest error and err / allowed, each figure tagged with
// its JSON pointer, so a reviewer sees which batches failed, not only the one whose checks the card shows.
#include <fmt/format.h>

#include "reports/html/html_parts.hpp"

namespace fpcert::html {

std::string batch_list(const CaseResult& c, const std::string& src, const std::string& base) {
  if (c.batches.empty()) return "";
  std::size_t failed = 0, worst = 0;
  for (std::size_t b = 0; b < c.batches.size(); ++b) {
    failed += !c.batches[b].passed;
    if (c.batches[b].max_fraction > c.batches[worst].max_fraction) worst = b;
  }
  std::string s = fmt::format("<details class=\"batches\"{}><summary><b>Batches:</b> {} graded, {} failed; the largest err / allowed in "
                              "batch {}</summary><div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>batch</th>"
                              "<th>verdict</th><th class=\"num\" title=\"max |D - ref| over the batch\">max abs</th>"
                              "<th class=\"num\" title=\"max err / allowed over the batch: the batch passes iff <= 1\">error fraction</th>"
                              "<th>why</th></tr></thead><tbody>",
                              failed ? " open" : "", c.batches.size(), failed, worst);
  for (std::size_t b = 0; b < c.batches.size(); ++b) {
    const BatchOutcome& o = c.batches[b];
    const std::string p = fmt::format("{}/batches/{}", base, b);
    s += fmt::format("<tr><td>batch {}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>", b,
                     status_badge(o.passed ? CaseStatus::Pass : CaseStatus::Fail), vnum(src, p + "/max_abs", o.max_abs),
                     vnum(src, p + "/max_fraction", o.max_fraction, o.max_fraction > 1 ? "badt" : ""),
                     o.reason.empty() ? std::string(kDash) : html_escape(o.reason));
  }
  return s + "</tbody></table></div></details>";
}

std::string passing_batch_lists(const RunResult& r, const std::string& src) {
  std::string s;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const CaseResult& c = r.cases[i];
    if (c.status == CaseStatus::Pass && !c.batches.empty())
      s += fmt::format("<p><b>{}</b> on <code>{}</code></p>", html_escape(c.case_id), html_escape(c.kernel)) + batch_list(c, src, case_ptr(i));
  }
  if (s.empty()) return "";
  return "<h3>Batches of passing batched cases</h3><p class=\"muted\">Each batch of a strided batched case is graded as its own "
         "matrix; a failing case\u2019s batches are in its failure card.</p>" +
         s;
}

}  // namespace fpcert::html
