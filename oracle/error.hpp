// oracle/error.hpp — the error types that map onto fpcert's exit codes (DESIGN.md).
#pragma once

#include <stdexcept>
#include <string>

namespace fpcert {

/// Exit codes of the fpcert command.
enum ExitCode : int {
  kExitPass = 0,         ///< every gate passed
  kExitGateFailed = 1,   ///< a gate failed (or a conversion mismatched)
  kExitUsage = 2,        ///< usage or input error, with a clear message
  kExitKernelFailed = 3, ///< a kernel crashed or the device failed
};

/// Bad input from the user (arguments, spec strings, files): exit 2, nothing written half-way.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A kernel crashed, hung or the device failed: exit 3.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace fpcert
