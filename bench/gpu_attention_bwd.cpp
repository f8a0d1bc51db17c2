// bench/gpu_attention_bwd.cpp — the CUDA attention backward built-ins' speed beside cuBLAS GEMMs doing the same five
// products, measured side by side in one run: batch 1 x 8 heads x 4096 queries x 4096 keys x head dim 128, f16 (bf16
// for the bf16 kernels), random non-zero inputs and an LSE of 8.5 per row (P = e^(z - 8.5), finite and below 1 for
// these inputs); the median of 10 timed calls after 3 warm-ups (CUDA events, no copies; each call includes its
// workspace allocation, D's pass and, for the atomic kernels, dQ's buffer clear and conversion). The reference is what
// the fused kernel replaces at the least: per head S = Q K^T and dP = dO V^T (4096 x 4096 x 128) and dV = P^T dO,
// dQ = dS K, dK = dS^T Q (4096 x 128 x 4096) with cuBLAS (fp16 in, fp32 out, COMPUTE_32F), eight heads one call after
// the other, no exp and no elementwise work at all; FLOP = 10 B H Lq Lk D for all (causal: half). The naive f32 kernel
// is timed at 1024 tokens. No asserts; exits 0 with a message when there is no CUDA device.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpu_bench.hpp"
#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

using namespace fpcert;
using bench::DeviceBuffer;
using bench::random_codes;

namespace {

constexpr int kWarmups = 3, kTimed = 10;

/// One backward call on random codes of the kernel's input format; median ms.
double time_backward(AttentionBwdKernel& k, DeviceApi& api, const AttentionShape& s, CausalAlign causal) {
  const AttentionBwdTraits& t = k.attention_bwd_traits();
  const Format& in = *t.input;
  const std::size_t rows_q = static_cast<std::size_t>(s.batch * s.heads_q * s.len_q), rows_k = static_cast<std::size_t>(s.batch * s.heads_kv * s.len_k);
  const std::size_t nq = rows_q * static_cast<std::size_t>(s.head_dim), nk = rows_k * static_cast<std::size_t>(s.head_dim);
  const std::size_t b = static_cast<std::size_t>(container_bytes(in));
  DeviceBuffer q(api, nq * b), kk(api, nk * b), v(api, nk * b), o(api, nq * b), d_o(api, nq * b), lse(api, rows_q * 4);
  DeviceBuffer dq(api, nq * static_cast<std::size_t>(container_bytes(*t.dq_out))), dk(api, nk * static_cast<std::size_t>(container_bytes(*t.dk_out)));
  DeviceBuffer dv(api, nk * static_cast<std::size_t>(container_bytes(*t.dv_out)));
  std::uint64_t seed = 1;
  const std::pair<DeviceBuffer*, std::size_t> inputs[] = {{&q, nq}, {&kk, nk}, {&v, nk}, {&o, nq}, {&d_o, nq}};
  for (const auto& [buf, n] : inputs) {
    const auto h = random_codes(in, n, seed++);
    api.to_device(buf->p, h.data(), h.size());
  }
  const std::vector<float> hl(rows_q, 8.5f);
  api.to_device(lse.p, hl.data(), hl.size() * 4);
  AttentionBwdOperands ops;
  ops.shape = s;
  const std::int64_t d = s.head_dim;
  ops.q = q.p, ops.ldq = d, ops.k = kk.p, ops.ldk = d, ops.v = v.p, ops.ldv = d, ops.o = o.p, ops.ldo = d, ops.d_o = d_o.p, ops.lddo = d;
  ops.lse = lse.p;
  ops.causal = causal;
  ops.scale = 0.08838834764831845f;  // 1/sqrt(128) rounded to f32
  ops.dq = dq.p, ops.lddq = d, ops.dk = dk.p, ops.lddk = d, ops.dv = dv.p, ops.lddv = d;
  ops.stream = api.stream();
  return bench::median_ms([&] { k.run(ops); }, api, kWarmups, kTimed);
}

}  // namespace

int main() {
  const auto api = bench::open_device("bench_gpu_attention_bwd");
  if (!api) return 0;
  const AttentionShape s{1, 8, 8, 4096, 4096, 128};
  const double flop = 10.0 * s.batch * s.heads_q * s.len_q * s.len_k * s.head_dim;
  // The speed reference: per head the five GEMMs, cuBLAS fp16 in / fp32 out, COMPUTE_32F.
  const double t_sq = bench::time_gemm("cublas_gemm_f16_f32acc", *api, s.len_q, s.len_k, s.head_dim, kWarmups, kTimed);  // S, dP
  const double t_thin = bench::time_gemm("cublas_gemm_f16_f32acc", *api, s.len_k, s.head_dim, s.len_q, kWarmups, kTimed);  // dV, dQ, dK
  const double t_ref = static_cast<double>(s.batch * s.heads_q) * (2 * t_sq + 3 * t_thin);
  std::printf("shape: batch 1 x 8 heads x 4096 x 4096 x 128; median of %d after %d warm-ups\n", kTimed, kWarmups);
  std::printf("%-48s %10.3f ms %8.1f TFLOP/s (2 x %.3f ms [S, dP] + 3 x %.3f ms [dV, dQ, dK] per head, x 8 heads)\n",
              "cuBLAS five GEMMs (cublas_gemm_f16_f32acc)", t_ref, flop / t_ref * 1e-9, t_sq, t_thin);
  for (const char* name : {"attention_bwd_f16_flash_cuda", "attention_bwd_f16_flash_det_cuda", "attention_bwd_bf16_flash_cuda",
                           "attention_bwd_bf16_flash_det_cuda"})
    for (const CausalAlign c : {CausalAlign::None, CausalAlign::TopLeft}) {
      auto k = make_attention_bwd_kernel(name);
      if (!k) {
        std::printf("%-48s not registered\n", name);
        continue;
      }
      const double t = time_backward(*k, *api, s, c);
      const double f = c == CausalAlign::None ? flop : flop / 2;
      std::printf("%-48s %10.3f ms %8.1f TFLOP/s  ratio to cuBLAS's GEMMs %.2f (> 1: faster)\n",
                  (std::string(name) + (c == CausalAlign::None ? "" : " causal")).c_str(), t, f / t * 1e-9, t_ref / t);
    }
  const AttentionShape small{1, 8, 8, 1024, 1024, 128};
  if (auto naive = make_attention_bwd_kernel("attention_bwd_f32_naive_cuda")) {
    const double tn = time_backward(*naive, *api, small, CausalAlign::None);
    std::printf("%-48s %10.3f ms at 1 x 8 x 1024 x 1024 x 128 f32\n", "attention_bwd_f32_naive_cuda", tn);
  }
  return 0;
}
