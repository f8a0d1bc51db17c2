// kernels/attention/cuda/attention_bwd_naive.cuh — the device code of the naive f32 attention backward built-in
// (kernels/attention/cuda/attention_bwd_cuda.cu): on the CUDA cores, one thread per output element, every sum an fmaf
// chain from +0 in a stated order, every other binary32 operation rounded to nearest once (flash_kernel.cuh's wrappers):
//   D (bwd_dot of attention_bwd_kernel.cuh);
//   naive_bwd_p:  per (row, key): x = q . k (head dim ascending), z = RN(RN(s x) + mask), P = expf(RN(z - LSE)) (0 where
//                 causally masked or the row fully masked, LSE +-Inf), dP = dO . v (head dim ascending),
//                 dS = RN(P RN(dP - D)); P and dS kept in f32;
//   naive_bwd_dq: dQ_ic = RN(s sum_j dS_ij k_jc) (keys ascending);
//   naive_bwd_dkv: dK_jc = RN(s sum dS_ij q_ic), dV_jc = sum P_ij dO_ic (the group's query heads ascending, then queries
//                 ascending: one chain).
// With FPCERT_MMA_EMULATION defined it compiles as host C++.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/attention/cuda/attention_bwd_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

#if defined(FPCERT_MMA_EMULATION)
inline float bwd_expf(float x) { return std::exp(x); }
#else
__device__ __forceinline__ float bwd_expf(float x) { return expf(x); }  // 2 ulp (CUDA C++ Programming Guide); no fast math
#endif

struct NaiveBwdArgs {
  std::int64_t len_q, len_k, heads_q, heads_kv, d;
  const float *q, *k, *v, *d_o;
  std::int64_t ldq, ldk, ldv, lddo;
  const float* lse;
  const float* mask;
  std::int64_t ldm;
  bool causal;
  std::int64_t causal_off;
  float scale;
  int dq_scales;    ///< 1 (DqScaleMissing 0, DqScaleTwice 2)
  bool lse_wrong_base;   ///< LseWrongBase: P = expf(RN(z - RN(LSE RN(log2 e))))
  bool no_d, gqa_last, zeros;
  const float* delta;  ///< D per row
  float *p, *ds;       ///< workspace: rows x len_k each
  std::int64_t rows;   ///< batch heads_q len_q
  std::int64_t kv_rows;  ///< batch heads_kv len_k
  float *dq, *dk, *dv;
  std::int64_t lddq, lddk, lddv;
};

/// e in 0 .. n - 1 over the grid (a grid-stride loop).
template <class F>
__device__ void naive_bwd_each(std::int64_t n, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) f(e);
}

__global__ void naive_bwd_p(NaiveBwdArgs a) {
  naive_bwd_each(a.rows * a.len_k, [&](std::int64_t e) {
    const std::int64_t r = e / a.len_k, j = e % a.len_k, i = r % a.len_q, bh = r / a.len_q;
    const std::int64_t kv = (bh / a.heads_q * a.heads_kv + bh % a.heads_q / (a.heads_q / a.heads_kv)) * a.len_k + j;
    const float lse = a.lse[r];
    float p = 0.0f, dp = 0.0f;
    const float* dor = a.d_o + r * a.lddo;
    const float* vr = a.v + kv * a.ldv;
    for (std::int64_t c = 0; c < a.d; ++c) dp = f_fma(dor[c], vr[c], dp);
    if ((!a.causal || j <= i + a.causal_off) && lse != INFINITY && lse != -INFINITY) {
      const float* qr = a.q + r * a.ldq;
      const float* kr = a.k + kv * a.ldk;
      float x = 0.0f;
      for (std::int64_t c = 0; c < a.d; ++c) x = f_fma(qr[c], kr[c], x);
      float z = f_mul(a.scale, x);
      if (a.mask) z = f_add(z, a.mask[i * a.ldm + j]);
      p = bwd_expf(f_sub(z, a.lse_wrong_base ? f_mul(lse, kLog2e) : lse));
    }
    a.p[e] = p;
    a.ds[e] = f_mul(p, a.no_d ? dp : f_sub(dp, a.delta[r]));
  });
}

__global__ void naive_bwd_dq(NaiveBwdArgs a) {
  naive_bwd_each(a.rows * a.d, [&](std::int64_t e) {
    const std::int64_t r = e / a.d, c = e % a.d, bh = r / a.len_q;
    const std::int64_t kv0 = (bh / a.heads_q * a.heads_kv + bh % a.heads_q / (a.heads_q / a.heads_kv)) * a.len_k;
    float acc = 0.0f;
    for (std::int64_t j = 0; j < a.len_k; ++j) acc = f_fma(a.ds[r * a.len_k + j], a.k[(kv0 + j) * a.ldk + c], acc);
    a.dq[r * a.lddq + c] = a.zeros ? 0.0f : bwd_scaled(acc, a.scale, a.dq_scales);
  });
}

__global__ void naive_bwd_dkv(NaiveBwdArgs a) {
  naive_bwd_each(a.kv_rows * a.d, [&](std::int64_t e) {
    const std::int64_t kr = e / a.d, c = e % a.d, j = kr % a.len_k, bhk = kr / a.len_k;
    const std::int64_t group = a.heads_q / a.heads_kv, b = bhk / a.heads_kv, hk = bhk % a.heads_kv;
    float dk = 0.0f, dv = 0.0f;
    for (std::int64_t hh = a.gqa_last ? group - 1 : 0; hh < group; ++hh) {
      const std::int64_t row0 = (b * a.heads_q + hk * group + hh) * a.len_q;
      for (std::int64_t i = 0; i < a.len_q; ++i) {
        const std::int64_t pe = (row0 + i) * a.len_k + j;
        dk = f_fma(a.ds[pe], a.q[(row0 + i) * a.ldq + c], dk);
        dv = f_fma(a.p[pe], a.d_o[(row0 + i) * a.lddo + c], dv);
      }
    }
    a.dk[kr * a.lddk + c] = a.zeros ? 0.0f : f_mul(a.scale, dk);
    a.dv[kr * a.lddv + c] = a.zeros ? 0.0f : dv;
  });
}

}  // namespace fpcert::FPCERT_MMA_NS
