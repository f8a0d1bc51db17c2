// suites/ops/gemm/epilogue_run.hpp — the runner's side of a fused-epilogue case (docs/epilogue.md, "Cases";
// docs/suites.md, "epilogue.*"): the bias uploaded as a guarded input, the scale factors as the kernel gets them, the
// amax buffer, and the grading of every batch through suites/ops/gemm/epilogue.hpp with one amax check on their merge.
//
// The bias: its format's container (EpilogueTraits::bias_format, else the output's), n values (per column) or m (per
// row) in one row with a padded leading dimension, guard bytes and padding holding the format's NaN poison, as A and B
// (suites/run/guarded_input.hpp); checked unchanged after every run. amax: one value of the accumulator format in its
// container, in the kernel's memory, between guard bytes, pre-filled with the output pre-fill's NaN pattern before
// every run (a kernel that never writes it, or reads its last value, shows); the checked run's amax is graded, every
// later run's must equal it bit for bit (a kernel declaring run-to-run nondeterminism: each within the interval).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/ops/gemm/epilogue.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {

/// The case's epilogue as the kernel gets it: the bias values (rounded into its format) and the scale factors
/// (rounded into the accumulator format; 1 when the case passes none).
struct EpilogueInputs {
  const EpilogueCase* ec = nullptr;
  bool active = false;
  const Format* bias_format = nullptr;
  std::vector<double> bias;  ///< epilogue_bias: n (per column) or m (per row) values; empty without a bias
  double scale_a = 1, scale_b = 1, scale_d = 1;
};
EpilogueInputs epilogue_inputs(const KernelTraits& t, const EpilogueCase& ec, std::int64_t m, std::int64_t n);

/// What the runs found about the bias and amax buffers (filled inside the runner's guarded call, read after it).
struct EpilogueFindings {
  InputReport bias;                 ///< merged over every run (first findings kept)
  std::int64_t amax_guard = 0;      ///< changed guard bytes around amax, over every run
  bool amax_read = false;           ///< the checked run's amax was read back
  std::uint64_t amax_code = 0;      ///< its container code
  std::int64_t amax_differ = 0;     ///< later runs whose amax differs from the checked run's
  int first_amax_differ_run = -1;
  std::vector<std::uint64_t> amax_later;  ///< distinct later amax codes (graded on their own when run-to-run)
};

/// The bias and amax buffers in the kernel's memory space, for one case's runs.
class EpilogueBuffers {
 public:
  EpilogueBuffers(DeviceApi& api, const EpilogueInputs& in, const KernelTraits& t, std::size_t guard);
  ~EpilogueBuffers();
  EpilogueBuffers(const EpilogueBuffers&) = delete;
  EpilogueBuffers& operator=(const EpilogueBuffers&) = delete;

  /// The call's epilogue fields: bias kind and pointer, activation, scale factors, amax pointer (when asked).
  void attach(GemmOperands& ops) const;
  /// Before every run: amax pre-filled with NaN.
  void before_run();
  /// After run `run` (0: the checked run): the bias and its guards compared with the upload, amax read back.
  void after_run(int run, EpilogueFindings& f);

 private:
  const EpilogueInputs& in_;
  const KernelTraits& t_;
  std::unique_ptr<GuardedInput> bias_;
  std::unique_ptr<GuardedBuffer> amax_;
};

/// Grade one matrix (a batch) of an epilogue case: grade_epilogue with the case's bias and scale factors (C only when
/// beta != 0). Returns the matrix's amax interval.
AmaxInterval grade_epilogue_matrix(const EpilogueInputs& in, const Problem& p, const KernelTraits& t, double alpha, double beta,
                                   const std::vector<double>* c, const std::vector<std::uint64_t>& codes, std::int64_t unwritten,
                                   std::int64_t first_unwritten, CaseResult& out);

/// The batches' amax intervals merged (each end's max; the exact max and where it is reached, as index b m n + i n + j).
AmaxInterval merge_amax(const std::vector<AmaxInterval>& per, std::int64_t mn);

/// After the batches are merged into `r`: the amax check on the merge (when the case asks amax), amax's guards and its
/// later runs, the bias's guards and contents, and a flag that states the epilogue.
void finish_epilogue(const EpilogueInputs& in, const EpilogueFindings& f, const AmaxInterval& iv, const KernelTraits& t,
                     bool run_to_run, CaseResult& r);

}  // namespace fpcert
