// suites/ops/attention_bwd/attention_bwd_operation.hpp — attention backward (docs/backward.md) as an operation of the
// runner (suites/run/operation.hpp): the suites `attention_backward` and `attention_backward_quick`, whose cases are
// fitted to each kernel's input format (suites/ops/attention_bwd/attention_bwd_suites.cpp), the case runner
// (attention_bwd_runner.hpp), the evidence rule, and the fault injectors with their mutation score (attention_bwd_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in attention backward suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> attention_bwd_suites();
/// The attention backward suite a suite name stands for: itself for one of its suites; GEMM's `quick` ->
/// `attention_backward_quick`, any other -> `attention_backward`.
std::string attention_bwd_suite_name(const SuiteInfo& suite);
/// The cases of suite `suite` for a kernel with traits t.
std::vector<CaseSpec> attention_bwd_cases(const std::string& suite, const AttentionBwdTraits& t);

class AttentionBwdOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::AttentionBackward; }
  std::vector<SuiteInfo> suites() const override { return attention_bwd_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
