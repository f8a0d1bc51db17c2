// reports/html_parts.hpp — the pieces the HTML report's files share (reports/html.hpp states the
// number-tagging contract): tagged numbers, status badges, and the functions each role file offers
// the others. Internal to reports/.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reports/escape.hpp"
#include "reports/html.hpp"

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

// reports/html_style.cpp
const char* report_css();

// reports/html_plots.cpp
std::string figure(const std::string& svg_markup, const std::string& caption);
std::string plots_section(const RunResult& r, const std::string& src, const std::string& id);

// reports/html_sections.cpp
std::vector<std::string> kernels_of(const RunResult& r);
std::string run_title(const RunResult& r);
std::string run_section(const RunResult& r, std::size_t ri);
/// One conversion record: `id` its anchor, `src` its document (c<i>, or r<i> for a case of a run), `base`
/// the JSON pointer of the record in it ("" or /cases/<j>/conversion).
std::string conversion_section(const ConversionResult& c, const std::string& id, const std::string& src, const std::string& base);
std::string banner(const ReportInput& in);

}  // namespace fpcert::html
