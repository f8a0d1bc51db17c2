// results/fa_rule.hpp — FlashAttention's "2x" test rule beside fpcert's verdict on the same faults and the same correct
// kernel (issues 41 and 45; bench/attention_fa_rule.cpp and bench/attention_bwd_fa_rule.cpp --json FILE): the record the
// benches write and `fpcert report` renders (docs/report.md, "FlashAttention's 2x rule").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fpcert {

/// One variant of the kernel: the correct kernel, or the kernel with one fault.
struct FaRuleRow {
  std::string variant;   ///< "correct kernel" or the fault's name
  bool correct = false;  ///< the unmutated kernel: a failed case is a false alarm
  int cases = 0;         ///< cases run
  int fa_failed = 0;     ///< cases the 2x rule refused
  int fpcert_failed = 0; ///< cases fpcert refused (status neither pass nor not supported)
  double worst_ratio = 0;  ///< the largest lhs / rhs of the rule over the cases (> 1: refused; JSON "inf" or "nan" when not finite)
};

struct FaRuleRecord {
  std::string operation;  ///< "attention" or "attention_backward"
  std::string kernel;
  std::string suite;      ///< the suite whose cases were run
  std::string rule;       ///< the rule in words, as the bench prints it
  std::vector<FaRuleRow> rows;
};

/// kind "fa_rule".
nlohmann::json fa_rule_to_json(const FaRuleRecord& r);
bool is_fa_rule_record(const nlohmann::json& j);
/// Throws std::runtime_error naming the missing or mistyped field.
FaRuleRecord fa_rule_from_json(const nlohmann::json& j);

}  // namespace fpcert
