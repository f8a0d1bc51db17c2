// suites/ops/norm/norm_operation.cpp — LayerNorm / RMSNorm as the runner runs them (suites/ops/norm/norm_operation.hpp):
// the hooks of the row-operation driver (suites/run/row_operation.hpp) and of its mutation campaign
// (suites/mutation/row_mutation.hpp; the injectors: suites/ops/norm/norm_faults.hpp).
#include "suites/ops/norm/norm_operation.hpp"

#include "suites/mutation/row_mutation.hpp"
#include "suites/ops/norm/norm_faults.hpp"
#include "suites/ops/norm/norm_runner.hpp"
#include "suites/run/row_operation.hpp"

namespace fpcert {

namespace {

struct Rows {
  using Kernel = NormKernel;
  using Setup = NormCaseSetup;
  static constexpr Operation operation = Operation::Norm;
  static constexpr std::string_view noun = "norm";
  static constexpr std::string_view evidence = "no case graded an element with a non-vacuous bound (the suite certifies nothing about the arithmetic)";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_norm_kernel(name); }
  static std::string suite_name(const SuiteInfo& s) { return norm_suite_name(s); }
  static std::vector<CaseSpec> cases(const std::string& suite, const Kernel& k) { return norm_cases(suite, k.norm_traits()); }
  static std::string describe(const Kernel& k) { return describe_norm_traits(k.norm_traits()); }
  static Setup setup(const std::string& suite, const CaseSpec& c, const Problem* p, const std::string& repro) {
    return {suite, c.id, p, repro, c.family, c.id == "specials"};
  }
  static CaseResult skeleton(const Kernel& k, const Setup& s) { return norm_skeleton(k, s); }
  static CaseResult run_case(Kernel& k, const Setup& s, DeviceApi& api, const RunOptions& opt) { return run_norm_case(k, s, api, opt); }
  static std::string not_applicable(Fault f, const Kernel& k) { return norm_fault_not_applicable(f, k); }
  static std::string register_mutant(const std::string& kernel, Fault f) { return register_norm_mutant(kernel, f); }
};

}  // namespace

std::vector<PlanItem> NormOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                            const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::plan(suite, kernels, opt);
}

RunResult NormOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::run(suite, kernels, opt);
}

void NormOperation::require_evidence(RunResult& r) const { RowOperation<Rows>::require_evidence(r); }

MutationScore NormOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  return row_mutation<Rows>(*this, suite, kernel, opt);
}

std::string NormOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)opt;
  return Rows::register_mutant(kernel, f);
}

}  // namespace fpcert
