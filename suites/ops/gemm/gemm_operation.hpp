// suites/ops/gemm/gemm_operation.hpp — GEMM, C = A B, as an operation of the runner (suites/run/operation.hpp):
// its suites (suites/ops/gemm/gemm_suites.cpp), its case runner (suites/ops/gemm/runner.hpp), the evidence certify
// requires (docs/bound_model.md, "Evidence"), its fault injectors (suites/ops/gemm/fault_injectors.hpp) and
// mutation score (docs/mutation.md).
#pragma once

#include <string>
#include <vector>

#include "suites/run/operation.hpp"

namespace fpcert {

struct MutationOptions;

/// The built-in GEMM suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> gemm_suites();

/// The mutation score of a suite on a GEMM kernel (suites/mutation/mutation.hpp, run_mutation, dispatches here).
MutationScore run_gemm_mutation(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt);

class GemmOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Gemm; }
  std::vector<SuiteInfo> suites() const override { return gemm_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override {
    return run_gemm_mutation(suite, kernel, opt);
  }
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
