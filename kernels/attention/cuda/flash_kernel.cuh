// kernels/attention/cuda/flash_kernel.cuh — the device code of the flash attention built-ins
// (kernels/attention/cuda/attention_cuda.cu: traits, launch, registration; docs/attention.md, "CUDA built-ins").
//
// One CTA per (query block of 64 rows, query head, batch): 4 warps, warp w owns query rows q0 + 16w .. q0 + 16w + 15.
// Shared memory: K's block row-major Ks[64][D + 8] (key j's head-dim vector contiguous) and V's block transposed
// Vt[D][64 + 8] (for each head-dim column, the 64 keys contiguous); Q's block is loaded into Ks's space first, read
// into registers once, and overwritten by the first key block. Rows padded by 8 halves (16 bytes): the 8 rows x 4 words
// a fragment load touches, word (D/2 + 4) g + t + const (or 36 g + t + const), fall into 32 distinct banks.
//
// Fragments of mma.sync.m16n8k16.row.col.f32.{f16,bf16} (PTX ISA, "Matrix Fragments for mma.m16n8k16"; the map
// kernels/gemm/cuda/mma_kernel.cuh uses and tests), g = lane / 4, t = lane % 4:
//   A (16 x 16, row): register r holds A[g + 8 (r & 1)][2t + 8 (r >> 1) + {0, 1}] (lower k in the low half);
//   B (16 x 8, col):  register r holds B[2t + 8r + {0, 1}][g];
//   C (16 x 8, f32):  c_i = C[g + 8 (i >> 1)][2t + (i & 1)].
// S = Q K^T, per warp 16 rows x 64 keys as 8 n-tiles of 8 keys, over D / 16 k-steps of the head dim:
//   A = Q: qf[kk][r] = Q[16w + g + 8 (r & 1)][16 kk + 2t + 8 (r >> 1) + {0, 1}]  (one 32-bit word of the Q tile);
//   B = K^T: column n = key 8 nt + g, k = head-dim index: word Ks[8 nt + g][16 kk + 2t + 8r + {0, 1}];
//   s[nt][i] = S[row g + 8 (i >> 1)][key 8 nt + 2t + (i & 1)]: a thread holds 16 scores of each of rows g and g + 8,
//   the other 48 of the row sit in the 3 other lanes of its quad (lanes 4g .. 4g + 3): quad shuffles (xor 1, 2).
// O~ += P V, per warp 16 rows x D columns as D / 8 n-tiles, over 4 k-steps of 16 keys:
//   A = P: step kk needs P[g + 8 (r & 1)][16 kk + 2t + 8 (r >> 1) + {0, 1}], which is exactly s[2 kk + (r >> 1)][2 (r & 1)
//   + {0, 1}] of the same thread (the C layout of two n-tiles is the A layout of one k-step): no shuffle;
//   B = V: column n = head-dim index 8 dt + g, k = key: word Vt[8 dt + g][16 kk + 2t + 8r + {0, 1}];
//   o[dt][i] = O~[row g + 8 (i >> 1)][col 8 dt + 2t + (i & 1)].
// Each row's running max m2 and sum l live in the 4 lanes of its quad, equal in all of them (the quad reductions end
// with the same value in every lane: fmaxf and + are commutative).
//
// With FPCERT_MMA_EMULATION defined the same code compiles as host C++ (tests/kernels/attention/attention_cuda_emulation_test.cpp
// supplies threads, barriers, the warp shuffle, the emulated MMA and the conversions), so its indexing, masks, tails and
// online softmax are checked bit for bit against a scalar model on machines without a GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/attention/attention_kernel.hpp"
#include "kernels/gemm/cuda/mma_kernel.cuh"

#if !defined(FPCERT_MMA_EMULATION)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace fpcert::FPCERT_MMA_NS {

constexpr int kBQ = 64, kBK = 64, kFlashThreads = 128;
static_assert(kBQ == kBK && kBQ == 16 * (kFlashThreads / 32), "4 warps of 16 query rows; Q's tile fits in K's space");
constexpr float kLog2e = 0x1.715476p+0f;  // RN_f32(log2 e) = 1.44269502...: the ScaleAfterSoftmax fault's c

