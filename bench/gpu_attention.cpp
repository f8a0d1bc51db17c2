// bench/gpu_attention.cpp — the CUDA flash attention built-in's speed beside cuBLAS's two GEMMs of the same shape, measured
// side by side in one run: batch 1 x 8 heads x 4096 queries x 4096 keys x head dim 128, f16, random non-zero inputs; the
// median of 10 timed launches after 3 warm-ups (CUDA events, no copies). The reference is what the fused kernel replaces
// at the least: per head S = Q K^T (4096 x 4096 x 128) and O = P V (4096 x 128 x 4096) with cuBLAS (fp16 in, fp32 out,
// COMPUTE_32F), eight heads one call after the other, no softmax at all; FLOP = 4 B H Lq Lk D for both (causal: half).
// The FP8 kernel (e4m3 in, bf16 out, unit descales) beside them. The naive f32 kernel is timed at 1024 tokens. Exits 0 with a message when there is no CUDA device.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpu_bench.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

using namespace fpcert;
using bench::DeviceBuffer;
using bench::random_codes;

namespace {

constexpr int kWarmups = 3, kTimed = 10;

/// One attention call on random codes of the kernel's input format; median ms.
double time_attention(AttentionKernel& k, DeviceApi& api, const AttentionShape& s, CausalAlign causal) {
  const Format& in = *k.attention_traits().input;
  const Format& out = *k.attention_traits().out;
  const std::size_t nq = static_cast<std::size_t>(s.batch * s.heads_q * s.len_q * s.head_dim);
  const std::size_t nk = static_cast<std::size_t>(s.batch * s.heads_kv * s.len_k * s.head_dim);
  DeviceBuffer q(api, nq * container_bytes(in)), kk(api, nk * container_bytes(in)), v(api, nk * container_bytes(in));
  DeviceBuffer o(api, nq * container_bytes(out)), lse(api, static_cast<std::size_t>(s.batch * s.heads_q * s.len_q) * 4);
  const auto hq = random_codes(in, nq, 1), hk = random_codes(in, nk, 2), hv = random_codes(in, nk, 3);
  api.to_device(q.p, hq.data(), hq.size());
  api.to_device(kk.p, hk.data(), hk.size());
  api.to_device(v.p, hv.data(), hv.size());
  AttentionOperands ops;
  ops.shape = s;
  ops.q = q.p, ops.ldq = s.head_dim, ops.k = kk.p, ops.ldk = s.head_dim, ops.v = v.p, ops.ldv = s.head_dim;
  ops.causal = causal;
  ops.scale = 0.08838834764831845f;  // 1/sqrt(128) rounded to f32
  ops.o = o.p, ops.ldo = s.head_dim, ops.lse = lse.p;
  ops.stream = api.stream();
  return bench::median_ms([&] { k.run(ops); }, api, kWarmups, kTimed);
}

}  // namespace

int main() {
  const auto api = bench::open_device("bench_gpu_attention");
  if (!api) return 0;
  const AttentionShape s{1, 8, 8, 4096, 4096, 128};
  const double flop = 4.0 * s.batch * s.heads_q * s.len_q * s.len_k * s.head_dim;
  // The speed reference: per head the two GEMMs, cuBLAS fp16 in / fp32 out, COMPUTE_32F.
  const double t_qk = bench::time_gemm("cublas_gemm_f16_f32acc", *api, s.len_q, s.len_k, s.head_dim, kWarmups, kTimed);
  const double t_pv = bench::time_gemm("cublas_gemm_f16_f32acc", *api, s.len_q, s.head_dim, s.len_k, kWarmups, kTimed);
  const double t_ref = static_cast<double>(s.batch * s.heads_q) * (t_qk + t_pv);
  std::printf("shape: batch 1 x 8 heads x 4096 x 4096 x 128, f16; median of %d after %d warm-ups\n", kTimed, kWarmups);
  std::printf("%-44s %10.3f ms %8.1f TFLOP/s (S = Q K^T %.3f ms + P V %.3f ms per head, x 8 heads)\n",
              "cuBLAS two GEMMs (cublas_gemm_f16_f32acc)", t_ref, flop / t_ref * 1e-9, t_qk, t_pv);
  for (const char* name : {"attention_f16_flash_cuda", "attention_bf16_flash_cuda", "attention_e4m3_flash_cuda"})
    for (const CausalAlign c : {CausalAlign::None, CausalAlign::TopLeft}) {
      auto k = make_attention_kernel(name);
      const double t = time_attention(*k, *api, s, c);
      const double f = c == CausalAlign::None ? flop : flop / 2;
      std::printf("%-44s %10.3f ms %8.1f TFLOP/s  ratio to cuBLAS's GEMMs %.2f (> 1: faster)\n",
                  (std::string(name) + (c == CausalAlign::None ? "" : " causal")).c_str(), t, f / t * 1e-9, t_ref / t);
    }
  const AttentionShape small{1, 8, 8, 1024, 1024, 128};
  auto naive = make_attention_kernel("attention_f32_naive_cuda");
  const double tn = time_attention(*naive, *api, small, CausalAlign::None);
  std::printf("%-44s %10.3f ms at 1 x 8 x 1024 x 1024 x 128 f32\n", "attention_f32_naive_cuda", tn);
  return 0;
}
