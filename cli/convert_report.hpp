// cli/convert_report.hpp — what `fpcert convert --exhaustive` prints and writes for a check on the
// CPU (fpcert's fast path) and for a plugin's conversion kernel: ranges, the result's lines, its JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "oracle/convert_check.hpp"

namespace fpcert::cli {

/// "f16 0x3c01 = 1.0009765625": a code with its exact value.
std::string describe_code(const Format& f, std::uint64_t code);

/// FIRST:COUNT (decimal or 0x...) inside `all` codes (0: no limit); InputError otherwise.
std::pair<std::uint64_t, std::uint64_t> parse_first_count(const std::string& text, std::uint64_t all, std::string_view what);

/// spec.first and spec.count from --range, or every code of the source; a source of more than 32
/// bits needs a range.
void set_check_range(const std::string& range, ConvertCheckSpec& spec);

/// Outcome counts, NaN differences, the listed mismatches, the mismatch count and PASS / FAIL.
void print_check_result(const ConvertCheckResult& res, const Format& src, const Format& dst);

/// The result's fields of a conversion report (reports/html.hpp's conversion_from_json reads them):
/// patterns, mpfr_checked, outcomes, mismatches, model_mismatches, nan_differences, listed, passed.
void add_check_json(nlohmann::json& report, const ConvertCheckResult& res, const Format& src, const Format& dst);

}  // namespace fpcert::cli