/// c = RN_f32(s log2 e), correctly rounded on the host: s hi + s lo (log2 e = hi + lo, a double-double with
/// |log2 e - hi - lo| < 2^-106) as p + tail with p = RN_f64(s hi) and tail = fma(s, hi, -p) + s lo; (float)p is RN_f32 of
/// p, and p lies on the same side of every f32 midpoint as s log2 e (a midpoint is a double, so it can only be p
/// itself), where the tail's sign decides (s log2 e is irrational for s != 0, never a midpoint). Host code
/// (tests/kernels/attention/attention_cuda_emulation_test.cpp checks it against a long-double evaluation).
inline float scale_log2e(float s) { return attention_scale_log2e(s); }

struct FlashArgs {
  std::int64_t len_q, len_k, heads_q, heads_kv;
  const std::uint16_t* q;
  std::int64_t ldq;
  const std::uint16_t* k;
  std::int64_t ldk;
  const std::uint16_t* v;
  std::int64_t ldv;
  const float* mask;
  std::int64_t ldm;
  bool causal;
  std::int64_t causal_off;  ///< key j visible from query i iff j <= i + causal_off (bottom-right: len_k - len_q; +1: the fault)
  std::int64_t keys;        ///< keys considered: len_k (DropLastKeyBlock: the whole key blocks only)
  float c;                  ///< RN(s log2 e), or RN(log2 e) for ScaleAfterSoftmax
  float post_scale;         ///< 1, or s for ScaleAfterSoftmax (applied to O)
  float fold;               ///< s (1 for ScaleAfterSoftmax): the mask folded into x as RN(mask / s); LSE = RN(m_x s) + logf(l)
  std::uint16_t* o;
  std::int64_t ldo;
  float* lse;
  bool vec;                 ///< 16-byte loads: Q, K, V 16-byte aligned with leading dimensions multiples of 8
  bool no_rescale, lse_no_max, p_e4m3, zeros;
};

// ---- binary32 operations, each rounded to nearest once (never contracted), and the warp's shuffle ----
#if defined(FPCERT_MMA_EMULATION)
/// Defined by the emulation: lane ^ mask's value within the calling thread's warp, and the conversions.
float emulated_shfl_xor(float v, int mask);
std::uint16_t emulated_round16(bool bf16_out, float x);  ///< to nearest even into f16 or bf16
float emulated_via_e4m3(float p);                         ///< to nearest into e4m3 (saturating), back to float
inline float f_fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float f_mul(float a, float b) { return a * b; }  // host: IEEE binary32, -ffp-contract=off
inline float f_add(float a, float b) { return a + b; }
inline float f_sub(float a, float b) { return a - b; }
inline float f_div(float a, float b) { return a / b; }
inline float f_rcp(float x) { return 1.0f / x; }
inline float f_exp2(float x) { return std::exp2(x); }
inline float f_log(float x) { return std::log(x); }
inline float f_max(float a, float b) { return std::fmax(a, b); }
inline float shfl_xor(float v, int mask) { return emulated_shfl_xor(v, mask); }
inline std::uint32_t word_at(const std::uint16_t* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
template <bool kBf16>
inline std::uint16_t to_code(float x) { return emulated_round16(kBf16, x); }
inline float via_e4m3(float p) { return emulated_via_e4m3(p); }
void emulated_flash_mma(bool bf16_in, float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]);  ///< warp-collective
template <Mma T>
inline void flash_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  emulated_flash_mma(T == Mma::BF16, d, a, b);
}
#else
template <Mma T>
__device__ __forceinline__ void flash_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  mma<T>(d, a, b);
}
__device__ __forceinline__ float f_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ float f_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float f_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float f_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float f_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float f_rcp(float x) { return __frcp_rn(x); }
__device__ __forceinline__ float f_exp2(float x) { return exp2f(x); }  // 2 ulp (CUDA C++ Programming Guide); no fast math
__device__ __forceinline__ float f_log(float x) { return logf(x); }    // 1 ulp
__device__ __forceinline__ float f_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ std::uint32_t word_at(const std::uint16_t* p) { return *reinterpret_cast<const std::uint32_t*>(p); }
template <bool kBf16>
__device__ __forceinline__ std::uint16_t to_code(float x) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}
/// The PRoundedLower fault: p rounded to nearest into e4m3 (saturating) first; e4m3 values are exact in f16 and bf16.
__device__ __forceinline__ float via_e4m3(float p) {
  const __nv_fp8_storage_t c = __nv_cvt_float_to_fp8(p, __NV_SATFINITE, __NV_E4M3);
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E4M3)));
}
#endif

