// results/experiment_record.cpp — JSON mapping of experiment records.
#include "results/experiment_record.hpp"

#include <utility>

#include "base/error.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

namespace {
std::string str(const json& j, const char* key) { return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : ""; }

/// The record's text fields and their JSON keys (both directions read this one list).
constexpr std::pair<const char*, std::string ExperimentRecord::*> kTextFields[] = {
    {"experiment", &ExperimentRecord::experiment}, {"preset", &ExperimentRecord::preset},
    {"source", &ExperimentRecord::source},         {"method", &ExperimentRecord::method},
    {"deviations", &ExperimentRecord::deviations}, {"device", &ExperimentRecord::device},
};
}  // namespace

json to_json(const ExperimentRecord& r) {
  json tables = json::array();
  for (const auto& t : r.tables) {
    json cols = json::array();
    for (const auto& c : t.columns) cols.push_back({{"key", c.key}, {"label", c.label}, {"format", c.format}});
    tables.push_back({{"title", t.title}, {"note", t.note}, {"columns", cols}, {"rows", t.rows}});
  }
  json j = {{"fpcert_results", 1}, {"kind", "experiment"}, {"command", r.env.command}, {"environment", to_json(r.env)},
            {"passed", r.passed},    {"tables", tables},      {"extra", r.extra}};
  for (const auto& [key, field] : kTextFields) j[key] = r.*field;
  return j;
}

bool is_experiment_record(const json& j) {
  return j.is_object() && str(j, "kind") == "experiment" && j.contains("tables") && j.at("tables").is_array();
}

ExperimentRecord experiment_from_json(const json& j) {
  if (!is_experiment_record(j)) throw InputError("not an experiment record (needs kind 'experiment' and a 'tables' list)");
  ExperimentRecord r;
  for (const auto& [key, field] : kTextFields) r.*field = str(j, key);
  if (j.contains("environment") && j.at("environment").is_object()) r.env = environment_from_json(j.at("environment"));
  if (j.contains("passed") && j.at("passed").is_boolean()) r.passed = j.at("passed").get<bool>();
  if (j.contains("extra")) r.extra = j.at("extra");
  for (const auto& t : j.at("tables")) {
    if (!t.is_object()) throw InputError("experiment record: a table is not an object");
    ExperimentTable x;
    x.title = str(t, "title");
    x.note = str(t, "note");
    if (t.contains("columns") && t.at("columns").is_array())
      for (const auto& c : t.at("columns")) {
        if (!c.is_object() || str(c, "key").empty()) throw InputError("experiment record: table '" + x.title + "' has a column without a key");
        x.columns.push_back({str(c, "key"), str(c, "label"), str(c, "format")});
      }
    if (t.contains("rows")) {
      if (!t.at("rows").is_array()) throw InputError("experiment record: rows of table '" + x.title + "' are not a list");
      for (const auto& row : t.at("rows"))
        if (!row.is_object()) throw InputError("experiment record: a row of table '" + x.title + "' is not an object");
      x.rows = t.at("rows");
    }
    r.tables.push_back(std::move(x));
  }
  return r;
}

}  // namespace fpcert
