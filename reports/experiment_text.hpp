// reports/experiment_text.hpp — experiment records (results/experiment_record.hpp) as terminal text:
// the method paragraph as a header, then each table with fixed-width columns.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "results/experiment_record.hpp"

namespace fpcert {

/// One value as a table cell: numbers by the column's format ("e": 3 significant digits, scientific;
/// "g": 4 significant digits; "f2": 2 decimals; "int": in full; "": shortest), strings as they are,
/// null as "-", non-finite numbers (json_number strings) as "inf", "-inf", "nan".
std::string cell_text(const nlohmann::json& v, const std::string& format);
/// Words of `text` on lines of at most `width` characters, each line starting with `indent`.
std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent = "");
/// A table: title, column headings, rows (right-aligned numbers, left-aligned text), the note.
std::string table_text(const ExperimentTable& t);
/// The header: "<experiment> --preset <p> (<source>) on <device>", the method wrapped, deviations.
std::string experiment_header(const ExperimentRecord& r);
/// The header, then every table.
std::string experiment_text(const ExperimentRecord& r);

}  // namespace fpcert
