// suites/ops/attention_bwd/attention_bwd_runner.hpp — one attention backward case (docs/backward.md, "Attention
// backward"): Q, K, V, dO of an attention_bwd problem and the mask in the kernel's input format, O and LSE as the
// correctly rounded forward writes them (oracle/attention/attention_ref.hpp: O in the input format, LSE in fp32, fully
// masked rows' LSE as the kernel declares), each in a guarded buffer with padded leading dimensions; dQ, dK and dV
// pre-filled in one guarded buffer (rows of dQ, then dK, then dV); the kernel run under the runner's guards, repeated
// runs compared bit for bit (dQ run by run where the kernel declares run-to-run atomics: each run graded, the spread
// reported); every element of the graded rows judged against the correctly rounded gradient
// (oracle/attention/attention_bwd_ref.hpp) by the bound of the declared arithmetic
// (oracle/attention/attention_bwd_bound.hpp); fully masked queries' dQ exactly 0; unwritten outputs everywhere. Long cases
// are graded on sampled rows (dQ on query rows, dK and dV on key rows).
#pragma once

#include <cstdint>
#include <string>

#include "generators/problem.hpp"
#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/attention/attention_bwd_bound.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"

namespace fpcert {

/// Beyond this many multiply-adds of Q K^T the reference is computed on kAttentionBwdSampledRows rows of each output.
inline constexpr std::int64_t kAttentionBwdFullRefMacs = std::int64_t{1} << 28;
inline constexpr std::int64_t kAttentionBwdSampledRows = 256;

struct AttentionBwdCaseSetup {
  std::string suite, case_id;
  const Problem* problem = nullptr;  ///< an attention_bwd problem (generators/attention/attention_bwd.hpp)
  std::string repro;
  std::string family;
};

/// The bound's reading of a kernel's traits at a shape: the five GEMMs' envelope coefficients (suites/verdict/envelope.hpp)
/// at their depths (head_dim, head_dim, len_q times the group, len_k, len_q times the group) and the declared formats.
AttentionBwdArith attention_bwd_arith(const AttentionBwdTraits& t, std::int64_t head_dim, std::int64_t len_q, std::int64_t len_k,
                                      std::int64_t group);

CaseResult attention_bwd_skeleton(const AttentionBwdKernel& k, const AttentionBwdCaseSetup& s);
CaseResult run_attention_bwd_case(AttentionBwdKernel& kernel, const AttentionBwdCaseSetup& setup, DeviceApi& api, const RunOptions& opt);

}  // namespace fpcert
