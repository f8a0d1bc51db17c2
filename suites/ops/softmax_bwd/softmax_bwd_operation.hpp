// suites/ops/softmax_bwd/softmax_bwd_operation.hpp — softmax and log-softmax backward (docs/backward.md) as an operation of
// the runner (suites/run/operation.hpp): the suites `softmax_backward` and `softmax_backward_quick`, whose cases are
// fitted to each kernel's function and input format (suites/ops/softmax_bwd/softmax_bwd_suites.cpp), the case runner
// (softmax_bwd_runner.hpp), the evidence rule, and the fault injectors with their mutation score (softmax_bwd_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in softmax backward suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> softmax_bwd_suites();
/// The softmax backward suite a suite name stands for: itself for one of them; `quick` -> `softmax_backward_quick`, any
/// other -> `softmax_backward`.
std::string softmax_bwd_suite_name(const SuiteInfo& suite);
/// The cases of softmax backward suite `suite` for a kernel with traits t.
std::vector<CaseSpec> softmax_bwd_cases(const std::string& suite, const SoftmaxBwdTraits& t);

class SoftmaxBwdOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::SoftmaxBackward; }
  std::vector<SuiteInfo> suites() const override { return softmax_bwd_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
