// suites/runner.hpp — run one GEMM case of one kernel under the runner rules of DESIGN.md: inputs
// rounded into the kernel's formats, output pre-filled with a NaN pattern and surrounded by guard
// bytes (and guard bytes in the ldc padding: suites/guarded_buffer.hpp), every launch synchronised
// and checked, a watchdog on hangs, repeated runs compared bit for bit, timing without copies, then
// graded. Conversion cases: suites/convert_runner.hpp, with the same buffers, watchdog and mapping
// of failures (run_kernel_guarded).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/bound.hpp"
#include "suites/guarded_buffer.hpp"

namespace fpcert {

class OrderSource;  // suites/revealed_order.hpp

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
  /// The strongest verdict tier to use (docs/bound_model.md, "Tiers"): Bitwise = what the kernel's
  /// declarations allow; EnvelopeStatistical or Envelope to study the weaker tiers (--tier).
  Tier strongest = Tier::Bitwise;
  /// Keep the error map of passing cases too (failing cases always carry one; certify --error-maps).
  bool error_maps = false;
  /// When set, receives the checked run's output decoded to double (row-major m x n; empty when the
  /// kernel did not run), for experiments that grade by a published method of their own.
  std::vector<double>* output = nullptr;
  /// Orders from outside the kernels' declarations (certify --order revealed / FILE), revealed per shape and
  /// kept for the run (suites/revealed_order.hpp); null: every kernel's declared order.
  std::shared_ptr<OrderSource> orders;
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
  bool misaligned = false;     ///< A and B start one element past an aligned address
  int min_runs = 0;            ///< at least this many runs after the checked one (determinism cases)
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
