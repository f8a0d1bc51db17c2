// suites/mutation/mutation.hpp — the mutation score of a suite on a kernel: the suite run on every fault
// injector of the kernel (suites/ops/gemm/fault_injectors.hpp), each mutant judged killed for its own fault,
// killed by another check, surviving, or not applicable (docs/mutation.md).
//
// Cases run cheapest first (M N K, plus the K-chunk faults' kernel calls), each one on the unmutated kernel (unless
// its result is given: honest_result) and every mutant still alive, with one exact reference per case. A case the
// unmutated kernel does not pass judges no mutant (and, its result given, runs none). A mutant stops at its first
// kill for its own fault unless all_cases is set.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

struct MutationOptions {
  std::vector<Fault> faults;        ///< empty: every fault of the catalogue
  bool all_cases = false;           ///< run every case on every mutant (no stop at the first kill)
  SuiteRunOptions run;              ///< mn, variant, isolate, timeouts, only_case; the baseline and outputs are ignored
  FaultOptions inject;
  std::function<void(const std::string&)> on_progress;  ///< a progress line
  std::function<void(const CaseResult&)> on_honest_case;  ///< the unmutated kernel's result of each case it ran
  /// The unmutated kernel's result of a case when the caller already has it (certify's own pass over the suite, with
  /// at least as many runs), else null: a GEMM campaign then runs only the mutants on that case.
  std::function<const CaseResult*(const std::string& case_id)> honest_result;
  Environment* env = nullptr;       ///< when set: receives the environment stamp of the runs
};

/// Run the suite on every mutant of `kernel`. Throws InputError for an unknown kernel or a bad spec.
MutationScore run_mutation(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt);

/// The decisive checks that failed on a case. Results written before the runner recorded checks
/// carry none: for them the kinds are read off the runner's findings (guards, unwritten, non-finite,
/// special values, determinism, the gate as the envelope, crashed, hung).
std::vector<CheckKind> failed_checks(const CaseResult& c);

/// Register the mutant "<kernel>~<fault id>" of a kernel of any operation with fault injectors, so that the runner
/// (and the children of --isolate) make it by name. Returns the name. Throws InputError when `kernel` is unknown.
std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt = {});
/// A name "<kernel>~<fault id>" (as reports print them): register that mutant and return true; false
/// when the name has no '~'. Throws InputError for an unknown kernel or fault.
bool register_mutant_name(const std::string& name);

/// Parse a comma-separated list of fault ids (empty: every fault). Throws InputError naming the valid ids.
std::vector<Fault> parse_fault_list(const std::string& list);

}  // namespace fpcert
