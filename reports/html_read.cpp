// reports/html_read.cpp — what a report is made from: results files of runs and of conversion checks.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "reports/html.hpp"
#include "results/conversion.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

void read_report_file(const std::string& path, ReportInput& in) {
  std::ifstream f(path);
  if (!f) throw InputError("cannot open results file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
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
      if (whole.is_object() && whole.contains("cases")) {
        in.runs.push_back(run_from_json(whole));
        return;
      }
      if (is_conversion_record(whole)) {
        in.conversions.push_back(conversion_from_json(whole));
        return;
      }
      if (whole.is_object() && whole.contains("conversions") && whole.at("conversions").is_array()) {
        for (const auto& c : whole.at("conversions")) in.conversions.push_back(conversion_from_json(c));
        return;
      }
      throw InputError("results file '" + path +
                       "' is neither fpcert results (no 'cases') nor a conversion check (kind 'conversion')");
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
    in.runs.push_back(read_results(path));
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw InputError("results file '" + path + "': " + what);
  } catch (const std::exception& e) {
    throw InputError("results file '" + path + "': " + e.what());
  }
}

}  // namespace fpcert
