// suites/run/row_case.hpp — what the case runners of the row operations (softmax, normalisation, and those that follow)
// share after each has built its inputs, reference and bound: the runs (the checked one, warm-ups, timed ones), each
// followed by the output's download and guard check and the inputs' check; the per-element grading's tallies; and the
// metrics and checks of the case from them. The operation keeps what is its own: inputs, specials, the reference, the
// bound and its terms (suites/ops/softmax/softmax_runner.cpp, suites/ops/norm/norm_runner.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "oracle/format.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {

/// The runs of one case on one kernel.
struct RowRuns {
  int warmups = 0, timed = 1;  ///< after the checked run: warm-ups (untimed), then timed runs
  std::vector<std::uint64_t> codes;  ///< the checked run's output, row-major rows x cols (format codes)
  std::vector<double> times;         ///< ms of each timed run
  InputReport inputs;                ///< the inputs' guards and contents over every run
  std::int64_t runs_differ = 0, first_differ_run = -1, first_differ_index = -1;
  std::int64_t out_guard = 0;        ///< output guard bytes changed, over every run
  std::string first_out_guard;
};

/// Warm-ups and timed runs as the options say (defaults: 3 and 10 on a device, 0 and 1 on the host).
RowRuns row_runs(const DeviceApi& api, const RunOptions& opt);

/// `launch` once, then warmups + timed more times (timed ones timed by the api); after each: synchronize, download the
/// rows x cols output of `dout` (format `out`), check its guards and the inputs (null entries skipped), and compare the
/// output with the first run's bit for bit. `after_each`, when given, is called after each run's checks, outside the
/// timing (an operation with a second output downloads and checks it there: norm backward's dgamma and dbeta).
void run_rows(RowRuns& runs, DeviceApi& api, const RunOptions& opt, GuardedBuffer& dout, const Format& out, std::int64_t rows,
              std::int64_t cols, std::initializer_list<GuardedInput*> inputs, const std::function<void()>& launch,
              const std::function<void()>& after_each = {});

/// The three checks of the buffers every case runner adds in the same words: the output's guards, the inputs' guards
/// and padding, and the inputs left unchanged (row operations, reductions).
void add_buffer_checks(CaseResult& r, std::int64_t out_guard, const std::string& first_out_guard, const InputReport& in);

/// The per-element grading's tallies. The runner visits every element once, and calls one of: unwritten (the pre-fill
/// pattern is still there), special (a special value: right or wrong), ref_overflow (the exact value overflows the output
/// format: not judged), or graded (a finite exact value).
class RowGrades {
 public:
  void unwritten(std::int64_t e);
  void special_wrong(std::int64_t e, std::string detail);
  void ref_overflow() { ++ref_overflow_; }
  /// A finite exact value `want` (code `ref_code` in `out`) and the kernel's `got` (code `code`), `bound` the element's
  /// error bound (Inf: beyond what the bound covers).
  void graded(std::int64_t e, const Format& out, std::uint64_t code, std::uint64_t ref_code, double got, double want, double bound);

  /// The heuristics of results/results.hpp (HeuristicVerdicts) on element e, every written or unwritten element alike:
  /// torch.allclose's |got - want| <= 1e-2 + 1e-2 |want| (equal infinities close, a NaN never), and the max of
  /// |got - want| as torch computes it (a NaN difference makes it NaN).
  void heuristics(double got, double want);

  std::int64_t worst() const { return worst_; }
  std::int64_t vacuous() const { return vacuous_; }
  std::int64_t judged() const { return judged_; }

  /// The case's metrics, tier, vacuity and worst element from the tallies and the runs.
  void record_metrics(CaseResult& r, const RowRuns& runs) const;
  /// The case's checks: the envelope, the special values (`special_ok`: the passing check's text), non-finite,
  /// unwritten, guards, inputs and run-to-run.
  void record_checks(CaseResult& r, const RowRuns& runs, const Format& out, std::int64_t cols, const std::string& special_ok) const;

 private:
  std::int64_t unwritten_ = 0, first_unwritten_ = -1, special_bad_ = 0, first_special_ = -1, nonfinite_ = 0, first_nonfinite_ = -1;
  std::int64_t judged_ = 0, vacuous_ = 0, unjudged_ = 0, worst_ = -1, ref_overflow_ = 0, above_ = 0;
  std::string special_detail_;
  std::int64_t allclose_refused_ = 0;
  double heur_max_ = 0;
  bool heur_nan_ = false;
  double frac_max_ = 0, max_abs_ = 0, err2_ = 0, ref2_ = 0, ref_max_ = 0;
  std::vector<double> fracs_, ulps_;
};

}  // namespace fpcert
