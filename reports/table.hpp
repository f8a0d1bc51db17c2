// reports/table.hpp — results as terminal tables: one row per case, then the verdict.
#pragma once

#include <string>

#include "results/results.hpp"

namespace fpcert {

/// Columns: case, kernel, status, max abs err, Frobenius, max ULP, gate fraction, time, vs baseline.
std::string case_table(const RunResult& r);
/// One row (the same columns) for printing as cases finish.
/// One row per case: GEMM columns (errors, gate, time), or for a conversion case its patterns,
/// mismatches, NaN differences and time.
std::string case_row(const CaseResult& c);
std::string case_header();
std::string conversion_case_header();
/// "CERTIFIED: 12 cases passed" / "FAILED: ..." with every failing case and its reason, the bound
/// arithmetic of the first failure, and its reproduction command.
std::string verdict_text(const RunResult& r);
/// The coverage table: each coverage class a case of the run declares (CaseResult::coverage), and the
/// cases that cover it with their status ("shape.prime  primes (pass), ..."); "" when no case declares one.
std::string coverage_table(const RunResult& r);

/// Where the orders came from when a run used orders from outside the declarations (certify --order
/// revealed / FILE): per kernel and shape, the revealed trees, what they cost and checked, the cases that
/// used them and those that fell back, with why. Empty when no case carries an order record.
std::string order_text(const RunResult& r);
/// The run-to-run spread of every case whose kernel declares run-to-run nondeterminism (CaseResult::spread): later
/// runs that differ, elements, the largest difference in ulps and against what the declared arithmetic allows, the
/// order-free elements held in every run. Empty when no case carries a spread.
std::string spread_text(const RunResult& r);
/// A short number for tables: 3 significant digits, "inf", "-" for NaN.
std::string short_num(double v);

}  // namespace fpcert
