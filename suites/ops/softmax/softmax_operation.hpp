// suites/ops/softmax/softmax_operation.hpp — softmax and log-softmax (docs/softmax.md) as an operation of the runner
// (suites/run/operation.hpp): the suites `softmax` and `softmax_quick`, whose cases are fitted to each kernel's input
// format (suites/ops/softmax/softmax_suites.cpp), the case runner (suites/ops/softmax/softmax_runner.hpp), the evidence
// rule, and the fault injectors with their mutation score (suites/ops/softmax/softmax_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/softmax/softmax_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in softmax suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> softmax_suites();
/// The softmax suite a suite name stands for: itself for a softmax suite; GEMM's `quick` -> `softmax_quick`, any other
/// -> `softmax` (a softmax kernel given a GEMM suite, e.g. by `fpcert mutate`'s default).
std::string softmax_suite_name(const SuiteInfo& suite);
/// The cases of softmax suite `suite` for a kernel with traits t.
std::vector<CaseSpec> softmax_cases(const std::string& suite, const SoftmaxTraits& t);

class SoftmaxOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Softmax; }
  std::vector<SuiteInfo> suites() const override { return softmax_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
