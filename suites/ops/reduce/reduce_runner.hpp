// suites/ops/reduce/reduce_runner.hpp — one reduction case (docs/reductions.md, "Certifying a reduction"): the
// vectors of a reduction problem rounded into the kernel's input formats, laid out in guarded buffers (rows or
// columns, padded leading dimensions), the kernel run under the runner's guards, repeated runs compared bit for bit
// (or each graded, for a run-to-run kernel), and every vector's result graded: bitwise against the emulation of a
// declared order, by the envelope (the oracle's per-vector bound) always, special values, unwritten outputs,
// guards and inputs.
#pragma once

#include <string>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

struct ReduceCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< a reduction problem (generators/reduce.hpp)
  std::string repro;
  std::string family;
  int min_runs = 0;  ///< at least this many runs after the checked one
  /// Put special values into the data (the case `specials`): element 0 of vector v becomes NaN (v mod 4 = 0), +Inf
  /// (v mod 4 = 1), or -Inf with element 1 +Inf (v mod 4 = 2: Inf - Inf, NaN; for nrm2 element 1 is NaN instead: Inf
  /// and NaN together, where IEEE 754 and LAPACK disagree); vectors v mod 4 = 3 keep their values.
  bool specials = false;
};

/// The case's record before anything ran (what an isolated child's crash leaves).
CaseResult reduce_skeleton(const ReduceKernel& k, const ReduceCaseSetup& s);
/// Run and grade one case of a reduction kernel. Kernel failures become the case's status.
CaseResult run_reduce_case(ReduceKernel& kernel, const ReduceCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
