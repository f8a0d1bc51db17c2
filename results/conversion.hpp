// results/conversion.hpp — a conversion check's result: the record fpcert writes for one conversion
// kernel swept over source codes (`fpcert convert --exhaustive --json`, a row of `convert --all`, a
// case of the `conversions` suite), as data the report reads without knowing how it was made.
//
// The record's JSON is documented in docs/conversions.md: from, to, rounding, saturation,
// nan_payload, patterns, mpfr_checked, outcomes {class: count}, mismatches, model_mismatches,
// nan_differences, listed [{src_bits, src_value, expected_bits, got_bits, outcome, model_bug}],
// seconds, passed; a device sweep adds its NaN report, lanes, stray bits, timing and the scaled
// round trip's rows. ConversionResult is the typed view of the fields every record has; `record`
// keeps the whole record (the report's numbers point into it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/convert/convert_check.hpp"
#include "results/results.hpp"

namespace fpcert {

/// Parse one conversion record (unknown fields are kept in `record` and otherwise ignored; outcomes
/// may also be a list of {name, count}). InputError when it is not one (no "from"/"to").
ConversionResult conversion_from_json(const nlohmann::json& j);
/// Whether a JSON value is a conversion record rather than a run.
bool is_conversion_record(const nlohmann::json& j);

/// The check's fields of a record: patterns, mpfr_checked, outcomes (every class, by name),
/// mismatches, model_mismatches, nan_differences, listed (bits in hex, source values in exact
/// decimal), passed. The truth of a listed mismatch is MPFR's where it ran, else the model's.
void add_check_json(nlohmann::json& record, const ConvertCheckResult& res, const Format& src, const Format& dst);
/// The check back from those fields (for printing a result that came from a child process).
ConvertCheckResult check_from_json(const nlohmann::json& record, const Format& src, const Format& dst);

/// RFC 6901 escaping of one JSON-pointer token ("~" -> "~0", "/" -> "~1").
std::string json_pointer_token(const std::string& key);

}  // namespace fpcert
