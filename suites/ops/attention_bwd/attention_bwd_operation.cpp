// suites/ops/attention_bwd/attention_bwd_operation.cpp — attention backward as the runner runs it: the hooks of the
// row-operation driver (suites/run/row_operation.hpp) and of its mutation campaign (suites/mutation/row_mutation.hpp).
#include "suites/ops/attention_bwd/attention_bwd_operation.hpp"

#include "suites/mutation/row_mutation.hpp"
#include "suites/ops/attention_bwd/attention_bwd_faults.hpp"
#include "suites/ops/attention_bwd/attention_bwd_runner.hpp"
#include "suites/run/row_operation.hpp"

namespace fpcert {

namespace {

struct Rows {
  using Kernel = AttentionBwdKernel;
  using Setup = AttentionBwdCaseSetup;
  static constexpr Operation operation = Operation::AttentionBackward;
  static constexpr std::string_view noun = "attention backward";
  static constexpr std::string_view evidence = "no case graded an element with a non-vacuous bound (the suite certifies nothing about the arithmetic)";
  static std::unique_ptr<Kernel> make(const std::string& name) { return make_attention_bwd_kernel(name); }
  static std::string suite_name(const SuiteInfo& s) { return attention_bwd_suite_name(s); }
  static std::vector<CaseSpec> cases(const std::string& suite, const Kernel& k) { return attention_bwd_cases(suite, k.attention_bwd_traits()); }
  static std::string describe(const Kernel& k) { return describe_attention_bwd_traits(k.attention_bwd_traits()); }
  static Setup setup(const std::string& suite, const CaseSpec& c, const Problem* p, const std::string& repro) {
    return {suite, c.id, p, repro, c.family};
  }
  static CaseResult skeleton(const Kernel& k, const Setup& s) { return attention_bwd_skeleton(k, s); }
  static CaseResult run_case(Kernel& k, const Setup& s, DeviceApi& api, const RunOptions& opt) { return run_attention_bwd_case(k, s, api, opt); }
  static std::string not_applicable(Fault f, const Kernel& k) { return attention_bwd_fault_not_applicable(f, k); }
  static std::string register_mutant(const std::string& kernel, Fault f) { return register_attention_bwd_mutant(kernel, f); }
};

}  // namespace

std::vector<PlanItem> AttentionBwdOperation::plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                                  const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::plan(suite, kernels, opt);
}

RunResult AttentionBwdOperation::run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const {
  return RowOperation<Rows>::run(suite, kernels, opt);
}

void AttentionBwdOperation::require_evidence(RunResult& r) const { RowOperation<Rows>::require_evidence(r); }

MutationScore AttentionBwdOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  return row_mutation<Rows>(*this, suite, kernel, opt);
}

std::string AttentionBwdOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)opt;
  return Rows::register_mutant(kernel, f);
}

}  // namespace fpcert
