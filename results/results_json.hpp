// results/results_json.hpp — the results model as JSON (and back): the format of --json, of the
// JSON-lines written case by case, and what `fpcert report` reads. Non-finite numbers are the
// strings "inf", "-inf", "nan" (JSON has no such numbers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

/// A double as JSON (finite numbers as numbers, the rest as strings) and back.
nlohmann::json json_number(double v);
double number_from_json(const nlohmann::json& j);

/// Read a results file: a whole RunResult (.json) or JSON lines of cases (.jsonl, a crashed run's
/// partial file). Throws InputError naming the file on malformed content.
RunResult read_results(const std::string& path);

}  // namespace fpcert
