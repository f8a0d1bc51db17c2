// suites/run/operation.cpp — what an operation without fault injectors answers (suites/run/operation.hpp).
#include "suites/run/operation.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace fpcert {

MutationScore OperationRunner::mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const {
  (void)suite, (void)opt;
  throw InputError(fmt::format("'{}' is a {} kernel: it has no fault injectors (docs/mutation.md)", kernel, to_string(operation())));
}

std::string OperationRunner::register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const {
  (void)f, (void)opt;
  throw InputError(fmt::format("'{}' is a {} kernel: it has no fault injectors (docs/mutation.md)", kernel, to_string(operation())));
}

const OperationRunner& operation_runner(Operation op) {
  for (const OperationRunner* r : operation_runners())
    if (r->operation() == op) return *r;
  throw std::logic_error("operation_runner: no runner for operation " + std::string(to_string(op)));
}

}  // namespace fpcert
