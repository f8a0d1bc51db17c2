// suites/ops/reduce/reduce_mutation.cpp — the mutation score of reduction kernels (docs/mutation.md).
#include "suites/ops/reduce/reduce_operation.hpp"

namespace fpcert {

MutationScore ReduceOperation::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  return OperationRunner::mutate(suite, kernel, opt);
}

std::string ReduceOperation::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  return OperationRunner::register_mutant(kernel, f, opt);
}

}  // namespace fpcert
