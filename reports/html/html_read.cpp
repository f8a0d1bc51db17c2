// reports/html/html_read.cpp — what a report is made from: results files of runs, of conversion checks and of
// experiments.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "reports/html/html.hpp"
#include "results/conversion.hpp"
#include "results/diagnosis.hpp"
#include "results/experiment_record.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

namespace {

/// The JSON of `experiment NAME --json` for the experiments that write their table as flat rows
/// (split-scalar, three-pipeline, bf16-on-fp16, fp8-accumulation: kind "experiment", a "rows" list of
/// objects, no "tables"): one table, a column per field of the rows, the other fields kept as extra.
/// docs/report.md lists them as inputs of `fpcert report`; they were refused.
bool experiment_from_rows(const json& j, const std::string& path, ReportInput& in) {
  if (!j.is_object() || j.value("kind", "") != "experiment" || j.contains("tables") || !j.contains("rows")) return false;
  const json& rows = j.at("rows");
  if (!rows.is_array()) throw InputError("results file '" + path + "': 'rows' of the experiment is not a list");
  ExperimentRecord r;
  r.experiment = j.value("experiment", std::string("experiment"));
  r.device = j.contains("device") && j.at("device").is_string() ? j.at("device").get<std::string>() : std::string();
  r.env.command = j.contains("command") && j.at("command").is_string() ? j.at("command").get<std::string>() : std::string();
  ExperimentTable t;
  t.title = r.experiment;
  for (const auto& row : rows) {
    if (!row.is_object()) throw InputError("results file '" + path + "': a row of the experiment is not a JSON object");
    for (const auto& [key, v] : row.items()) {
      bool known = false;
      for (const auto& c : t.columns) known = known || c.key == key;
      if (!known) t.columns.push_back({key, key, v.is_number_integer() ? "int" : "g"});
    }
  }
  t.rows = rows;
  r.tables.push_back(std::move(t));
  for (const auto& [key, v] : j.items())
    if (key != "rows" && key != "kind") r.extra[key] = v;
  in.experiments.push_back(std::move(r));
  return true;
}

}  // namespace

void read_report_file(const std::string& path, ReportInput& in) {
  // Bounded and checked before parsing: /dev/zero, a folder or a huge file is refused with its name.
  const std::string text = read_input_file(path, kResultsLimit, "results file");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError("results file '" + path + "' is empty");
  json whole;
  bool parsed = true;
  try {
    whole = json::parse(text);
  } catch (const json::parse_error&) {
    parsed = false;
  }
  try {
    if (parsed) {
      if (is_experiment_record(whole)) {
        in.experiments.push_back(experiment_from_json(whole));
        return;
      }
      if (experiment_from_rows(whole, path, in)) return;
      if (whole.is_object() && whole.value("kind", "") == "audit") {  // fpcert audit --json
        in.audits.push_back(audit_from_json(whole));
        return;
      }
      if (is_fa_rule_record(whole)) {  // bench_attention_fa_rule / bench_attention_bwd_fa_rule --json
        in.fa_rules.push_back(fa_rule_from_json(whole));
        return;
      }
      if (whole.is_object() && whole.contains("cases")) {
        in.runs.push_back(run_from_json(whole));
        return;
      }
      if (is_conversion_record(whole)) {
        in.conversions.push_back(conversion_from_json(whole));
        return;
      }
      if (is_diagnosis_record(whole)) {  // fpcert diagnose --json (docs/diagnose.md)
        in.diagnoses.push_back(diagnosis_from_json(whole));
        return;
      }
      if (whole.is_array() && std::all_of(whole.begin(), whole.end(), [](const json& x) { return is_diagnosis_record(x); })) {
        for (const auto& d : whole) in.diagnoses.push_back(diagnosis_from_json(d));  // certify --diagnose FILE
        return;
      }
      if (whole.is_object() && whole.contains("conversions") && whole.at("conversions").is_array()) {
        for (const auto& c : whole.at("conversions")) in.conversions.push_back(conversion_from_json(c));
        return;
      }
      throw InputError("results file '" + path +
                       "' is neither fpcert results (no 'cases'), a conversion check (kind 'conversion'), an experiment "
                       "record (kind 'experiment' with 'tables'), a diagnosis (fpcert diagnose --json) an audit (kind 'audit') nor a FlashAttention rule record (kind 'fa_rule')");
    }
    // JSON lines: conversion records, or a run's cases (read_results explains its own errors).
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
    json first;
    try {
      first = json::parse(line);
    } catch (const json::parse_error&) {
      first = nullptr;
    }
    if (is_conversion_record(first)) {
      std::istringstream all(text);
      int lineno = 0;
      while (std::getline(all, line)) {
        ++lineno;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
          in.conversions.push_back(conversion_from_json(json::parse(line)));
        } catch (const std::exception& e) {
          throw InputError(fmt::format("results file '{}', line {}: {}", path, lineno, e.what()));
        }
      }
      return;
    }
    in.runs.push_back(parse_results(text, path));
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw InputError("results file '" + path + "': " + what);
  } catch (const std::exception& e) {
    throw InputError("results file '" + path + "': " + e.what());
  }
}

}  // namespace fpcert
