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

std::string_view to_string(BoundVariant v) {
  switch (v) {
    case BoundVariant::Independent: return "independent";
    case BoundVariant::Componentwise: return "componentwise";
    case BoundVariant::WorstCase: return "worstcase";
  }
  return "?";
}

std::optional<BoundVariant> parse_bound_variant(std::string_view s) {
  for (BoundVariant v : {BoundVariant::Independent, BoundVariant::Componentwise, BoundVariant::WorstCase})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

std::string_view to_string(CaseAxis a) {
  switch (a) {
    case CaseAxis::None: return "";
    case CaseAxis::K: return "k";
    case CaseAxis::ExponentSpan: return "exponent_span";
    case CaseAxis::Kappa: return "kappa";
  }
  return "?";
}

std::optional<CaseAxis> parse_case_axis(std::string_view s) {
  for (CaseAxis a : {CaseAxis::None, CaseAxis::K, CaseAxis::ExponentSpan, CaseAxis::Kappa})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

std::string_view to_string(RunKind k) {
  switch (k) {
    case RunKind::Gemm: return "gemm";
    case RunKind::Conversion: return "conversion";
    case RunKind::Experiment: return "experiment";
  }
  return "?";
}

std::optional<RunKind> parse_run_kind(std::string_view s) {
  for (RunKind k : {RunKind::Gemm, RunKind::Conversion, RunKind::Experiment})
    if (to_string(k) == s) return k;
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
