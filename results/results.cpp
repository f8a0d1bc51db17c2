// results/results.cpp — status names and the run's exit code.
#include "results/results.hpp"

#include "base/error.hpp"

namespace fpcert {

std::string_view to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::Pass: return "pass";
    case CaseStatus::Fail: return "fail";
    case CaseStatus::NotSupported: return "not_supported";
    case CaseStatus::Crashed: return "crashed";
    case CaseStatus::Hung: return "hung";
    case CaseStatus::Error: return "error";
  }
  return "?";
}

std::optional<CaseStatus> parse_case_status(std::string_view s) {
  for (CaseStatus c : {CaseStatus::Pass, CaseStatus::Fail, CaseStatus::NotSupported, CaseStatus::Crashed,
                       CaseStatus::Hung, CaseStatus::Error})
    if (to_string(c) == s) return c;
  return std::nullopt;
}

int RunResult::count(CaseStatus s) const {
  int n = 0;
  for (const auto& c : cases) n += c.status == s;
  return n;
}

bool RunResult::passed() const {
  for (const auto& c : cases)
    if (c.status != CaseStatus::Pass && c.status != CaseStatus::NotSupported) return false;
  return true;
}

}  // namespace fpcert