/// Two probabilities rounded to nearest into the input format, `lo` in the low half (the lower k).
template <bool kBf16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  return static_cast<std::uint32_t>(to_code<kBf16>(lo)) | (static_cast<std::uint32_t>(to_code<kBf16>(hi)) << 16);
}

/// Rows r0 .. r0 + 63 of a [len][D] tensor (row stride ld) into dst (row stride ldd, halves); rows past len are zeros.
/// kTranspose: dst[c][r] instead of dst[r][c].
template <int D, bool kTranspose>
__device__ void load_block(std::uint16_t* dst, int ldd, const std::uint16_t* src, std::int64_t ld, std::int64_t r0, std::int64_t len,
                           bool vec) {
  if (vec) {
    constexpr int kChunks = D / 8;  // 16-byte chunks of a row
    for (int idx = static_cast<int>(threadIdx.x); idx < kBK * kChunks; idx += kFlashThreads) {
      // Row-major: a warp reads 2 rows of 16-byte chunks (coalesced). Transposed: a warp takes one chunk of 32
      // consecutive rows, so each of its 8 two-byte stores per thread hits 32 consecutive halves of one row of dst
      // (16 banks, no conflict) instead of 16 rows 8 (D + 8) halves apart (one bank, 16-way conflicts).
      const int r = kTranspose ? idx % kBK : idx / kChunks, ch = kTranspose ? idx / kBK : idx % kChunks;
      std::uint32_t w[4] = {0, 0, 0, 0};
      if (r0 + r < len) {
        const Words4 x = load16(reinterpret_cast<const std::uint8_t*>(src + (r0 + r) * ld + ch * 8));
        w[0] = x.w[0], w[1] = x.w[1], w[2] = x.w[2], w[3] = x.w[3];
      }
      if constexpr (kTranspose) {
        FPCERT_UNROLL
        for (int e = 0; e < 8; ++e) dst[(ch * 8 + e) * ldd + r] = static_cast<std::uint16_t>(w[e / 2] >> (16 * (e % 2)));
      } else {
        store16_shared(reinterpret_cast<std::uint32_t*>(dst + r * ldd + ch * 8), w);
      }
    }
  } else {
    for (int idx = static_cast<int>(threadIdx.x); idx < kBK * D; idx += kFlashThreads) {
      const int r = idx / D, c = idx % D;
      const std::uint16_t x = r0 + r < len ? src[(r0 + r) * ld + c] : std::uint16_t{0};
      if constexpr (kTranspose) dst[c * ldd + r] = x;
      else dst[r * ldd + c] = x;
    }
  }
}

/// One key block of the online softmax for the thread's rows g and g + 8 (the header's layouts), shared by the 16-bit and
/// the FP8 kernels: the quad's block max bm of the visible raw scores (bit 4 nt + i of vis), the running max m_x and the
/// shift m2 = RN(RN(m_x c) - koff) (koff 0: RN(m_x c), the subtraction exact), alpha = exp2f(RN(m2_old - m2_new)) (1
/// while nothing is visible, and for the NoRescale fault), p = exp2f(fmaf(x, c, -m2)) in place of each visible score (0
/// elsewhere; through e4m3 first for the PRoundedLower fault of the 16-bit kernels), l = RN(RN(l alpha) + the block sum
/// of the unrounded p over the thread's keys in order, then the quad's butterfly), O~ times alpha.
template <int kDt>
__device__ __forceinline__ void online_block(float (&s)[8][4], std::uint32_t vis, float (&bm)[2], float c, float koff, bool no_rescale,
                                             bool p_e4m3, float (&mx)[2], float (&m2)[2], float (&l)[2], float (&o)[kDt][4]) {
  FPCERT_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    bm[rr] = f_max(bm[rr], shfl_xor(bm[rr], 1));
    bm[rr] = f_max(bm[rr], shfl_xor(bm[rr], 2));
  }
  float alpha[2], mnx[2], mn[2];
  FPCERT_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    mnx[rr] = f_max(mx[rr], bm[rr]);
    mn[rr] = mnx[rr] == -INFINITY ? -INFINITY : f_sub(f_mul(mnx[rr], c), koff);
    // Nothing visible yet (mn = -Inf): O~ and l stay +0; else rescale by exp2(m2_old - m2_new) (0 for the first).
    alpha[rr] = mn[rr] == -INFINITY || no_rescale ? 1.0f : f_exp2(f_sub(m2[rr], mn[rr]));
  }
  float ls[2] = {0.0f, 0.0f};
  FPCERT_UNROLL
  for (int nt = 0; nt < 8; ++nt)
    FPCERT_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int rr = i >> 1;
      float p = 0.0f;
      if ((vis >> (4 * nt + i)) & 1u && mn[rr] != -INFINITY) p = f_exp2(f_fma(s[nt][i], c, -mn[rr]));
      ls[rr] = f_add(ls[rr], p);  // the f32 probabilities, before P's rounding
      s[nt][i] = p_e4m3 ? via_e4m3(p) : p;
    }
  FPCERT_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    ls[rr] = f_add(ls[rr], shfl_xor(ls[rr], 1));
    ls[rr] = f_add(ls[rr], shfl_xor(ls[rr], 2));
    l[rr] = f_add(f_mul(l[rr], alpha[rr]), ls[rr]);
    mx[rr] = mnx[rr];
    m2[rr] = mn[rr];
  }
  FPCERT_UNROLL
  for (int dt = 0; dt < kDt; ++dt)
    FPCERT_UNROLL
    for (int i = 0; i < 4; ++i) o[dt][i] = f_mul(o[dt][i], alpha[i >> 1]);
}

