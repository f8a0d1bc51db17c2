// results/fa_rule.cpp — the JSON of FlashAttention's 2x rule beside fpcert (fa_rule.hpp).
#include "results/fa_rule.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace fpcert {

using nlohmann::json;

namespace {

/// A finite number as itself; Inf and NaN (a rule whose lhs is Inf or NaN) as "inf", "-inf", "nan": JSON has no such numbers.
json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}
double number_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::runtime_error("FlashAttention rule record: worst_ratio '" + s + "' is not a number");
}

}  // namespace

json fa_rule_to_json(const FaRuleRecord& r) {
  json rows = json::array();
  for (const FaRuleRow& x : r.rows)
    rows.push_back({{"variant", x.variant}, {"correct", x.correct}, {"cases", x.cases}, {"fa_failed", x.fa_failed},
                    {"fpcert_failed", x.fpcert_failed}, {"worst_ratio", number(x.worst_ratio)}});
  return {{"kind", "fa_rule"}, {"operation", r.operation}, {"kernel", r.kernel}, {"suite", r.suite}, {"rule", r.rule}, {"rows", rows}};
}

bool is_fa_rule_record(const json& j) { return j.is_object() && j.value("kind", "") == "fa_rule"; }

FaRuleRecord fa_rule_from_json(const json& j) {
  auto field = [](const json& o, const char* k) -> const json& {
    if (!o.is_object() || !o.contains(k)) throw std::runtime_error(std::string("FlashAttention rule record: no field '") + k + "'");
    return o.at(k);
  };
  try {
    FaRuleRecord r;
    r.operation = field(j, "operation").get<std::string>();
    r.kernel = field(j, "kernel").get<std::string>();
    r.suite = field(j, "suite").get<std::string>();
    r.rule = field(j, "rule").get<std::string>();
    for (const json& x : field(j, "rows")) {
      FaRuleRow w;
      w.variant = field(x, "variant").get<std::string>();
      w.correct = field(x, "correct").get<bool>();
      w.cases = field(x, "cases").get<int>();
      w.fa_failed = field(x, "fa_failed").get<int>();
      w.fpcert_failed = field(x, "fpcert_failed").get<int>();
      w.worst_ratio = number_from(field(x, "worst_ratio"));
      r.rows.push_back(std::move(w));
    }
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("FlashAttention rule record: ") + e.what());
  }
}

}  // namespace fpcert
