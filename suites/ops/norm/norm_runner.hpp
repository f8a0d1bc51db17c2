// suites/ops/norm/norm_runner.hpp — one LayerNorm / RMSNorm case (docs/normalization.md, "Certifying a kernel"): x,
// gamma and beta of a norm problem in the kernel's input format in guarded buffers with padded leading dimensions; the
// kernel run under the runner's guards, repeated runs compared bit for bit; every element graded against the
// correctly rounded reference (oracle/norm/norm_ref.hpp) by the per-element bound of the kernel's declared arithmetic
// (oracle/norm/norm_bound.hpp), special values (NaN rows) as IEEE gives them, unwritten outputs, guards and inputs.
#pragma once

#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

struct NormCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< a norm problem (generators/norm/norm.hpp)
  std::string repro;
  std::string family;
  /// Put special values into x (the case `specials`): row r mod 3 = 0 gets a NaN, r mod 3 = 1 a +Inf (both: the whole
  /// row NaN); rows r mod 3 = 2 keep their values.
  bool specials = false;
};

CaseResult norm_skeleton(const NormKernel& k, const NormCaseSetup& s);
CaseResult run_norm_case(NormKernel& kernel, const NormCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
