// suites/runner.hpp — run one GEMM case of one kernel under the runner rules of DESIGN.md: inputs
// rounded into the kernel's formats, output pre-filled with a NaN pattern and surrounded by guard
// bytes (and guard bytes in the ldc padding: suites/guarded_buffer.hpp), every launch synchronised
// and checked, a watchdog on hangs, repeated runs compared bit for bit, timing without copies, then
// graded. Conversion cases: suites/convert_runner.hpp, with the same buffers, watchdog and mapping
// of failures (run_kernel_guarded).
#pragma once

#include <functional>
#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/bound.hpp"
#include "suites/guarded_buffer.hpp"

namespace fpcert {

struct RunOptions {
  int warmups = -1;            ///< -1: 0 on the host, 3 on a device
  int timed = -1;              ///< -1: 1 on the host (plus the checked run: two runs), 10 on a device
  double timeout_ms = 120000;  ///< a launch that does not finish by then is a hang
  int ldc_pad = 8;             ///< extra columns of C, filled with guard bytes that must survive
  std::size_t guard_bytes = 4096;
  int worst_count = 5;
  /// Grade cases whose inputs lie outside the kernel's InputDomain as well (studies of what a restricted
  /// fast path does beyond its domain); by default they are "not supported" with the reason.
  bool grade_outside_domain = false;
};

struct CaseSetup {
  std::string suite;
  std::string case_id;
  const Problem* problem = nullptr;
  const GemmRef* ref = nullptr;
  BoundVariant variant = BoundVariant::Independent;
  std::string repro;           ///< the command that reruns this case
  std::string family;          ///< the case's family and what varies in it (results/results.hpp)
  CaseAxis axis = CaseAxis::None;
};

/// The NaN pattern outputs are pre-filled with (distinct payload, so "never written" can be told
/// apart from "wrote a NaN"); formats without NaN get their largest finite value.
std::uint64_t prefill_code(const Format& out);

/// Run fn(), which calls a kernel; a failure becomes r's status and reason, by its type: NotSupportedError
/// → not supported, DeviceError → its FailureKind (crashed or hung), any other exception → error ("kernel
/// threw: ..."). An InputError is the user's and passes through. Returns whether fn() completed.
bool run_kernel_guarded(CaseResult& r, const std::function<void()>& fn);

/// Run and grade one case. Never throws for kernel failures: they become the case's status.
CaseResult run_case(GemmKernel& kernel, const CaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
