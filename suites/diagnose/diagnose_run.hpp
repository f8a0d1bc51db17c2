// suites/diagnose/diagnose_run.hpp — a kernel run on cases for a diagnosis (the runner's own case run: guarded buffers,
// the checks, the output), the diagnosis of a registered kernel on a suite case or a generator spec, and the
// identification measure over the faults `fpcert selftest` injects into the CPU models (docs/diagnose.md).
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/results.hpp"
#include "suites/diagnose/diagnose.hpp"

namespace fpcert {

struct BatchProblems;  // suites/ops/gemm/batch.hpp
struct CaseSpec;       // suites/run/suite.hpp
struct GemmRef;        // oracle/gemm_ref.hpp
struct Problem;        // generators/problem.hpp

/// The runner's own case run of suite case `cs` (problem `p`, its exact reference `ref`; guarded buffers, every check)
/// for a diagnosis: `got` receives the checked run's output (row-major m x n, batch after batch). `whole`: with the
/// case's layout, alpha/beta, batches (`batches`: every batch's problem) and epilogue; else as a plain GEMM of its
/// problem. Throws InputError when no device serves the kernel or it did not run.
CaseResult run_spec_for_diagnosis(GemmKernel& k, const std::string& suite, const CaseSpec& cs, const Problem& p, const GemmRef& ref,
                                  std::vector<double>& got, const BatchProblems* batches = nullptr, bool whole = false);

/// The case `c` (a case id of `suite`, with the suite's cases made for this kernel, or a generator spec, which holds a
/// ':'), run by the runner; `status` receives its result (checks, verdict). Throws InputError when the case is unknown
/// or the kernel did not run on it.
DiagnoseCase run_for_diagnosis(GemmKernel& k, const std::string& suite, const std::string& c, CaseResult* status = nullptr);

struct DiagnoseKernelOptions {
  std::string kernel;
  std::string suite = "certify";
  std::vector<std::string> cases;  ///< the first is diagnosed; the rest separate look-alikes
  bool auto_separate = true;       ///< when the top hypothesis has look-alikes, add the suite's separating cases
  /// The kernel judged against another kernel's declaration (its traits replace the kernel's own): cuBLAS's fp32 GEMM
  /// with TF32 allowed against the pedantic fp32 declaration, a study of what a declaration should have said.
  std::string declared_as;
  DiagnoseOptions opt;
};

/// Diagnose a registered kernel (runs it). The record carries the first case's failed checks and the faults of the
/// catalogue that a failed memory or determinism check names.
DiagnosisRecord diagnose_kernel(const DiagnoseKernelOptions& o);
/// The same for a kernel object (a mutant, a Python callable).
DiagnosisRecord diagnose_kernel(GemmKernel& k, const DiagnoseKernelOptions& o);

/// One injected fault of the identification measure.
struct IdentificationRow {
  std::string model, fault;
  bool identified = false;
  std::string top;     ///< the top hypothesis (or "checks: <check>")
  std::string reason;  ///< for a miss: the verdict
  double seconds = 0;
  bool dormant = false;  ///< the fault changed nothing on the cases (or the model is not diagnosed): not counted
};
/// The cases the measure diagnoses a mutant of a model with these traits on (specs: uniform with K past 256 and M, N
/// no multiple of 16; subnormal A; special values).
std::vector<std::string> identification_cases(const KernelTraits& t);
/// Every applicable fault of the catalogue injected into each model (default: every built-in CPU GEMM model),
/// diagnosed on identification_cases; `faults` empty: all.
std::vector<IdentificationRow> measure_identification(const std::vector<std::string>& models, const std::vector<Fault>& faults = {},
                                                      const DiagnoseOptions& opt = {});

/// certify --diagnose (docs/diagnose.md): every failed GEMM case of the run diagnosed (the kernel rerun on that case
/// alone; a failed conversion case: the host kernel rerun on every code, a 32-bit source's strided sample), and each GEMM kernel whose cases all passed diagnosed on one of them (a uniform case first) for the hint: kept
/// (and noted in the run, notes["diagnosis hint: K"]) only when a more precise arithmetic than declared reproduces it bit
/// for bit. A case that cannot be diagnosed adds a line to `unavailable` saying why.
std::vector<DiagnosisRecord> diagnose_run_cases(RunResult& r, std::vector<std::string>& unavailable);

}  // namespace fpcert
