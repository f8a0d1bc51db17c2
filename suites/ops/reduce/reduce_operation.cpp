// suites/ops/reduce/reduce_operation.cpp — reductions as the runner runs them (suites/ops/reduce/reduce_operation.hpp):
// the hooks of the row-operation driver (suites/run/row_operation.hpp) and of its mutation campaign
// (suites/mutation/row_mutation.hpp; the injectors: suites/ops/reduce/reduce_faults.hpp).
#include "suites/ops/reduce/reduce_operation.hpp"

#include "suites/mutation/row_mutation.hpp"
#include "suites/ops/reduce/reduce_faults.hpp"
#include "suites/ops/reduce/reduce_runner.hpp"
#include "suites/run/row_operation.hpp"

namespace fpcert {

namespace {

struct Rows {
  using Kernel = ReduceKernel;
  using Setup = ReduceCaseSetup;
  static constexpr Operation operation = Operation::Reduction;
  static constexpr std::string_view noun = "reduction";
  static constexpr std::string_view evidence = "no case graded a vector with a non-vacuous bound (the suite certifies nothing about the accumulation)";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_reduce_kernel(name); }
  static std::string suite_name(const SuiteInfo& s) { return reduction_suite_name(s); }
  static std::vector<CaseSpec> cases(const std::string& suite, const Kernel& k) { return reduce_cases(suite, k.reduce_traits()); }
  static std::string describe(const Kernel& k) { return describe_reduce_traits(k.reduce_traits()); }
  static Setup setup(const std::string& suite, const CaseSpec& c, const Problem* p, const std::string& repro) {
    return {suite, c.id, p, repro, c.family, c.min_runs, c.id == "specials"};
  }
  static CaseResult skeleton(const Kernel& k, const Setup& s) { return reduce_skeleton(k, s); }
  static CaseResult run_case(Kernel& k, const Setup& s, DeviceApi& api, const RunOptions& opt) { return run_reduce_case(k, s, api, opt); }
  static std::string not_applicable(Fault f, const Kernel& k) { return reduce_fault_not_applicable(f, k.reduce_traits()); }
  static std::string register_mutant(const std::string& kernel, Fault f) { return register_reduce_mutant(kernel, f); }
};

}  // namespace

std::vector<PlanItem> ReduceOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                            const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::plan(suite, kernels, opt);
}

RunResult ReduceOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::run(suite, kernels, opt);
}

void ReduceOperation::require_evidence(RunResult& r) const { RowOperation<Rows>::require_evidence(r); }

MutationScore ReduceOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  return row_mutation<Rows>(*this, suite, kernel, opt);
}

std::string ReduceOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)opt;
  return Rows::register_mutant(kernel, f);
}

}  // namespace fpcert
