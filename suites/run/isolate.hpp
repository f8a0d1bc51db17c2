// suites/run/isolate.hpp — the one child-process isolation: run work in a forked child that sends its
// result back through a pipe, so that a kernel that crashes, hangs or corrupts memory takes only its
// own case with it. Every isolated run in fpcert (GEMM cases, conversion checks) goes through here.
#pragma once

#include <functional>
#include <string>

#include "base/error.hpp"
#include "results/results.hpp"

namespace fpcert {

/// What came back from a child process.
struct ChildOutcome {
  bool ok = false;                           ///< the child finished and sent a result
  FailureKind kind = FailureKind::Crashed;   ///< when !ok: crashed (signal, bad exit, no result) or hung (killed at the timeout)
  std::string payload;                       ///< what body() returned (ok)
  std::string reason;                        ///< the signal, exit status or timeout (!ok)
  int signal = 0;                            ///< the signal that ended the child (0: none)
  int exit_status = -1;                      ///< its exit status when it exited (-1: it did not)
};

/// Run body() in a forked child and return the text it returned. A child that dies, exits without a
/// result or outlives timeout_s (it is then killed with SIGKILL) is reported instead. body() should
/// not throw: an exception in the child counts as a crash (exit status 4).
ChildOutcome run_in_child(const std::function<std::string()>& body, double timeout_s);

/// A case run in a child process: body() runs there and its CaseResult comes back as JSON. When the
/// child crashes or hangs, the result is `skeleton` with status crashed or hung and the reason.
CaseResult run_case_isolated(const std::function<CaseResult()>& body, double timeout_s, const CaseResult& skeleton);

/// Whether the exact reference's GPU engine (kernels/device/exact_gemm_cuda.hpp) can run on this machine, asked in a
/// child so that this process stays off the device (the `usable` of use_reference_engine); the reason when not.
bool gpu_reference_usable(std::string* why);

}  // namespace fpcert
