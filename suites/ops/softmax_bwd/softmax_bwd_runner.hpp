// suites/ops/softmax_bwd/softmax_bwd_runner.hpp — one softmax backward case (docs/backward.md, "Softmax and log-softmax
// backward"): y and dy of a softmax_bwd problem as codes of the kernel's input formats in guarded buffers with padded
// leading dimensions, the output pre-filled; the kernel run under the runner's guards, repeated runs compared bit for
// bit; every element graded against the correctly rounded reference (oracle/softmax/softmax_bwd_ref.hpp) by the
// per-element bound of the declared arithmetic (oracle/softmax/softmax_bwd_bound.hpp); special values (zero
// probabilities, masked entries, rows with NaN or Inf) as the reference documents them.
#pragma once

#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

struct SoftmaxBwdCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< a softmax_bwd problem (generators/softmax_bwd/softmax_bwd.hpp)
  std::string repro;
  std::string family;
  /// Put special values in (the case `specials`): row r mod 4 = 0 gets a NaN dy, r mod 4 = 1 a +Inf dy (IEEE through D
  /// or G), r mod 4 = 2 a zero probability with a large dy (softmax) or a masked entry (log-softmax: y = -Inf, dy = 0):
  /// dx = +0 there; rows r mod 4 = 3 keep their values.
  bool specials = false;
};

/// The case's record before anything ran (what an isolated child's crash leaves).
CaseResult softmax_bwd_skeleton(const SoftmaxBwdKernel& k, const SoftmaxBwdCaseSetup& s);
/// Run and grade one case of a softmax backward kernel. Kernel failures become the case's status.
CaseResult run_softmax_bwd_case(SoftmaxBwdKernel& kernel, const SoftmaxBwdCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
