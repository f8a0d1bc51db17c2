// results/experiment_record.hpp — what an experiment (fpcert experiment NAME [--preset P]) produced:
// its method in one paragraph, its tables as data, the environment stamp. The terminal printer
// (reports/table.hpp), the JSON (--json) and the HTML report (reports/html/html.hpp) all read this one
// record; docs/experiments.md describes each experiment's tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/results.hpp"

namespace fpcert {

/// One table: named columns, and rows of values keyed by column (a number, an integer, a string,
/// a boolean, or null for "no value"). Non-finite numbers are stored as json_number writes them.
struct ExperimentTable {
  struct Column {
    std::string key;     ///< the row field
    std::string label;   ///< the heading
    std::string format;  ///< terminal format of numbers: "e" (3 significant digits, scientific), "g", "f2", "int"
  };
  std::string title;
  std::string note;      ///< a sentence under the table (what to read from it)
  std::vector<Column> columns;
  nlohmann::json rows = nlohmann::json::array();
};

struct ExperimentRecord {
  std::string experiment;  ///< "split-scalar", "three-pipeline", "accumulation", ...
  std::string preset;      ///< "" for fpcert's own conventions, else the preset's name
  std::string source;      ///< the publication the preset follows, in words ("" without preset)
  std::string method;      ///< the method in one paragraph (printed first, shown in the report)
  std::string deviations;  ///< what this run changed from the preset's method ("" when none)
  std::string device;      ///< "host CPU" or the GPU's name
  Environment env;
  std::vector<ExperimentTable> tables;
  nlohmann::json extra = nlohmann::json::object();  ///< experiment-specific fields (seed, sizes, fits, ...)
  bool passed = true;      ///< the experiment's own checks (e.g. device equals CPU bit for bit)
};

nlohmann::json to_json(const ExperimentRecord& r);
/// InputError when j is not an experiment record (kind "experiment" with "tables").
ExperimentRecord experiment_from_json(const nlohmann::json& j);
/// Whether j looks like an experiment record (kind "experiment" and a "tables" list).
bool is_experiment_record(const nlohmann::json& j);

}  // namespace fpcert
