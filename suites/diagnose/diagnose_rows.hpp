// suites/diagnose/diagnose_rows.hpp — the diagnosis of a reduction, softmax or LayerNorm/RMSNorm kernel's output
// (docs/diagnose.md, "Reductions, softmax and normalisation"): the kernel and every hypothesis of row_hypotheses.hpp run
// on the operation's suite cases through the operation's own case runner; each hypothesis's share of elements bit for
// bit, its envelope (the derived bound, judged on the kernel's output) and its residual; ranked, and said in the GEMM
// diagnosis's record: "declared", "consistent with <hypothesis>", or "logic_error" with the first unexplained elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/diagnosis.hpp"
#include "results/results.hpp"
#include "suites/diagnose/row_hypotheses.hpp"

namespace fpcert {

/// A kernel's results on the cases: per case its id, the checked run's output decoded to double (row-major; empty
/// when the case was not run) and the runner's record.
struct RowRun {
  std::vector<std::string> case_ids;
  std::vector<std::vector<double>> out;
  std::vector<CaseResult> results;
};

/// Run registered kernel `kernel` on the cases `cases` (case ids; empty: every case) of `suite` as the operation reads
/// it (certify, quick: the operation's suite and its quick one). InputError for an unknown case id.
RowRun run_row_kernel(const std::string& kernel, const std::string& suite, const std::vector<std::string>& cases);

/// A hypothesis with its results on the cases, and (filled per kernel) the elements the kernel's output leaves beyond
/// its envelope (-1: no envelope, a fault is not an arithmetic).
struct RowHypothesis {
  RowHypothesisSpec spec;
  RowRun run;
  std::int64_t envelope_exceed = -1;
};

/// The hypotheses of `base` run on the cases (made once, reused for every kernel made from the same base).
struct RowHypothesisSet {
  std::string base, suite;
  std::vector<std::string> cases;  ///< as asked (empty: every case)
  std::vector<RowHypothesis> hs;   ///< "declared" first
  std::vector<std::string> notes;
};
RowHypothesisSet row_hypothesis_set(const std::string& base, const std::string& suite, const std::vector<std::string>& cases);

/// Rank the hypotheses against the kernel's results, values of `out` (no kernel runs here). The declared hypothesis's envelope is the
/// kernel's own verdict's (its runner's bound on every case); the others' as set in `hs`. "declared" when the declared
/// arithmetic (or a look-alike of it) is top and reproduces at least `consistent` of the elements, every element or
/// within the declared envelope everywhere; "consistent" when
/// another hypothesis does; otherwise "declared" again if the kernel is within its declared envelope everywhere (no
/// known arithmetic bit for bit, said so), else "logic_error" with the first elements no hypothesis reproduces
/// (DiagnosisElement: i the row or vector, j the column, got the kernel's value, ref the declared model's, best the top
/// hypothesis's). Look-alikes: hypotheses whose results are equal on every case (DiagnosisHypothesis::same_as).
DiagnosisRecord diagnose_rows(const std::string& kernel, const std::string& declared, const Format& out, const RowRun& got,
                              const RowHypothesisSet& hs, int top = 8, int unexplained = 5, double consistent = 0.9);

/// The whole diagnosis of a registered kernel: its base, the hypotheses, the kernel's run, each variant's envelope on
/// the kernel's output, the ranking. `cached` (same base, suite and cases) is used instead of running the hypotheses again.
/// `declared_as`: judge the kernel against that kernel's declaration (same operation): the hypotheses made from it, the
/// declared envelope its bound on the kernel's output.
DiagnosisRecord diagnose_row_kernel(const std::string& kernel, const std::string& suite, const std::vector<std::string>& cases, int top = 8,
                                    const RowHypothesisSet* cached = nullptr, const std::string& declared_as = "");

struct RowIdentificationRow {
  std::string model, fault, top, kind;
  double top_fraction = 0;
  double seconds = 0;  ///< the diagnosis, the model's hypotheses already run (row_hypothesis_set, once per model)
  bool identified = false;
  bool dormant = false;  ///< the fault changes no result on these cases: not counted
  std::vector<std::string> alike;  ///< hypotheses indistinguishable from the top one on every case
};
/// Every applicable fault of the catalogue (or those in `faults`, when not empty) injected into each model and diagnosed
/// on its suite cases: identified when the top hypothesis (or a look-alike) is the fault's own.
std::vector<RowIdentificationRow> measure_row_identification(const std::vector<std::string>& models, const std::vector<Fault>& faults,
                                                             const std::string& suite, const std::vector<std::string>& cases = {});

}  // namespace fpcert