/// The rows' outputs, shared by both kernels: O = RN_out(RN(O~ RN(RN(1 / l) dv))) (dv 1: RN(O~ RN(1 / l)), the product by 1
/// exact), times post_scale when it is not 1 (the ScaleAfterSoftmax fault); LSE = RN(RN(m_x s_lse) + logf(RN(l l_scale)))
/// (l_scale a power of two, exact), logf alone for the LseNoMax fault; a row with no visible key O = +0, LSE = +Inf; every
/// output +0 for the Zeros fault.
struct RowOut {
  std::uint16_t* o;
  std::int64_t ldo;
  float* lse;
  std::int64_t row_base, len_q;
  float dv, post_scale, s_lse, l_scale;
  bool lse_no_max, zeros;
};
template <bool kBf16, int kDt>
__device__ __forceinline__ void write_rows(const RowOut& w, const std::int64_t (&qi)[2], int t, const float (&o)[kDt][4], const float (&mx)[2],
                                           const float (&m2)[2], const float (&l)[2]) {
  FPCERT_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    if (qi[rr] >= w.len_q) continue;
    const bool masked = m2[rr] == -INFINITY;
    const float r = f_mul(f_rcp(l[rr]), w.dv);
    FPCERT_UNROLL
    for (int dt = 0; dt < kDt; ++dt)
      FPCERT_UNROLL
      for (int e = 0; e < 2; ++e) {
        float y = masked ? 0.0f : f_mul(o[dt][2 * rr + e], r);
        if (w.post_scale != 1.0f) y = f_mul(y, w.post_scale);
        if (w.zeros) y = 0.0f;
        w.o[(w.row_base + qi[rr]) * w.ldo + 8 * dt + 2 * t + e] = to_code<kBf16>(y);
      }
    if (w.lse && t == 0) {
      float v = INFINITY;
      const float lk = f_mul(l[rr], w.l_scale);
      if (!masked) v = w.lse_no_max ? f_log(lk) : f_add(f_mul(mx[rr], w.s_lse), f_log(lk));
      w.lse[w.row_base + qi[rr]] = w.zeros ? 0.0f : v;
    }
  }
}

