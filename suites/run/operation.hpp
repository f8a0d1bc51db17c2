// suites/run/operation.hpp — the operation interface (docs/architecture.md, "Operations"): what the runner asks of
// each operation it runs (GEMM, conversion, reduction, and every one added after them), implemented once per
// operation in suites/ops/<operation>/ and listed in suites/operations.cpp.
//
// An operation brings its kernels' declaration (kernels/: the kernel class and its traits), and here: its built-in
// suites, the plan of a run (what sharding splits), the run of a suite — arguments laid out in guarded buffers,
// the exact reference, the per-element bound and, where an order is declared, the bitwise emulation, graded into
// CaseResults with their metrics —, the evidence certify requires of its kernels, its fault injectors and the
// mutation score they give. The runner (suites/run/suite.hpp) and the commands call only this interface; reports
// read the results model (results/), where each operation's record has its section.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

struct MutationOptions;  // suites/mutation/mutation.hpp
struct FaultOptions;     // suites/mutation/faults.hpp
enum class Fault : std::uint8_t;

class OperationRunner {
 public:
  virtual ~OperationRunner() = default;
  virtual Operation operation() const = 0;
  /// The built-in suites that grade this operation's kernels, in the order `fpcert suites` lists them.
  virtual std::vector<SuiteInfo> suites() const = 0;
  /// The (case, kernel) pairs run() runs, in its order, without generating anything; bad input throws as run() would.
  virtual std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels,
                                     const SuiteRunOptions& opt) const = 0;
  /// Run the suite on the kernels. Kernel failures become case statuses; bad input (unknown kernel, a kernel of
  /// another operation, a bad spec) throws InputError before anything runs.
  virtual RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const = 0;
  /// certify's evidence rule for this operation's kernels (suites/run/suite.hpp, require_evidence): add a failed
  /// "evidence" case for a kernel of `r` about whose error sources no case held evidence. Default: none required.
  virtual void require_evidence(RunResult& r) const { (void)r; }
  /// Whether the operation has fault injectors (a mutation score).
  virtual bool has_faults() const { return false; }
  /// The mutation score of a suite on a kernel of this operation (suites/mutation/mutation.hpp, run_mutation).
  virtual MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const;
  /// Register the mutant <kernel>~<fault> so that the runner makes it by name; returns the name.
  virtual std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const;
};

/// Every operation the runner knows, GEMM first (suites/operations.cpp).
std::span<const OperationRunner* const> operation_runners();
/// The operation's runner (every Operation has one).
const OperationRunner& operation_runner(Operation op);

}  // namespace fpcert
