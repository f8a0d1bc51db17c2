// reports/html/html.hpp — the HTML accuracy report: one self-contained file (inline CSS and SVG, no
// script, no network) with the verdict, the environment stamp, metric tables, the bound
// arithmetic of every gate, plots (error vs K, error vs kappa, ULP histograms, exponent heat map,
// conversion outcomes) and, for every failure, the reproduction command and the worst elements.
//
// Every number the report shows from the results is written as
//   <span class="v" data-src="r0" data-ptr="/cases/3/metrics/max_abs" data-value="1.2345e-05">1.234e-05</span>
// data-src names the document (r<i>: the i-th run as fpcert's results JSON, to_json(RunResult);
// c<i>: the i-th conversion record as read; a conversion case of a run points into its run,
// /cases/<j>/conversion/...), data-ptr is a JSON pointer (RFC 6901) into it,
// data-value the value in shortest round-trip form, and the text is printf "%.4g" of it (integers
// in full; booleans "yes"/"no"). A sum over documents carries data-sum="r0:/counts/fail r1:...".
// tests/reports/check_html.py verifies all of it against the JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/audit.hpp"
#include "results/conversion.hpp"
#include "results/diagnosis.hpp"
#include "results/experiment_record.hpp"
#include "results/fa_rule.hpp"
#include "results/results.hpp"

namespace fpcert {

/// What one report shows.
struct ReportInput {
  std::vector<RunResult> runs;
  std::vector<ConversionResult> conversions;
  std::vector<ExperimentRecord> experiments{};  ///< data-src e<i>: the i-th record as to_json writes it
  std::vector<DiagnosisRecord> diagnoses{};      ///< data-src d<i>: diagnosis_to_json of the i-th (failed cases, docs/diagnose.md)
  std::vector<AuditRecord> audits{};            ///< data-src a<i>: the i-th audit as audit_to_json writes it (fpcert audit)
  std::vector<FaRuleRecord> fa_rules{};         ///< data-src f<i>: FlashAttention's 2x rule beside fpcert (bench_attention*_fa_rule --json)
};

/// Read a results file into `in`: fpcert results (.json; or .jsonl, a crashed run's partial file),
/// conversion checks (one object of kind "conversion", an object with a "conversions" list, or
/// JSON lines of them), an experiment record (fpcert experiment --json), diagnoses (fpcert diagnose --json: one
/// object; certify --diagnose FILE: an array of them) an audit (fpcert audit --json: kind "audit") or FlashAttention's 2x rule beside fpcert
/// (bench_attention_fa_rule --json: kind "fa_rule"). Throws InputError naming
/// the file when it is none of them.
void read_report_file(const std::string& path, ReportInput& in);

std::string html_report(const ReportInput& in);
std::string html_report(const std::vector<RunResult>& runs);

/// Write the report atomically (base/atomic_file.hpp).
void write_html_report(const std::string& path, const ReportInput& in);
void write_html_report(const std::string& path, const std::vector<RunResult>& runs);

}  // namespace fpcert
