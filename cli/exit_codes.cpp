// cli/exit_codes.cpp — a run's exit code from its case verdicts.
#include "cli/exit_codes.hpp"

namespace fpcert {

int exit_code(const RunResult& r) {
  if (r.count(CaseStatus::Crashed) || r.count(CaseStatus::Hung)) return kExitKernelFailed;
  if (r.count(CaseStatus::Fail) || r.count(CaseStatus::Error)) return kExitGateFailed;
  return kExitPass;
}

}  // namespace fpcert
