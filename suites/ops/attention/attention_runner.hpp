// suites/ops/attention/attention_runner.hpp — one attention case (docs/attention.md, "Certifying a kernel"): Q, K, V and
// the additive mask of an attention problem in the kernel's formats in guarded buffers with padded leading dimensions;
// O and LSE pre-filled and guarded; the kernel run under the runner's guards, repeated runs compared bit for bit (O and
// LSE); every element of O and every LSE of the graded rows judged against the correctly rounded reference
// (oracle/attention/attention_ref.hpp) by the per-element bound of the kernel's declared arithmetic
// (oracle/attention/attention_bound.hpp); fully masked rows by the declared policies; unwritten outputs everywhere.
// Long cases (more than kAttentionFullRefMacs multiply-adds) are graded on sampled rows (attention_sample_rows).
#pragma once

#include <cstdint>
#include <string>

#include "generators/problem.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/attention/attention_bound.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

/// Beyond this many multiply-adds of Q K^T the reference is computed on kAttentionSampledRows rows only.
inline constexpr std::int64_t kAttentionFullRefMacs = std::int64_t{1} << 28;
inline constexpr std::int64_t kAttentionSampledRows = 512;

struct AttentionCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< an attention problem (generators/attention/attention.hpp)
  std::string repro;
  std::string family;
};

/// The bound's reading of a kernel's traits at a shape: the two GEMMs' envelope coefficients (suites/verdict/envelope.hpp)
/// at depth head_dim and len_k, and the softmax's declarations.
AttentionArith attention_arith(const AttentionTraits& t, std::int64_t head_dim, std::int64_t len_k);

CaseResult attention_skeleton(const AttentionKernel& k, const AttentionCaseSetup& s);
CaseResult run_attention_case(AttentionKernel& kernel, const AttentionCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
