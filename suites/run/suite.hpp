// suites/run/suite.hpp — suites: named lists of cases (GEMM suites: a generator spec and a gate variant
// each; the conversions suite: one case per conversion kernel, suites/ops/conversion/conversion_suite.hpp), and
// running them over kernels, with references computed once per problem, baseline comparison,
// isolation in child processes (suites/run/isolate.hpp), and results written case by case.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/verdict/bound.hpp"
#include "suites/verdict/sampled_reference.hpp"
#include "suites/run/case_run.hpp"
#include "suites/run/check_options.hpp"

namespace fpcert {

struct CaseSpec {
  std::string id;
  std::string spec;  ///< generator spec string
  BoundVariant variant = BoundVariant::Independent;
  std::string note;  ///< what the case is for
  std::string family = {};        ///< the cases it is plotted with (results/results.hpp)
  CaseAxis axis = CaseAxis::None;  ///< what varies within the family
  std::vector<std::string> covers = {};  ///< coverage classes it exercises (docs/suites.md, "Coverage classes")
  bool misaligned = false;  ///< A and B one element off alignment (CaseSetup::misaligned)
  int min_runs = 0;         ///< at least this many runs after the checked one (CaseSetup::min_runs)
  std::int64_t ld_pad = 0;  ///< padding columns of A and B (CaseSetup::ld_pad); 0: the runner's padded_ld
  SampleSpec sample = {};    ///< graded on a sampled exact reference (suites/verdict/sampled_reference.hpp)
  GemmLayout layout = {};    ///< how A, B and C are stored (CaseSetup::layout; docs/suites.md, "layout.transposes")
  AlphaBetaCase alpha_beta = {};  ///< D = alpha AB + beta C (CaseSetup::alpha_beta; docs/suites.md, "epilogue.alpha_beta")
  BatchCase batch = {};           ///< strided batches (CaseSetup::batch; docs/suites.md, "batch.strided")
  EpilogueCase epilogue = {};     ///< the fused epilogue (CaseSetup::epilogue; docs/suites.md, "epilogue.*")
};

/// What a suite's cases may depend on.
struct SuiteContext {
  bool device = false;              ///< the kernels under test run on a GPU (full sizes)
  std::optional<std::int64_t> mn;   ///< override M = N
  const KernelTraits* traits = nullptr;  ///< the (first) kernel under test, for format-dependent cases
  std::vector<const KernelTraits*> all;  ///< every kernel of the run (and the baseline): ranges must suit them all
};

struct SuiteInfo {
  std::string name;
  std::string description;
  std::function<std::vector<CaseSpec>(const SuiteContext&)> cases;  ///< GEMM suites
  Operation operation = Operation::Gemm;  ///< the kernels it grades
  /// certify measures the mutation score on this suite (false: the scale suite, whose cases take minutes each; its
  /// faults are the certify suite's, measured there).
  bool mutation_score = true;
};

/// Every built-in suite: each operation's (suites/run/operation.hpp), GEMM's first (suites/ops/gemm/gemm_suites.cpp).
const std::vector<SuiteInfo>& builtin_suites();
const SuiteInfo* find_suite(const std::string& name);
std::string suite_names();
/// Whether a case id answers --case: equal to it, or, for a pattern ending in '*', starting with what precedes it
/// (order_free_* picks the kernel's order_free_<storage> whatever its storage format).
bool case_matches(const std::string& pattern, const std::string& id);

struct SuiteRunOptions {
  RunOptions run;
  std::string only_case;           ///< --case ID: run just this case (ID ending in '*': every case with that prefix)
  std::optional<std::int64_t> mn;  ///< --mn: override M = N of the suite's GEMM cases
  std::optional<BoundVariant> variant;  ///< override every case's gate variant
  bool isolate = false;            ///< each (case, kernel) in a child process
  double isolate_timeout_s = 600;  ///< a child that runs longer is killed and its case marked hung
  std::string baseline;            ///< --baseline B: gate "error within factor of B's"
  double baseline_factor = 2;
  std::string jsonl_path;          ///< cases appended here as they finish (crash-safe)
  bool jsonl_append = false;       ///< keep what jsonl_path holds (else it is started afresh)
  std::string command;             ///< for the environment stamp and reproduction lines
  std::string repro_prefix;        ///< e.g. "fpcert certify --suite quick": "--kernel K --case ID" is appended
  std::function<void(const CaseResult&)> on_case;  ///< progress (called as each case finishes)
  std::function<void(const std::string&)> on_progress;  ///< a progress line ("[3/12] ...")
  /// Run only the (case, kernel) pairs this accepts (a shard's part of the plan; docs/scale.md); empty:
  /// every pair. A case none of whose pairs is selected is not generated.
  std::function<bool(const std::string& case_id, const std::string& kernel)> select;
  /// --sample ROWS[,COLS]: grade every GEMM case on a sampled exact reference (a case's own sample otherwise).
  SampleSpec gemm_sample;
  // Conversion suites.
  bool sample = false;              ///< fp32-sized sources: the strided sample, not every code
  ConversionCheckOptions conversion;  ///< how results are compared
};

/// One (case, kernel) pair of a suite's run, as run_suite would run it, with what sharding needs.
struct PlanItem {
  std::string suite, case_id, kernel;
  std::string spec;   ///< the case's generator spec
  double cost = 0;    ///< estimated cost (estimated_case_cost), the same on every machine
};

/// The pairs run_suite(suite, kernels, opt) runs, in its order, without generating anything (bad
/// input throws as run_suite would). Every process that plans the same command gets the same list.
std::vector<PlanItem> plan_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt);

/// A machine-independent estimate of a case's cost from its spec alone: m n k for a GEMM, the length
/// for a dot product (the exact reference dominates either way), plus a constant per case.
double estimated_case_cost(const std::string& spec);

/// Run the suite on each kernel (and the baseline). Kernel failures become case statuses; bad
/// input (unknown kernel, bad spec, a kernel of the other operation) throws InputError before
/// anything runs. A conversion suite runs through suites/ops/conversion/conversion_suite.hpp.
RunResult run_suite(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt);

/// certify fails a kernel for which no case holds evidence of one of its error sources (a case whose
/// verdict is vacuous, or that never exercised the source, proves nothing about it): one failed case
/// ("evidence") per such kernel, naming the sources (docs/bound_model.md, "Evidence"). `fpcert certify`
/// and the Python entry's fpcert.certify apply it.
void require_evidence(RunResult& r);

/// The environment stamp of a run: the host's facts and, when a kernel ran on a device, the device's, read from
/// `dev` or, when the parent never touched the device (--isolate: CUDA does not survive fork()), in a child; a part of
/// a run that ran nothing on the device after this process did (a suite none of whose cases a worker holds) takes
/// the facts this process read last. `in_process`: this process runs its kernels itself (no --isolate), so it may read
/// the device's facts without a child.
Environment run_environment(const std::string& command, const DeviceApi* dev, bool any_device, bool in_process = false);

}  // namespace fpcert
