// results/results_json.hpp — the results model as JSON (and back): the format of --json, of the
// JSON-lines written case by case, and what `fpcert report` reads. Non-finite numbers are the
// strings "inf", "-inf", "nan" (JSON has no such numbers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "results/results.hpp"

namespace fpcert {

nlohmann::json to_json(const Environment& e);
nlohmann::json to_json(const Bound& b);
Bound bound_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CaseResult& c);
nlohmann::json to_json(const RunResult& r);
Environment environment_from_json(const nlohmann::json& j);
CaseResult case_from_json(const nlohmann::json& j);
RunResult run_from_json(const nlohmann::json& j);
/// A mutation score (results/mutation.cpp); a run carries one per kernel under "mutation".
nlohmann::json to_json(const MutationScore& s);
MutationScore mutation_from_json(const nlohmann::json& j);

/// A double as JSON (finite numbers as numbers, the rest as strings) and back.
nlohmann::json json_number(double v);
double number_from_json(const nlohmann::json& j);

/// Read a results file: a whole RunResult (.json) or JSON lines of cases (.jsonl, a crashed run's
/// partial file), at most 1 GiB. A last line cut short (no newline, not valid JSON: what a run killed
/// while appending leaves) is dropped and said in notes["dropped_lines"]; any other malformed line is
/// an error. Throws InputError naming the file (and the line) on malformed content.
RunResult read_results(const std::string& path);
/// The same from text (`path` only names it in messages).
RunResult parse_results(std::string_view text, const std::string& path);

}  // namespace fpcert
