// results/compare.hpp — what changed between two runs of the same suite (docs/report.md, "Run-to-run
// comparison"): cases matched by kernel and case id, verdicts that flipped, error fractions that grew
// beyond a stated factor, timings that changed beyond a stated factor. fpcert report OLD NEW and
// certify --compare OLD render it; everything is read from the runs' fields.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "results/results.hpp"

namespace fpcert {

/// Error fractions below this are compared as this: far from the gate, their changes do not matter.
inline constexpr double kCompareFracFloor = 0x1p-10;
/// A case's error fraction "grew" when new > factor * max(old, floor).
inline constexpr double kCompareGrowthFactor = 2;
/// A case's median time "changed" when new / old leaves [1 / factor, factor], both runs having timed the case at
/// least kCompareMinTimedRuns times (a median of one or two runs on a busy host is noise: the CPU models' default).
inline constexpr double kCompareSpeedFactor = 1.1;
inline constexpr int kCompareMinTimedRuns = 3;

struct CaseChange {
  std::string kernel, case_id;
  std::size_t old_index = 0, new_index = 0;  ///< the case's index in each run
  bool flipped = false;   ///< the status differs
  bool grew = false;      ///< err_frac_max grew beyond the growth factor
  bool shrank = false;    ///< err_frac_max shrank beyond it (for the record; never a regression)
  bool slower = false, faster = false;
  double frac_ratio = 0;  ///< new err_frac_max / max(old, floor); 0 when either case was not graded
  double time_ratio = 0;  ///< new median time / old; 0 when either was timed fewer than kCompareMinTimedRuns times
};

struct RunComparison {
  double growth_factor = kCompareGrowthFactor, speed_factor = kCompareSpeedFactor;
  std::size_t matched = 0;
  std::vector<CaseChange> changes;  ///< the matched cases with some change: flips first, then growth, then the rest (new run's order within)
  std::vector<std::size_t> only_old, only_new;                ///< indices of cases in one run only
  int count_flipped() const;
  int count_regressions() const;                              ///< pass -> anything else, and growth
};

/// Compare two runs. Cases are matched by (kernel, case id); a case listed twice matches its first.
RunComparison compare_runs(const RunResult& old_run, const RunResult& new_run, double growth_factor = kCompareGrowthFactor,
                           double speed_factor = kCompareSpeedFactor);

/// The runs a report compares: each run (new) with the latest earlier run (old) of the same suite that has cases in
/// common with it; conversion runs are never compared. Pairs (old index, new index), in the new run's order.
std::vector<std::pair<std::size_t, std::size_t>> comparable_runs(const std::vector<RunResult>& runs);

/// The comparison as a few lines of text (certify --compare and fpcert report print it).
std::string comparison_text(const RunComparison& d, const RunResult& old_run, const RunResult& new_run);

}  // namespace fpcert
