// reports/experiment_text.cpp — experiment records as terminal text.
#include "reports/experiment_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace fpcert {

std::string cell_text(const nlohmann::json& v, const std::string& format) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (!v.is_number()) return v.dump();
  const double x = v.get<double>();
  if (format == "e") return fmt::format("{:.2e}", x);
  if (format == "g") return fmt::format("{:.4g}", x);
  if (format == "f2") return fmt::format("{:.2f}", std::fabs(x) < 0.005 ? 0.0 : x);  // no "-0.00"
  if (format == "int") return fmt::format("{:.0f}", x);
  return fmt::format("{}", x);
}

std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent) {
  std::istringstream in(text);
  std::string word, line, out;
  while (in >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

std::string table_text(const ExperimentTable& t) {
  const std::size_t nc = t.columns.size();
  std::vector<std::size_t> w(nc);
  std::vector<bool> numeric(nc, true);
  std::vector<std::vector<std::string>> cells;
  for (std::size_t c = 0; c < nc; ++c) w[c] = t.columns[c].label.size();
  for (const auto& row : t.rows) {
    std::vector<std::string> r(nc);
    for (std::size_t c = 0; c < nc; ++c) {
      const auto& key = t.columns[c].key;
      const nlohmann::json v = row.contains(key) ? row.at(key) : nlohmann::json(nullptr);
      r[c] = cell_text(v, t.columns[c].format);
      // json_number writes non-finite numbers as strings: they stay numbers for alignment
      if (v.is_string() && r[c] != "inf" && r[c] != "-inf" && r[c] != "nan") numeric[c] = false;
      w[c] = std::max(w[c], r[c].size());
    }
    cells.push_back(std::move(r));
  }
  std::string s = t.title.empty() ? "" : t.title + "\n";
  auto line = [&](const std::vector<std::string>& r) {
    std::string l = " ";
    for (std::size_t c = 0; c < nc; ++c)
      l += " " + (numeric[c] ? fmt::format("{:>{}}", r[c], w[c]) : fmt::format("{:<{}}", r[c], w[c]));
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + "\n";
  };
  std::vector<std::string> head(nc);
  for (std::size_t c = 0; c < nc; ++c) head[c] = t.columns[c].label;
  s += line(head);
  for (const auto& r : cells) s += line(r);
  if (!t.note.empty()) s += wrap_text(t.note, 110, "  ");
  return s;
}

std::string experiment_header(const ExperimentRecord& r) {
  std::string s = fmt::format("{}{}{}{}\n", r.experiment, r.preset.empty() ? "" : " --preset " + r.preset,
                              r.source.empty() ? "" : " (" + r.source + ")", r.device.empty() ? "" : " on " + r.device);
  s += wrap_text("Method: " + r.method, 110);
  if (!r.deviations.empty()) s += wrap_text("This run differs: " + r.deviations, 110);
  return s;
}

std::string experiment_text(const ExperimentRecord& r) {
  std::string s = experiment_header(r);
  for (const auto& t : r.tables) s += "\n" + table_text(t);
  return s;
}

}  // namespace fpcert
