// reports/html/html_parts.hpp — the pieces the HTML report's files share (reports/html/html.hpp states the
// number-tagging contract): tagged numbers, status badges, and the functions each role file offers
// the others. Internal to reports/.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reports/escape.hpp"
#include "reports/html/html.hpp"

namespace fpcert::html {

/// Shortest round-trip text of a double ("nan", "inf", "-inf" for the rest).
std::string repr(double v);
/// A tagged number (see html.hpp): the text is printf "%.4g" ("nan" whatever the sign bit: JSON has one NaN).
std::string vnum(const std::string& src, const std::string& ptr, double v, const char* extra_class = "");
template <class I>
std::string vint(const std::string& src, const std::string& ptr, I v) {
  return fmt::format("<span class=\"v\" data-src=\"{}\" data-ptr=\"{}\" data-kind=\"int\" data-value=\"{}\">{}</span>", src,
                     html_escape(ptr), v, v);
}
std::string vbool(const std::string& src, const std::string& ptr, bool v);
/// A sum of integers over documents, e.g. the failing cases of every run.
std::string vsum(const std::vector<std::pair<std::string, std::string>>& refs, std::int64_t total);
inline constexpr const char* kDash = "<span class=\"na\">\u2014</span>";
/// The suite records what a case is for as a flag "case: <note>"; the other flags are warnings.
bool is_note(const std::string& flag);
std::string case_note(const CaseResult& c);
bool graded(const CaseResult& c);
bool bad(const CaseResult& c);
std::string status_badge(CaseStatus s);
std::string case_ptr(std::size_t i);
/// The gate variant's name ("" for a case that was not graded).
std::string variant_name(const CaseResult& c);

// reports/html/html_style.cpp
const char* report_css();

// reports/html/html_plots.cpp
std::string figure(const std::string& svg_markup, const std::string& caption);
std::string plots_section(const RunResult& r, const std::string& src, const std::string& id);

// reports/html/html_sections.cpp
/// The environment stamp as a definition list, its numbers pointing to `base` in document `src`.
std::string env_table(const Environment& e, const std::string& src, const std::string& base);
std::vector<std::string> kernels_of(const RunResult& r);
std::string run_title(const RunResult& r);
std::string run_section(const RunResult& r, std::size_t ri);
/// One conversion record: `id` its anchor, `src` its document (c<i>, or r<i> for a case of a run), `base`
/// the JSON pointer of the record in it ("" or /cases/<j>/conversion).
std::string conversion_section(const ConversionResult& c, const std::string& id, const std::string& src, const std::string& base);
std::string banner(const ReportInput& in);

// reports/html/html_overview.cpp
/// A run of GEMM cases (whatever its kind says: a suite of experiments runs GEMM cases too): a column of the matrix.
bool gemm_run(const RunResult& r);
/// The first screen: the kernel x suite matrix of verdicts, tiers, mutation scores; environments folded. "" without GEMM runs.
std::string overview(const ReportInput& in);

// reports/html/html_batches.cpp
/// A batched case's batches, one row each (verdict, max abs, err / allowed, why), open when one failed; "" for a case
/// without batches. passing_batch_lists: the same for every passing batched case of a run ("" when none).
std::string batch_list(const CaseResult& c, const std::string& src, const std::string& base);
std::string passing_batch_lists(const RunResult& r, const std::string& src);

// reports/html/html_errmap.cpp
/// A case's error map (its ErrorMap, when it carries one) with the worst elements in tile coordinates
/// beside it; "" when the case has no map.
std::string error_map_block(const CaseResult& c, const std::string& src, const std::string& base);
/// The error maps of the passing cases that carry one (certify --error-maps); "" when none does.
std::string passing_error_maps(const RunResult& r, const std::string& src);
/// "tile (ti, tj), at (r, c)" of element (i, j) for the case's declared tile, with "tail" where the tile is partial.
std::string tile_position(const CaseResult& c, std::int64_t i, std::int64_t j);

// reports/html/html_compare.cpp
/// What changed from run `oi` to run `ni` (same suite): flipped verdicts, error-fraction growth, speed.
std::string comparison_section(const RunResult& old_run, std::size_t oi, const RunResult& new_run, std::size_t ni);

// reports/html/html_experiments.cpp
/// A run of a suite's preset (notes "preset"): the source's metrics beside fpcert's verdict; "" otherwise.
std::string preset_table(const RunResult& r, const std::string& src);
/// An experiment record's section (anchor exp-<ei>, document e<ei>).
std::string experiment_section(const ExperimentRecord& e, std::size_t ei);

/// Elementwise kernels' cases (html_elementwise.cpp): "" when the run has none.
std::string elementwise_section(const RunResult& r, std::size_t ri);
/// fpcert beside torch.allclose at 1e-2 and the 2x rule, per mutation score that measured them (html_heuristics.cpp).
std::string heuristics_section(const RunResult& r, std::size_t ri);

/// Attention forward cases per subject over every run (largest err / allowed, where in the sequence, the LSE, a plot) and
/// backward cases with each output's fraction and verdict (html_attention.cpp): "" when the runs have none.
std::string attention_sections(const ReportInput& in);
/// FlashAttention's 2x rule beside fpcert on one kernel's faults and the correct kernel (anchor fa-rule-<fi>, document f<fi>).
std::string fa_rule_section(const FaRuleRecord& f, std::size_t fi);

/// The diagnoses of failed cases (html_diagnose.cpp, document d<i> each): "" when there are none.
std::string diagnoses_section(const ReportInput& in);

// reports/html/html_audit.cpp
/// An audit's section (anchor audit-<ai>, document a<ai>): static findings, false alarms with labels, the power table
/// with the rule and fpcert (the replacement) side by side, reproducibility and batch invariance.
std::string audit_section(const AuditRecord& a, std::size_t ai);

}  // namespace fpcert::html
