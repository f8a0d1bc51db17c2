// suites/ops/gemm/gemm_operation.hpp — GEMM, C = A B, as an operation of the runner (suites/run/operation.hpp):
// its suites (suites/ops/gemm/gemm_suites.cpp), its case runner (suites/ops/gemm/runner.hpp), the evidence certify
// requires (docs/bound_model.md, "Evidence"), its fault injectors (suites/ops/gemm/fault_injectors.hpp) and
// mutation score (docs/mutation.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/verdict/sampled_reference.hpp"

namespace fpcert {

struct MutationOptions;

// The case data: a GEMM case's generated problem and exact reference, made once per process and shared
// by every run of the case: the kernels of one run_suite and every mutation campaign after it (issue 39, "a main job in
// a minute": `fpcert certify --kernel cuda` runs 36 campaigns, and each recomputed every case's reference).
//
// What is shared is what the case's spec, its sample and its batches determine bit for bit (generate() is reproducible,
// the reference exact and engine-independent: docs/oracle.md), so a result never depends on whether it came from the
// cache. The cache keeps the least recently used entries out once their bytes pass its budget: FPCERT_CASE_CACHE_MB
// (0 turns it off; default a quarter of the machine's memory, at most 8 GiB).
struct GemmCaseData {
  Problem problem;
  std::optional<GemmSample> sample;        ///< the graded rows and columns (a sampled reference), else none
  GemmRef ref;                             ///< exact, or of the sample's rows and columns
  std::optional<BatchProblems> batched;    ///< every batch's problem and reference (a strided batch case)
};

/// The case's data under sample spec `sspec` (the run's --sample, or the case's own): from the cache, or made now
/// (generate, the reference, the batches; the caller pins the floating-point environment first) and kept.
std::shared_ptr<const GemmCaseData> gemm_case_data(const CaseSpec& c, const SampleSpec& sspec);

/// The exact reference of the case's problem with A and B rounded into fa and fb by r (round_values: the inputs as a
/// kernel with those input formats receives them; grade's ref', GradeInput::inputs_ref), kept in the same cache as the
/// case's data, so that every kernel and mutant with these formats shares one.
std::shared_ptr<const GemmRef> gemm_inputs_reference(const CaseSpec& c, const SampleSpec& sspec, const GemmCaseData& data, const Format& fa,
                                                     const Format& fb, Rounding r);

/// A block-scaled kernel's reference of the case's whole problem (block_reference: its inputs rounded into the input
/// formats, quantized by t.block, dequantized, multiplied exactly), kept in the same cache under everything of t that
/// decides it (input formats and rounding, the block format, scale rule, element rounding and block length, the operand
/// formats), so that a kernel's mutants and the kernels that quantize alike share one.
std::shared_ptr<const BlockReference> gemm_block_reference(const CaseSpec& c, const SampleSpec& sspec, const GemmCaseData& data,
                                                           const KernelTraits& t);

/// The bitwise tier's emulator output for a kernel on the case's whole problem (GradeInput::emulated), or `make`'s,
/// kept in the same cache under the case, the kernel (a mutant's: the kernel it was made from, whose traits it declares)
/// and its traits (describe_traits), so that the live mutants a campaign grades on one case share one emulation.
std::shared_ptr<const Emulated> gemm_emulation(const CaseSpec& c, const SampleSpec& sspec, const std::string& kernel, const KernelTraits& t,
                                               const std::function<Emulated()>& make);

struct GemmCaseCacheStats {
  std::int64_t hits = 0, misses = 0;                     ///< cases' data and references
  std::int64_t emulation_hits = 0, emulation_misses = 0;  ///< gemm_emulation's
  /// The misses' time: made here (generated, the exact references, the emulations), or read from the host store
  /// (FPCERT_CASE_STORE: another --devices worker made them; the wait included), and how many were read.
  double made_seconds = 0, read_seconds = 0;
  std::int64_t store_reads = 0;
  double case_data_seconds = 0;  ///< in gemm_case_data (outside the cases' wall_seconds; hits included)
  std::size_t bytes = 0, budget = 0, entries = 0;
};
GemmCaseCacheStats gemm_case_cache_stats();
/// The cache's budget without FPCERT_CASE_CACHE_MB: a quarter of the machine's memory, at most 8 GiB.
std::size_t gemm_case_cache_default_budget();
/// The budget of each of `processes` that share a host (a --devices parent's workers): their part of a quarter of the
/// memory, at most 8 GiB each. Not the 8 GiB divided: 16 workers would get 512 MiB each, less than one 4096 x 4096
/// case's data (554 MB: its exact reference), which every kernel and mutant would then make again.
std::size_t gemm_case_cache_share(int processes);
/// Drops every entry and zeroes the counts (tests).
void clear_gemm_case_cache();

/// The built-in GEMM suites, in the order `fpcert suites` lists them.
std::vector<SuiteInfo> gemm_suites();

/// The mutation score of a suite on a GEMM kernel (suites/mutation/mutation.hpp, run_mutation, dispatches here).
MutationScore run_gemm_mutation(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt);

class GemmOperation final : public OperationRunner {
 public:
  Operation operation() const override { return Operation::Gemm; }
  std::vector<SuiteInfo> suites() const override { return gemm_suites(); }
  std::vector<PlanItem> plan(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  RunResult run(const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& opt) const override;
  void require_evidence(RunResult& r) const override;
  bool has_faults() const override { return true; }
  MutationScore mutate(const SuiteInfo& suite, const std::string& kernel, const MutationOptions& opt) const override {
    return run_gemm_mutation(suite, kernel, opt);
  }
  std::string register_mutant(const std::string& kernel, Fault f, const FaultOptions& opt) const override;
};

}  // namespace fpcert
