// suites/mutation/mutation.cpp — running a suite on a kernel's mutants and judging each (docs/mutation.md).
#include "suites/mutation/mutation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "base/error.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

std::vector<CheckKind> failed_checks(const CaseResult& c) {
  std::vector<CheckKind> r;
  if (!c.checks.empty()) {
    for (const CheckResult& x : c.checks)
      if (is_decisive(x.kind) && !x.passed && std::find(r.begin(), r.end(), x.kind) == r.end()) r.push_back(x.kind);
    return r;
  }
  // Results without recorded checks: the runner's findings, each under the kind that now records it.
  const Metrics& m = c.metrics;
  switch (c.status) {
    case CaseStatus::Crashed:
    case CaseStatus::Error: r.push_back(CheckKind::Crashed); return r;
    case CaseStatus::Hung: r.push_back(CheckKind::Hung); return r;
    case CaseStatus::Pass:
    case CaseStatus::NotSupported: return r;
    case CaseStatus::Fail: break;
  }
  if (m.guard_violations) r.push_back(CheckKind::GuardOutput);
  if (m.unwritten) r.push_back(CheckKind::Unwritten);
  if (m.nonfinite) r.push_back(CheckKind::Nonfinite);
  if (c.reason.find(" should be NaN") != std::string::npos || c.reason.find(" should be Inf") != std::string::npos)
    r.push_back(CheckKind::SpecialValues);
  if (!m.deterministic) r.push_back(CheckKind::Nondeterministic);
  if (c.reason.find("gate exceeded") != std::string::npos) r.push_back(CheckKind::Envelope);
  if (c.reason.find("the baseline") != std::string::npos) r.push_back(CheckKind::Baseline);
  return r;
}

std::vector<Fault> parse_fault_list(const std::string& list) {
  std::vector<Fault> r;
  std::stringstream ss(list);
  std::string id;
  while (std::getline(ss, id, ',')) {
    if (id.empty()) continue;
    const FaultInfo* f = find_fault(id);
    if (!f) throw InputError(fmt::format("unknown fault '{}' (valid: {})", id, fault_ids()));
    if (std::find(r.begin(), r.end(), f->fault) == r.end()) r.push_back(f->fault);
  }
  return r;
}

MutationScore run_mutation(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info) throw InputError("unknown kernel '" + kernel + "' (fpcert kernels lists them)");
  const OperationRunner& op = operation_runner(info->operation);
  if (!op.has_faults())
    throw InputError(fmt::format("'{}' ({} kernel) has no fault injectors: docs/mutation.md lists the operations that do", kernel,
                                 to_string(info->operation)));
  if (info->operation == Operation::Conversion && !opt.run.only_case.empty())  // one case a kernel: nothing to choose
    throw InputError(fmt::format("--case {}: a conversion kernel's mutants run on its one case of the conversions suite (every pattern, or the "
                                 "sample of a 32-bit source); give no --case",
                                 opt.run.only_case));
  return op.mutate(suite, kernel, opt);
}

std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) {
  const KernelInfo* info = find_kernel_info(kernel);
  if (!info) throw InputError("unknown kernel '" + kernel + "' (fpcert kernels lists them)");
  return operation_runner(info->operation).register_mutant(kernel, f, opt);
}

bool register_mutant_name(const std::string& name) {
  const auto tilde = name.rfind('~');
  if (tilde == std::string::npos) return false;
  const FaultInfo* f = find_fault(std::string_view(name).substr(tilde + 1));
  if (!f) throw InputError(fmt::format("'{}': unknown fault '{}' after '~' (valid: {})", name, name.substr(tilde + 1), fault_ids()));
  register_mutant(name.substr(0, tilde), f->fault);
  return true;
}

}  // namespace fpcert
