// results/results.cpp — status names, the run's exit code, the error-fraction buckets and the cancellation threshold.
#include "results/results.hpp"

#include <algorithm>
#include <cmath>

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

std::string_view to_string(CheckKind k) {
  switch (k) {
    case CheckKind::Bitwise: return "bitwise";
    case CheckKind::Envelope: return "envelope";
    case CheckKind::Statistical: return "statistical";
    case CheckKind::Nonfinite: return "nonfinite";
    case CheckKind::SpecialValues: return "special_values";
    case CheckKind::NanPolicy: return "nan_policy";
    case CheckKind::Unwritten: return "unwritten";
    case CheckKind::GuardOutput: return "guard_output";
    case CheckKind::GuardInputs: return "guard_inputs";
    case CheckKind::InputsModified: return "inputs_modified";
    case CheckKind::Nondeterministic: return "nondeterministic";
    case CheckKind::Crashed: return "crashed";
    case CheckKind::Hung: return "hung";
    case CheckKind::NotSupportedAfterData: return "not_supported_after_data";
    case CheckKind::Declaration: return "declaration";
    case CheckKind::Baseline: return "baseline";
    case CheckKind::CourseGate: return "course_gate";
    case CheckKind::Spread: return "spread";
    case CheckKind::Amax: return "amax";
    case CheckKind::SchemeBound: return "scheme_bound";
  }
  return "?";
}

std::optional<CheckKind> parse_check_kind(std::string_view s) {
  for (CheckKind k : kAllCheckKinds)
    if (to_string(k) == s) return k;
  return std::nullopt;
}

std::string_view to_string(Tier t) {
  switch (t) {
    case Tier::None: return "none";
    case Tier::Bitwise: return "bitwise";
    case Tier::Envelope: return "envelope";
    case Tier::EnvelopeStatistical: return "envelope+statistical";
  }
  return "?";
}

std::optional<Tier> parse_tier(std::string_view s) {
  for (Tier t : {Tier::None, Tier::Bitwise, Tier::Envelope, Tier::EnvelopeStatistical})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::optional<CaseStatus> status_from_checks(const std::vector<CheckResult>& checks) {
  bool any = false, crashed = false, hung = false, declined = false, failed = false;
  for (const CheckResult& c : checks) {
    if (!is_decisive(c.kind)) continue;
    any = true;
    if (c.passed) continue;
    switch (c.kind) {
      case CheckKind::Crashed: crashed = true; break;
      case CheckKind::Hung: hung = true; break;
      case CheckKind::NotSupportedAfterData: declined = true; break;
      default: failed = true; break;
    }
  }
  if (!any) return std::nullopt;
  if (crashed) return CaseStatus::Crashed;
  if (hung) return CaseStatus::Hung;
  if (failed) return CaseStatus::Fail;
  if (declined) return CaseStatus::NotSupported;
  return CaseStatus::Pass;
}

std::string reason_from_checks(const std::vector<CheckResult>& checks) {
  std::string r;
  for (const CheckResult& c : checks)
    if (is_decisive(c.kind) && !c.passed) r += (r.empty() ? "" : "; ") + c.detail;
  return r;
}

void decide(CaseResult& c) {
  const auto st = status_from_checks(c.checks);
  if (!st) return;
  c.status = *st;
  c.reason = reason_from_checks(c.checks);
}

const CheckResult* find_check(const CaseResult& c, CheckKind k) {
  for (const CheckResult& x : c.checks)
    if (x.kind == k) return &x;
  return nullptr;
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
    case RunKind::Mutation: return "mutation";
  }
  return "?";
}

std::optional<RunKind> parse_run_kind(std::string_view s) {
  for (RunKind k : {RunKind::Gemm, RunKind::Conversion, RunKind::Experiment, RunKind::Mutation})
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

std::string case_key(const std::string& suite, const std::string& case_id, const std::string& kernel) {
  return suite + "/" + case_id + "/" + kernel;
}

std::string case_key(const CaseResult& c) { return case_key(c.suite, c.case_id, c.kernel); }

}  // namespace fpcert

namespace fpcert {

bool cancellation_dominated(double ref, double abs_sum) {
  if (!(abs_sum > 0)) return false;
  return ref == 0 || abs_sum > kCancellationRatio * std::fabs(ref);
}

int err_frac_bucket(double frac) {
  if (!(frac == frac) || std::isinf(frac)) return 16;
  if (frac <= 0) return 0;
  if (frac > 16) return 15;
  if (frac > 4) return 14;
  if (frac > 2) return 13;
  if (frac > 1) return 12;
  if (frac <= 0x1p-10) return 1;
  // (2^-(11-b), 2^-(10-b)] for b = 2..11
  int e = 0;
  const double m = std::frexp(frac, &e);  // frac = m 2^e, m in [1/2, 1): frac in [2^(e-1), 2^e)
  const int top = m == 0.5 ? e - 1 : e;   // frac in (2^(top-1), 2^top]
  return std::clamp(top + 11, 2, 11);
}

const std::vector<std::string>& err_frac_bucket_labels() {
  static const std::vector<std::string> l = [] {
    // 2 to a negative power with superscript digits: "\u22642\u207b\u00b9\u2070" is "<=2^-10".
    auto pow2 = [](int e) {
      static const char* sup[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074", "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
      std::string t = "\u22642\u207b";
      for (char d : std::to_string(-e)) t += sup[d - '0'];
      return t;
    };
    std::vector<std::string> v = {"0", pow2(-10)};
    for (int b = 2; b <= 10; ++b) v.push_back(pow2(b - 11));
    v.push_back("\u22641");
    for (const char* x : {"\u22642", "\u22644", "\u226416", ">16", "Inf/NaN"}) v.push_back(x);
    return v;
  }();
  return l;
}

}  // namespace fpcert
