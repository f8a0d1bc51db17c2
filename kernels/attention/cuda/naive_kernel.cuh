// kernels/attention/cuda/naive_kernel.cuh — the device code of the naive f32 attention built-in
// (kernels/attention/cuda/attention_cuda.cu: traits, launch, registration; docs/attention.md, "CUDA built-ins"): three
// kernels on the CUDA cores, every binary32 operation rounded to nearest once through flash_kernel.cuh's wrappers.
// With FPCERT_MMA_EMULATION defined it compiles as host C++ (tests/kernels/attention/attention_cuda_emulation_test.cpp runs it).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/attention/cuda/flash_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

#if defined(FPCERT_MMA_EMULATION)
bool emulated_any(bool v);      ///< defined by the emulation: whether any lane of the calling thread's warp has v
float emulated_via_f16(float p);  ///< defined by the emulation: p rounded to nearest into f16, back to float
inline bool any_lane(bool v) { return emulated_any(v); }
inline float f_exp(float x) { return std::exp(x); }
inline float via_f16(float p) { return emulated_via_f16(p); }
#else
__device__ __forceinline__ bool any_lane(bool v) { return __any_sync(0xffffffffu, v); }
__device__ __forceinline__ float f_exp(float x) { return expf(x); }  // 2 ulp (CUDA C++ Programming Guide); no fast math
/// The PRoundedLower fault of the naive kernel: p rounded to nearest into f16 before P V.
__device__ __forceinline__ float via_f16(float p) { return __half2float(__float2half_rn(p)); }
#endif

struct NaiveArgs {
  std::int64_t len_q, len_k, heads_q, heads_kv, d;
  const float* q;
  std::int64_t ldq;
  const float* k;
  std::int64_t ldk;
  const float* v;
  std::int64_t ldv;
  const float* mask;
  std::int64_t ldm;
  bool causal;
  std::int64_t causal_off;
  float scale;       ///< applied to the scores (1 for ScaleAfterSoftmax)
  float post_scale;  ///< 1, or s for ScaleAfterSoftmax
  float* o;
  std::int64_t ldo;
  float* lse;
  std::int64_t rows;  ///< batch heads_q len_q
  float* s;           ///< workspace: rows x len_k scores, then probabilities
  float* stat;        ///< workspace: per row the max and the sum
  bool lse_no_max, p_f16, zeros;
};

/// Row r = (b heads_q + h) len_q + i of Q, and the first key/value row of its key/value head.
__device__ __forceinline__ void naive_row(const NaiveArgs& a, std::int64_t r, std::int64_t& i, std::int64_t& kv0) {
  i = r % a.len_q;
  const std::int64_t bh = r / a.len_q, h = bh % a.heads_q, b = bh / a.heads_q;
  kv0 = (b * a.heads_kv + h / (a.heads_q / a.heads_kv)) * a.len_k;
}

/// f(e) for this thread's elements e of 0 .. n - 1 (a grid-stride loop), with e's row r = e / per_row of Q (the row's
/// query index i and its key/value head's first row kv0) and the index within the row, e % per_row.
template <class F>
__device__ void for_each_element(const NaiveArgs& a, std::int64_t per_row, F f) {
  const std::int64_t n = a.rows * per_row, stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const std::int64_t r = e / per_row;
    std::int64_t i, kv0;
    naive_row(a, r, i, kv0);
    f(e, r, i, kv0, e % per_row);
  }
}

/// z_ij = RN(RN(s x_ij) + mask_ij), x_ij = fmaf(q_i,D-1, k_j,D-1, ... fmaf(q_i0, k_j0, +0)); -Inf where causally masked.
__global__ void naive_scores(NaiveArgs a) {
  for_each_element(a, a.len_k, [&](std::int64_t e, std::int64_t r, std::int64_t i, std::int64_t kv0, std::int64_t j) {
    float z = -INFINITY;
    if (!a.causal || j <= i + a.causal_off) {
      const float* qr = a.q + r * a.ldq;
      const float* kr = a.k + (kv0 + j) * a.ldk;
      float x = 0.0f;
      for (std::int64_t c = 0; c < a.d; ++c) x = f_fma(qr[c], kr[c], x);
      z = f_mul(a.scale, x);
      if (a.mask) z = f_add(z, a.mask[i * a.ldm + j]);
    }
    a.s[e] = z;
  });
}

/// One warp per row: m = max z (fmaxf butterfly), p_j = expf(RN(z_j - m)) in place, l = sum p_j (lane l adds j = l,
/// l + 32, ... from +0, then a __shfl_xor_sync butterfly), LSE = RN(m + logf(l)); a row without a finite score: l = 0.
__global__ void naive_softmax(NaiveArgs a) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; r < a.rows; r += warps) {
    float* z = a.s + r * a.len_k;
    float m = -INFINITY;
    bool nan = false;
    for (std::int64_t j = lane; j < a.len_k; j += 32) {
      m = f_max(m, z[j]);
      nan = nan || z[j] != z[j];
    }
    for (int off = 16; off >= 1; off /= 2) m = f_max(m, shfl_xor(m, off));
    nan = any_lane(nan);
    const bool masked = m == -INFINITY && !nan;
    float l = 0.0f;
    if (!masked) {
      for (std::int64_t j = lane; j < a.len_k; j += 32) {
        const float p = f_exp(f_sub(z[j], m));  // a NaN score: NaN, and the row's sum NaN
        l = f_add(l, p);
        z[j] = a.p_f16 ? via_f16(p) : p;
      }
      for (int off = 16; off >= 1; off /= 2) l = f_add(l, shfl_xor(l, off));
    }
    if (lane == 0) {
      a.stat[2 * r] = masked ? -INFINITY : m;
      a.stat[2 * r + 1] = l;
      if (a.lse) {
        const float v = masked ? -INFINITY : a.lse_no_max ? f_log(l) : f_add(m, f_log(l));
        a.lse[r] = a.zeros ? 0.0f : v;
      }
    }
  }
}

/// O_ic = RN(fmaf(p_i,L-1, v_L-1,c, ... fmaf(p_i0, v_0c, +0)) / l_i), keys ascending; a fully masked row: +0.
__global__ void naive_pv(NaiveArgs a) {
  for_each_element(a, a.d, [&](std::int64_t, std::int64_t r, std::int64_t, std::int64_t kv0, std::int64_t c) {
    float y = 0.0f;
    if (a.stat[2 * r] != -INFINITY || a.stat[2 * r + 1] != 0.0f) {
      const float* p = a.s + r * a.len_k;
      float acc = 0.0f;
      for (std::int64_t j = 0; j < a.len_k; ++j) acc = f_fma(p[j], a.v[(kv0 + j) * a.ldv + c], acc);
      y = f_div(acc, a.stat[2 * r + 1]);
      if (a.post_scale != 1.0f) y = f_mul(y, a.post_scale);
    }
    a.o[r * a.ldo + c] = a.zeros ? 0.0f : y;
  });
}

}  // namespace fpcert::FPCERT_MMA_NS
