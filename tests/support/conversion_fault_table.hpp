// tests/support/conversion_fault_table.hpp — the table of docs/diagnose.md, "Conversion faults", from the rows of
// measure_conversion_faults: every fault that changes a result must be killed by the conversions check and identified by
// the diagnosis; the tallies per fault and in all are printed (MESSAGE lines: the table). And one kernel's mutation score
// on the conversions suite, each mutant's outcome by fault.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::test {

inline int check_conversion_fault_table(const std::vector<ConversionFaultRow>& rows, std::size_t models) {
  struct Tally {
    int injected = 0, dormant = 0, killed = 0, identified = 0;
  };
  std::map<std::string, Tally> by_fault;
  Tally all;
  for (const ConversionFaultRow& r : rows) {
    CAPTURE(r.kernel);
    CAPTURE(r.fault);
    CAPTURE(r.top);
    for (Tally* t : {&by_fault[r.fault], &all}) {
      ++t->injected;
      if (r.dormant) {
        ++t->dormant;
        continue;
      }
      t->killed += r.killed;
      t->identified += r.identified;
    }
    if (r.dormant) continue;
    CHECK(r.killed);      // every result is checked bit for bit: a changed result is a failed case
    CHECK(r.identified);  // and the hypothesis of the fault reproduces every code
  }
  for (const auto& [fault, t] : by_fault)
    MESSAGE(fault << ": injected " << t.injected << ", dormant " << t.dormant << ", killed " << t.killed << ", identified " << t.identified);
  MESSAGE("all: " << models << " models, injected " << all.injected << ", dormant " << all.dormant << ", killed " << all.killed
                  << ", identified " << all.identified);
  return all.injected - all.dormant;
}

/// `fpcert mutate --suite conversions --kernel K`: every fault of the catalogue decided (none survives, a reason for each
/// not applicable), the unmutated kernel passing; each fault's outcome, and the score in `score`.
inline std::map<std::string, MutantOutcome> conversion_mutation_outcomes(const std::string& kernel, double* score = nullptr) {
  const SuiteInfo* suite = find_suite("conversions");
  REQUIRE(suite);
  const MutationScore s = run_mutation(*suite, kernel, MutationOptions{});
  CHECK(s.invalid_cases.empty());
  std::map<std::string, MutantOutcome> outcome;
  for (const MutantResult& m : s.mutants) {
    CAPTURE(m.fault);
    CAPTURE(m.detail);
    outcome[m.fault] = m.outcome;
    CHECK(m.outcome != MutantOutcome::Survived);
    if (m.outcome == MutantOutcome::NotApplicable) CHECK(!m.detail.empty());
  }
  CHECK(outcome.size() == conversion_fault_catalogue().size());
  if (score) *score = s.score();
  return outcome;
}

}  // namespace fpcert::test
