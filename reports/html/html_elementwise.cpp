// reports/html/html_elementwise.cpp — the elementwise section of the HTML report (docs/elementwise.md, "Report"): per
// kernel, its cases with the claim, the inputs checked, the largest error in ulps and where, the count beyond the claim
// with the first counterexample, and the histogram of ulp distances, read from the results alone.
#include <fmt/format.h>

#include "reports/html/html_parts.hpp"
#include "results/elementwise.hpp"

namespace fpcert::html {

std::string elementwise_section(const RunResult& r, std::size_t ri) {
  bool any = false;
  for (const CaseResult& c : r.cases) any = any || c.elementwise != nullptr;
  if (!any) return {};
  const std::string src = fmt::format("r{}", ri);
  std::string s = fmt::format("<section id=\"elementwise-{}\"><h2>Elementwise functions: suite {}</h2><table><thead><tr>"
                              "<th>kernel</th><th>case</th><th>function</th><th>formats</th><th>claim</th><th>inputs</th>"
                              "<th>status</th><th>max ulp</th><th>at x</th><th>beyond claim</th><th>first counterexample</th>"
                              "<th>MPFR decided</th><th>outside the claim</th><th>time</th><th>histogram (ulp: count)</th></tr></thead><tbody>",
                              ri, html_escape(r.suite));
  for (std::size_t j = 0; j < r.cases.size(); ++j) {
    const CaseResult& c = r.cases[j];
    if (!c.elementwise) continue;
    const ElementwiseResult& e = *c.elementwise;
    const std::string base = case_ptr(j) + "/elementwise";
    std::string hist;
    for (std::size_t i = 0; i < e.histogram.size(); ++i)
      if (e.histogram[i]) hist += fmt::format("{}{}: {}", hist.empty() ? "" : "<br>", html_escape(ulp_bin_label(i)), e.histogram[i]);
    std::string first = "\u2014";
    if (!e.listed.empty()) {
      const auto& p = e.listed.front();
      first = fmt::format("x = {} ({}) \u2192 {}, correctly rounded {}", html_escape(p.input_bits), html_escape(repr(p.input)),
                          html_escape(p.got_bits), html_escape(p.ref_bits));
    }
    const bool nan_max = e.max_ulps == ~std::uint64_t{0};
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{} \u2192 {}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td>"
                     "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f} s</td><td>{}</td></tr>",
                     html_escape(c.kernel), html_escape(c.case_id), html_escape(e.function), html_escape(e.in_format),
                     html_escape(e.out_format), html_escape(e.claim), vint(src, base + "/inputs", e.inputs), html_escape(e.sweep),
                     status_badge(c.status), nan_max ? std::string("NaN") : vint(src, base + "/max_ulps", e.max_ulps),
                     e.max_ulps ? html_escape(e.worst.input_bits) : std::string("\u2014"), vint(src, base + "/above_claim", e.above_claim),
                     first, vint(src, base + "/mpfr_decided", e.mpfr_decided), vint(src, base + "/unclaimed", e.unclaimed), e.seconds, hist.empty() ? "\u2014" : hist);
  }
  return s + "</tbody></table></section>";
}

}  // namespace fpcert::html
