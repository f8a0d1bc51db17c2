// suites/ops/norm_bwd/norm_bwd_operation.hpp — LayerNorm and RMSNorm backward (docs/backward.md, "LayerNorm and RMSNorm
// backward") as an operation of the runner (suites/run/operation.hpp): the suites `norm_backward` and
// `norm_backward_quick`, fitted to each kernel's input format (suites/ops/norm_bwd/norm_bwd_suites.cpp), the case runner
// (suites/ops/norm_bwd/norm_bwd_runner.hpp), the evidence rule, and the fault injectors with their mutation score
// (suites/ops/norm_bwd/norm_bwd_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/norm/norm_backward_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in norm backward suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> norm_bwd_suites();
/// The norm backward suite a suite name stands for: itself for one of them; GEMM's `quick` -> `norm_backward_quick`, any
/// other -> `norm_backward` (a backward kernel given a GEMM suite, e.g. by `fpcert mutate`'s default).
std::string norm_bwd_suite_name(const SuiteInfo& suite);
/// The cases of suite `suite` for a kernel with traits t.
std::vector<CaseSpec> norm_bwd_cases(const std::string& suite, const NormBwdTraits& t);

class NormBwdOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::NormBackward; }
  std::vector<SuiteInfo> suites() const override { return norm_bwd_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
