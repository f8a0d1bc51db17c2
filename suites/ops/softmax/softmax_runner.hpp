// suites/ops/softmax/softmax_runner.hpp — one softmax case (docs/softmax.md, "Certifying a softmax kernel"): the logits
// of a softmax problem rounded into the kernel's input format, the mask as fp32 codes, both in guarded buffers with
// padded leading dimensions; the kernel run under the runner's guards, repeated runs compared bit for bit; every element
// graded against the correctly rounded reference (oracle/softmax/softmax_ref.hpp) by the per-element bound of the
// kernel's declared arithmetic (oracle/softmax/softmax_bound.hpp), special values (masked entries and rows, NaN rows)
// as IEEE and the declared policy give them, unwritten outputs, guards and inputs.
#pragma once

#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

struct SoftmaxCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< a softmax problem (generators/softmax.hpp)
  std::string repro;
  std::string family;
  /// Put special values into the logits (the case `specials`): row r mod 4 = 0 gets a NaN, r mod 4 = 1 a +Inf (both:
  /// the whole row NaN), r mod 4 = 2 a -Inf (a zero weight); rows r mod 4 = 3 keep their values.
  bool specials = false;
};

/// The case's record before anything ran (what an isolated child's crash leaves).
CaseResult softmax_skeleton(const SoftmaxKernel& k, const SoftmaxCaseSetup& s);
/// Run and grade one case of a softmax kernel. Kernel failures become the case's status.
CaseResult run_softmax_case(SoftmaxKernel& kernel, const SoftmaxCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
