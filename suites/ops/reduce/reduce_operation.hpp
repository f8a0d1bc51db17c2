// suites/ops/reduce/reduce_operation.hpp — reductions (sums, dot products, norms; docs/reductions.md) as an operation
// of the runner (suites/run/operation.hpp): the suites `reduce` and `reduce_quick`, whose cases are tailored to each
// kernel's kind and formats (suites/ops/reduce/reduce_suites.cpp), the case runner (suites/ops/reduce/reduce_runner.hpp),
// the evidence rule, and the fault injectors with their mutation score (suites/ops/reduce/reduce_faults.hpp).
#pragma once

#include <string>
#include <vector>

#include "kernels/reduce/reduce_kernel.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

/// The built-in reduction suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> reduce_suites();
/// The reduction suite a suite name stands for: itself for a reduction suite; GEMM's `quick` -> `reduce_quick`, any
/// other -> `reduce` (a reduction kernel given a GEMM suite, e.g. by `fpcert mutate`'s default; docs/suites.md).
std::string reduction_suite_name(const SuiteInfo& suite);
/// The cases of reduction suite `suite` for a kernel with traits t (sizes, families and formats fitted to it).
std::vector<CaseSpec> reduce_cases(const std::string& suite, const ReduceTraits& t);

class ReduceOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Reduction; }
  std::vector<SuiteInfo> suites() const override { return reduce_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
