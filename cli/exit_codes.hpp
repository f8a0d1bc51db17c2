// cli/exit_codes.hpp — the exit codes of the fpcert command (DESIGN.md) and how a run maps onto them.
#pragma once

#include <string>

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

namespace fpcert::cli {

/// While one is alive, a call to exit() or quick_exit() from this process (not from a child it forked)
/// prints `message` on stderr and ends the process with exit 3 instead of the code it was given:
/// fpcert never calls exit() while a command runs, so such a call comes from a plugin's code and must
/// not decide the exit code (a constructor's exit(0) would otherwise pass a CI gate on nothing). With
/// `fatal_signals`, SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT print the message too (with the signal)
/// before the process dies by that signal. Guards nest: the innermost message is used.
class ExitGuard {
 public:
  explicit ExitGuard(const std::string& message, bool fatal_signals = false);
  ~ExitGuard();
  ExitGuard(const ExitGuard&) = delete;
  ExitGuard& operator=(const ExitGuard&) = delete;

 private:
  std::string previous_;
  bool previous_armed_ = false, signals_ = false;
};

/// Let exit(code) through from here on (mpi_abort: fpcert's own deliberate exit).
void disarm_exit_guard();

}  // namespace fpcert::cli
