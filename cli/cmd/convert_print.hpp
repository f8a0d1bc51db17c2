// cli/cmd/convert_print.hpp — what `fpcert convert` prints: a conversion case's record (results/conversion.hpp)
// as the lines the command has always printed, for a check on the CPU, a plugin kernel, or a device
// table entry, and the rows of `convert --all`; and the --range argument.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "oracle/convert/convert_check.hpp"
#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert::cli {

/// "f16 0x3c01 = 1.0009765625": a code with its exact value.
std::string describe_code(const Format& f, std::uint64_t code);
/// "rounding rn, saturation inf".
std::string rounder_text(const Rounder& r);

/// FIRST:COUNT (decimal or 0x...) inside `all` codes (0: no limit); InputError otherwise.
std::pair<std::uint64_t, std::uint64_t> parse_first_count(const std::string& text, std::uint64_t all, std::string_view what);
/// The (first, count) of --range over src's codes; none: every code, refused for sources over 32 bits.
std::vector<std::pair<std::uint64_t, std::uint64_t>> check_ranges(const std::string& range, const Format& src);

/// Outcome counts, NaN differences, the listed mismatches, the mismatch count and PASS / FAIL.
/// `nan`: the declared NaN convention (under any, a NaN input's expected result prints as "any NaN").
void print_check_result(const ConvertCheckResult& res, const Format& src, const Format& dst, NanPayload nan = NanPayload::Preserve);

/// The whole report of one device table entry's sweep, from its record.
void print_device_record(const nlohmann::json& record);
/// One row of `convert --all` (and the failures under it), from a record; `status` and `reason` of the case.
void print_device_row(const nlohmann::json& record, std::string_view name, std::string_view status, const std::string& reason);
/// The header of those rows.
void print_device_row_header();

}  // namespace fpcert::cli