template <bool kBf16, int D>
__global__ void __launch_bounds__(kFlashThreads) flash_fwd(FlashArgs a) {
  constexpr Mma kMma = kBf16 ? Mma::BF16 : Mma::F16;
  constexpr int kLdK = D + 8, kLdV = kBK + 8, kDt = D / 8, kKk = D / 16;
  __shared__ __align__(16) std::uint16_t smem[kBK * kLdK + D * kLdV];
  std::uint16_t* const ks = smem;
  std::uint16_t* const vt = smem + kBK * kLdK;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const std::int64_t b = blockIdx.z, h = blockIdx.y, q0 = static_cast<std::int64_t>(blockIdx.x) * kBQ;
  const std::int64_t hk = h / (a.heads_q / a.heads_kv);
  const std::uint16_t* const Q = a.q + (b * a.heads_q + h) * a.len_q * a.ldq;
  const std::uint16_t* const K = a.k + (b * a.heads_kv + hk) * a.len_k * a.ldk;
  const std::uint16_t* const V = a.v + (b * a.heads_kv + hk) * a.len_k * a.ldv;
  const std::int64_t row_base = (b * a.heads_q + h) * a.len_q;  // LSE index of query 0
  std::int64_t qi[2];
  qi[0] = q0 + 16 * warp + g;
  qi[1] = qi[0] + 8;

  // Q's block into registers (through Ks's space).
  load_block<D, false>(ks, kLdK, Q, a.ldq, q0, a.len_q, a.vec);
  __syncthreads();
  std::uint32_t qf[kKk][4];
  FPCERT_UNROLL
  for (int kk = 0; kk < kKk; ++kk)
    FPCERT_UNROLL
    for (int r = 0; r < 4; ++r) qf[kk][r] = word_at(ks + (16 * warp + g + 8 * (r & 1)) * kLdK + 16 * kk + 2 * t + 8 * (r >> 1));

  float o[kDt][4];
  FPCERT_UNROLL
  for (int dt = 0; dt < kDt; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float mx[2] = {-INFINITY, -INFINITY}, m2[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // raw max, RN(mx c), sum

  // Keys this CTA reads: every considered key below the last row's causal limit.
  std::int64_t kend = a.keys;
  if (a.causal) kend = std::min(kend, std::min<std::int64_t>(q0 + kBQ - 1, a.len_q - 1) + a.causal_off + 1);
  for (std::int64_t kb = 0; kb < kend; kb += kBK) {
    __syncthreads();  // every warp done with the previous block (and with Q's tile)
    load_block<D, false>(ks, kLdK, K, a.ldk, kb, a.len_k, a.vec);
    load_block<D, true>(vt, kLdV, V, a.ldv, kb, a.len_k, a.vec);
    __syncthreads();

    float s[8][4];
    FPCERT_UNROLL
    for (int nt = 0; nt < 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
    FPCERT_UNROLL
    for (int kk = 0; kk < kKk; ++kk)
      FPCERT_UNROLL
      for (int nt = 0; nt < 8; ++nt) {
        const std::uint16_t* kp = ks + (8 * nt + g) * kLdK + 16 * kk + 2 * t;
        const std::uint32_t bf[2] = {word_at(kp), word_at(kp + 8)};
        flash_mma<kMma>(s[nt], qf[kk], bf);
      }

    // The raw score x, with the additive mask folded in as x = RN(x + RN(mask / s)); its block max per row.
    std::uint32_t vis = 0;  // bit 4 nt + i: key visible from the row
    float bm[2] = {-INFINITY, -INFINITY};
    FPCERT_UNROLL
    for (int nt = 0; nt < 8; ++nt)
      FPCERT_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int rr = i >> 1;
        const std::int64_t j = kb + 8 * nt + 2 * t + (i & 1);
        const bool ok = j < a.keys && qi[rr] < a.len_q && (!a.causal || j <= qi[rr] + a.causal_off);
        if (!ok) continue;
        vis |= 1u << (4 * nt + i);
        if (a.mask) s[nt][i] = f_add(s[nt][i], f_div(a.mask[qi[rr] * a.ldm + j], a.fold));
        bm[rr] = f_max(bm[rr], s[nt][i]);
      }
    online_block<kDt>(s, vis, bm, a.c, 0.0f, a.no_rescale, a.p_e4m3, mx, m2, l, o);

    // P (rounded to nearest into the input format) times V's block.
    FPCERT_UNROLL
    for (int kk = 0; kk < 4; ++kk) {
      const std::uint32_t pf[4] = {pack2<kBf16>(s[2 * kk][0], s[2 * kk][1]), pack2<kBf16>(s[2 * kk][2], s[2 * kk][3]),
                                   pack2<kBf16>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<kBf16>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      FPCERT_UNROLL
      for (int dt = 0; dt < kDt; ++dt) {
        const std::uint16_t* vp = vt + (8 * dt + g) * kLdV + 16 * kk + 2 * t;
        const std::uint32_t bf[2] = {word_at(vp), word_at(vp + 8)};
        flash_mma<kMma>(o[dt], pf, bf);
      }
    }
  }

  // O = RN_out(RN(O~ RN(1 / l))) (ScaleAfterSoftmax: times s once more); a row with no visible key: O = +0, LSE = +Inf.
  const RowOut w{a.o, a.ldo, a.lse, row_base, a.len_q, 1.0f, a.post_scale, a.fold, 1.0f, a.lse_no_max, a.zeros};
  write_rows<kBf16, kDt>(w, qi, t, o, mx, m2, l);
}

}  // namespace fpcert::FPCERT_MMA_NS
