// suites/ops/conversion/conversion_operation.hpp — elementwise conversion between number formats as an operation
// of the runner (suites/run/operation.hpp): the `conversions` suite (suites/ops/conversion/conversion_suite.hpp),
// every kernel swept over its source codes by the conversion runner (suites/ops/conversion/convert_runner.hpp).
// Its mutation score (conversion_mutation.cpp): the faults of conversion_faults.hpp injected around a host kernel, each
// mutant swept by the suite's case (docs/mutation.md, "Conversion kernels").
#pragma once

#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

class ConversionOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Conversion; }
  std::vector<SuiteInfo> suites() const override {
    return {{"conversions",
             "every conversion kernel swept over its source codes and checked against MPFR: by default the device "
             "table's entries this GPU supports, fpcert's model of each without a device (docs/conversions.md)",
             {}, Operation::Conversion}};
  }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override {
    return plan_conversion_suite(suite, kernels, opt);
  }
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override {
    return run_conversion_suite(suite, kernels, opt);
  }
  bool has_faults() const override { return true; }
  /// Every conversion fault on a host kernel (InputError for a device kernel, or with --fault: those name GEMM faults).
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override;
};

}  // namespace fpcert
