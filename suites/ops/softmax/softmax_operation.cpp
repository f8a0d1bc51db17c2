// suites/ops/softmax/softmax_operation.cpp — softmax as the runner runs it (suites/ops/softmax/softmax_operation.hpp):
// the hooks of the row-operation driver (suites/run/row_operation.hpp) and of its mutation campaign
// (suites/mutation/row_mutation.hpp; the injectors: suites/ops/softmax/softmax_faults.hpp).
#include "suites/ops/softmax/softmax_operation.hpp"

#include "suites/mutation/row_mutation.hpp"
#include "suites/ops/softmax/softmax_faults.hpp"
#include "suites/ops/softmax/softmax_runner.hpp"
#include "suites/run/row_operation.hpp"

namespace fpcert {

namespace {

struct Rows {
  using Kernel = SoftmaxKernel;
  using Setup = SoftmaxCaseSetup;
  static constexpr Operation operation = Operation::Softmax;
  static constexpr std::string_view noun = "softmax";
  static constexpr std::string_view evidence = "no case graded an element with a non-vacuous bound (the suite certifies nothing about the arithmetic)";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_softmax_kernel(name); }
  static std::string suite_name(const SuiteInfo& s) { return softmax_suite_name(s); }
  static std::vector<CaseSpec> cases(const std::string& suite, const Kernel& k) { return softmax_cases(suite, k.softmax_traits()); }
  static std::string describe(const Kernel& k) { return describe_softmax_traits(k.softmax_traits()); }
  static Setup setup(const std::string& suite, const CaseSpec& c, const Problem* p, const std::string& repro) {
    return {suite, c.id, p, repro, c.family, c.id == "specials"};
  }
  static CaseResult skeleton(const Kernel& k, const Setup& s) { return softmax_skeleton(k, s); }
  static CaseResult run_case(Kernel& k, const Setup& s, DeviceApi& api, const RunOptions& opt) { return run_softmax_case(k, s, api, opt); }
  static std::string not_applicable(Fault f, const Kernel& k) { return softmax_fault_not_applicable(f, k); }
  static std::string register_mutant(const std::string& kernel, Fault f) { return register_softmax_mutant(kernel, f); }
};

}  // namespace

std::vector<PlanItem> SoftmaxOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                            const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::plan(suite, kernels, opt);
}

RunResult SoftmaxOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::run(suite, kernels, opt);
}

void SoftmaxOperation::require_evidence(RunResult& r) const { RowOperation<Rows>::require_evidence(r); }

MutationScore SoftmaxOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  return row_mutation<Rows>(*this, suite, kernel, opt);
}

std::string SoftmaxOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)opt;
  return Rows::register_mutant(kernel, f);
}

}  // namespace fpcert
