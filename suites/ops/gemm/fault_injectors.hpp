// suites/ops/gemm/fault_injectors.hpp — fault injectors: any GEMM kernel (CPU model, CUDA kernel, cuBLAS,
// plugin) wrapped as a kernel with one injected fault, for measuring what a suite refuses
// (`fpcert mutate`, docs/mutation.md).
//
// An injector claims exactly the wrapped kernel's traits (the fault is what the suite must notice
// without being told), runs in the wrapped kernel's memory space and moves data only through a
// DeviceApi of that space, so it needs no CUDA header. Every fault is realised from calls of the
// wrapped kernel as a black box: inputs changed before the call (a kernel that loads them wrongly),
// outputs changed after it (a kernel that stores them wrongly), or the kernel run on chunks of K
// whose partial results are combined on the host in the faulty arithmetic (a kernel whose
// accumulator is wrong). docs/mutation.md derives why each realisation is the fault it claims.
#pragma once

#include <memory>
#include <string>

#include "kernels/kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// The mutant "<wrapped name>~<fault id>": the wrapped kernel with the fault injected.
std::unique_ptr<GemmKernel> make_fault_injector(std::unique_ptr<GemmKernel> wrapped, Fault f, const FaultOptions& opt = {});

/// Register the GEMM mutant under mutant_name(kernel, f) (its factory wraps a fresh make_gemm_kernel(kernel)), so
/// that the runner, and the children of --isolate, make it by name (suites/mutation/mutation.hpp, register_mutant,
/// for any operation). Returns the name. Throws InputError when `kernel` is unknown.
std::string register_gemm_mutant(const std::string& kernel, Fault f, const FaultOptions& opt = {});

/// How often a mutant ran in this process and how often its fault changed anything (an injected fault
/// can be dormant on a case: no subnormal to flush, lda equal to K, no partial tile). Counted per
/// mutant name; children of --isolate count in their own process (the parent sees nothing).
struct FaultActivity {
  int runs = 0;
  int active = 0;
  /// Runs whose "not active" does not mean the wrapped kernel's own outputs (the accumulator faults count a call split
  /// into chunks as active, whatever the bits; the others but the output edits, the input edits and the batch and beta
  /// conditions): ScopedDormantVerdicts grades those always.
  int inexact = 0;
};
FaultActivity fault_activity(const std::string& mutant);
void reset_fault_activity(const std::string& mutant);

/// While one lives (a mutation campaign, suites/ops/gemm/gemm_mutation.cpp): a mutant of a deterministic kernel whose
/// fault changed nothing in any run of a case gave the unmutated kernel's outputs, and the campaign judges mutants only
/// on cases that kernel passed, so the runner gives it that pass without grading the same outputs again
/// (suites/ops/gemm/runner.cpp; the case carries a flag saying so). Outside a campaign every case is graded.
class ScopedDormantVerdicts {
 public:
  ScopedDormantVerdicts();
  ~ScopedDormantVerdicts();
  ScopedDormantVerdicts(const ScopedDormantVerdicts&) = delete;
  ScopedDormantVerdicts& operator=(const ScopedDormantVerdicts&) = delete;
};
bool dormant_verdicts();

}  // namespace fpcert
