// suites/ops/elementwise/eltwise_operation.hpp — elementwise math y = f(x) (issue 42, docs/elementwise.md) as an
// operation of the runner (suites/run/operation.hpp): the suites `elementwise` (CI: every code of a 16-bit input
// format, a sample and the special inputs of fp32) and `elementwise_full` (every fp32 code: the device sweep for a
// CUDA kernel, all 2^32 through run() on the host otherwise), the case runner (eltwise_runner.hpp), the evidence rule.
#pragma once

#include <string>
#include <vector>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "suites/ops/elementwise/eltwise_runner.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

std::vector<SuiteInfo> eltwise_suites();
/// The cases of suite `suite` for a kernel with traits t.
std::vector<CaseSpec> eltwise_cases(const std::string& suite, const EltwiseTraits& t);

class ElementwiseOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Elementwise; }
  std::vector<SuiteInfo> suites() const override { return eltwise_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  /// The faults of suites/ops/elementwise/eltwise_faults.hpp, made around any elementwise kernel.
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
