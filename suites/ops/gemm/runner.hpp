// suites/ops/gemm/runner.hpp — run one GEMM case of one kernel under the runner rules of DESIGN.md: inputs
// rounded into the kernel's formats, output pre-filled with a NaN pattern and surrounded by guard
// bytes (and guard bytes in the ldc padding: suites/run/guarded_buffer.hpp), every launch synchronised
// and checked, a watchdog on hangs, repeated runs compared bit for bit, timing without copies, then
// graded. Conversion cases: suites/ops/conversion/convert_runner.hpp, with the same buffers, watchdog and mapping
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
#include "suites/run/case_run.hpp"
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/bound.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/verdict/sampled_reference.hpp"
#include "suites/run/guarded_buffer.hpp"

namespace fpcert {

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
  /// Padding columns of A and B (lda = k + ld_pad, ldb = n + ld_pad); 0: padded_ld (suites/run/guarded_input.hpp).
  std::int64_t ld_pad = 0;
  /// Graded on a sample (suites/verdict/sampled_reference.hpp): `ref` is the sample's reference, element (p, q)
  /// C(rows[p], cols[q]); null: `ref` is the full reference. The unwritten check still covers all of C.
  const GemmSample* sample = nullptr;
  int min_runs = 0;            ///< at least this many runs after the checked one (determinism cases)
  /// How A, B and C are stored (docs/suites.md, "layout.transposes"): a column-major operand is laid out as its
  /// transpose with the same padding, guards and poison; a kernel that does not take the layout gets "not supported".
  GemmLayout layout = {};
  /// D = alpha (A B) + beta C (docs/suites.md, "epilogue.alpha_beta"; suites/ops/gemm/alpha_beta.hpp): C uploaded
  /// with guards (checked unchanged) or in place in D's buffer, graded against the exact alpha A'B' + beta C. A kernel
  /// that does not declare alpha/beta gets "not supported".
  AlphaBetaCase alpha_beta = {};
  /// Strided batches (docs/suites.md, "batch.strided"; suites/ops/gemm/batch.hpp): the kernel called once with
  /// batch.count matrices laid out with gap rows between them, each batch graded as its own m x n matrix. A kernel
  /// that does not declare batches gets "not supported". batch_problems/batch_refs: every batch's problem and exact
  /// reference, batch 0 first (problem and ref are batch 0's).
  BatchCase batch = {};
  const std::vector<Problem>* batch_problems = nullptr;
  const std::vector<GemmRef>* batch_refs = nullptr;
  /// The reference of the problem's inputs as a kernel receives them, kept across kernels (GradeInput::inputs_ref);
  /// given to grade for the whole problem only (not a sample's, a batch's or block-scaled operands).
  InputsReference inputs_ref;
  /// The emulator's output on the case, kept across a kernel and its mutants (GradeInput::emulated); empty: none kept.
  EmulationMemo emulated;
  /// A block-scaled kernel's reference (suites/verdict/block_reference.hpp) of the whole problem, kept across the kernels
  /// and mutants whose traits quantize alike (gemm_block_reference); empty: made by the runner for this call alone.
  std::function<std::shared_ptr<const BlockReference>(const KernelTraits&)> block_ref;
  /// The fused epilogue (docs/epilogue.md; suites/ops/gemm/epilogue.hpp): bias, activation, FP8 scale factors and
  /// amax, graded against the exact scale_d act(alpha' A'B' + beta C + bias). A kernel whose EpilogueTraits do not
  /// take the case's epilogue gets "not supported".
  EpilogueCase epilogue = {};
};

/// Run and grade one case. Never throws for kernel failures: they become the case's status.
CaseResult run_case(GemmKernel& kernel, const CaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
