// suites/ops/elementwise/eltwise_runner.hpp — one elementwise case (docs/elementwise.md, "Checking a function"): its
// input set (every code of a 16-bit format, every fp32 code, a Philox sample of fp32 codes, the special and threshold
// inputs), the kernel run on them through the runner's guarded buffers, or, for every fp32 code of a device kernel,
// the device sweep; every result judged against the correctly rounded reference and the claim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

/// Which inputs a case checks (its spec: "eltwise:inputs=all", "eltwise:inputs=sample,n=262144,seed=7",
/// "eltwise:inputs=special").
struct EltwiseInputs {
  enum class Kind : std::uint8_t { All, Sample, Special } kind = Kind::All;
  std::uint64_t n = 0;   ///< Sample: how many
  std::uint64_t seed = 0;
  std::string spec() const;
};
/// Throws InputError on a malformed spec.
EltwiseInputs parse_eltwise_inputs(const std::string& spec);
/// How many inputs a case checks for a kernel whose input format is `in`.
std::uint64_t eltwise_input_count(const EltwiseInputs& s, const EltwiseTraits& t);
/// The input codes of a Sample or Special case (All: empty; the runner counts them).
std::vector<std::uint32_t> eltwise_input_codes(const EltwiseInputs& s, const EltwiseTraits& t);
/// A binary function's input pairs (eltwise_pairs.cpp): Special, every pair of the special values; Sample, the designed
/// Philox sample. All throws InputError (2^64 pairs).
void eltwise_input_pairs(const EltwiseInputs& s, const EltwiseTraits& t, std::vector<std::uint32_t>& x1, std::vector<std::uint32_t>& x2);

struct EltwiseCaseSetup {
  std::string suite, case_id, repro, family;
  EltwiseInputs inputs;
  /// Every code through the device sweep when the kernel offers it (the full suite); else through run().
  bool device_sweep = false;
};

CaseResult eltwise_skeleton(const ElementwiseKernel& k, const EltwiseCaseSetup& s);
CaseResult run_eltwise_case(ElementwiseKernel& kernel, const EltwiseCaseSetup& s, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
