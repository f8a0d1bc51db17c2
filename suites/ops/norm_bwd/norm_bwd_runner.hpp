// suites/ops/norm_bwd/norm_bwd_runner.hpp — one LayerNorm / RMSNorm backward case (docs/backward.md, "LayerNorm and
// RMSNorm backward"): x, dy and gamma of a norm_bwd problem in the kernel's input format and the statistics a forward
// saves (the correctly rounded fp32 mean and rstd of x) in guarded buffers with padded leading dimensions; dx and
// dgamma/dbeta pre-filled and guarded; the kernel run under the runner's guards; dx compared bit for bit between runs,
// dgamma/dbeta too unless the kernel declares them run to run (atomics: then every run is graded and the spread
// reported); every element graded against the correctly rounded reference (oracle/norm/norm_bwd_ref.hpp) by the bound
// of the declared arithmetic (oracle/norm/norm_bwd_bound.hpp).
#pragma once

#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/norm/norm_backward_kernel.hpp"
#include "oracle/norm/norm_bwd_bound.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

struct NormBwdCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< a norm_bwd problem (generators/norm/norm_bwd.hpp)
  std::string repro;
  std::string family;
  /// Put NaNs into dy (the case `specials`): row r with r mod 3 = 0 gets a NaN at column r mod cols (its dx all NaN,
  /// that column's dgamma and dbeta NaN).
  bool specials = false;
};

/// The bound's view of a kernel's traits.
NormBwdArith norm_bwd_arith(const NormBwdTraits& t, double eps);

CaseResult norm_bwd_skeleton(const NormBwdKernel& k, const NormBwdCaseSetup& s);
CaseResult run_norm_bwd_case(NormBwdKernel& kernel, const NormBwdCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
