// cli/exit_codes.hpp — the exit codes of the fpcert command (DESIGN.md) and how a run maps onto them.
#pragma once

#include "results/results.hpp"

namespace fpcert {

/// Exit codes of the fpcert command.
enum ExitCode : int {
  kExitPass = 0,         ///< every gate passed
  kExitGateFailed = 1,   ///< a gate failed (or a conversion mismatched)
  kExitUsage = 2,        ///< usage or input error, with a clear message
  kExitKernelFailed = 3, ///< a kernel crashed or the device failed
};

/// Exit code for a run: 0 all gates pass, 1 a gate failed, 3 a kernel crashed or hung.
int exit_code(const RunResult& r);

}  // namespace fpcert
