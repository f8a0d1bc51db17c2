// suites/ops/attention/attention_operation.hpp — attention (docs/attention.md) as an operation of the runner
// (suites/run/operation.hpp): the suites `attention` and `attention_quick`, whose cases are fitted to each kernel's input
// format (suites/ops/attention/attention_suites.cpp), the case runner (suites/ops/attention/attention_runner.hpp), the
// evidence rule, and the fault injectors with their mutation score (suites/ops/attention/attention_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/attention/attention_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in attention suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> attention_suites();
/// The attention suite a suite name stands for: itself for an attention suite; GEMM's `quick` -> `attention_quick`, any
/// other -> `attention`.
std::string attention_suite_name(const SuiteInfo& suite);
/// The cases of attention suite `suite` for a kernel with traits t.
std::vector<CaseSpec> attention_cases(const std::string& suite, const AttentionTraits& t);

class AttentionOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Attention; }
  std::vector<SuiteInfo> suites() const override { return attention_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
