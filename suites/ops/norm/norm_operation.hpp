// suites/ops/norm/norm_operation.hpp — LayerNorm and RMSNorm (docs/normalization.md) as an operation of the runner
// (suites/run/operation.hpp): the suites `norm` and `norm_quick`, whose cases are fitted to each kernel's input
// format (suites/ops/norm/norm_suites.cpp), the case runner (suites/ops/norm/norm_runner.hpp), the evidence
// rule, and the fault injectors with their mutation score (suites/ops/norm/norm_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/norm/norm_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in norm suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> norm_suites();
/// The norm suite a suite name stands for: itself for a norm suite; GEMM's `quick` -> `norm_quick`, any other -> `norm`
/// (a norm kernel given a GEMM suite, e.g. by `fpcert mutate`'s default).
std::string norm_suite_name(const SuiteInfo& suite);
/// The cases of norm suite `suite` for a kernel with traits t.
std::vector<CaseSpec> norm_cases(const std::string& suite, const NormTraits& t);

class NormOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Norm; }
  std::vector<SuiteInfo> suites() const override { return norm_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
