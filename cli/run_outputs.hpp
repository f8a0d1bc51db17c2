// cli/run_outputs.hpp — what certify, run-suite and merge write from a run: the verdicts, --json,
// --junit and --html, and the exit code. One function, so a merged run writes exactly what a run in
// one process writes.
#pragma once

#include <string>
#include <vector>

#include "results/diagnosis.hpp"
#include "results/results.hpp"

namespace fpcert::cli {

struct OutputPaths {
  std::string json, junit, html;
};

/// Several suites' results as one: JSON carries every case (each names its suite), the notes and the
/// mutation scores; notes list the suites.
RunResult join_suites(const std::vector<RunResult>& per_suite);
/// The inverse: one result per suite (its cases and mutation scores, the notes), in the order the
/// suites are listed (a single-suite run: itself).
std::vector<RunResult> split_suites(const RunResult& r);
/// JUnit XML: one <testsuite> per suite.
std::string junit_all(const std::vector<RunResult>& per_suite);

/// What certify decides only over the whole run, applied where the run is whole (in one process, or
/// merged from its shards: docs/scale.md): a mutation score measured by one part is withdrawn when its
/// kernel failed a case of the suite anywhere ("not measured: the kernel itself failed", as in one
/// process), then, with `evidence`, the evidence rule (suites/run/suite.hpp, require_evidence), its
/// failures in the last suite.
void complete_certify(RunResult& r, bool evidence);

/// Print the tables (merged: every suite's rows and verdict, which nobody saw yet; else only the
/// all-suites line, the rest was printed as the cases ran), write the files asked for, and return the
/// exit code; a shard holding no case exits 0, any other run in which nothing was supported exits 3.
/// `old`: an earlier run of the same suite (certify --compare): its comparison with this one is printed
/// and the HTML report opens with it (docs/report.md). `diagnoses`: the failed cases' diagnoses (certify --diagnose),
/// a section of the HTML report (docs/diagnose.md).
int write_run_outputs(const RunResult& r, const OutputPaths& out, bool merged, const RunResult* old = nullptr,
                      const std::vector<DiagnosisRecord>* diagnoses = nullptr);

}  // namespace fpcert::cli
