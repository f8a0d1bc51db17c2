// kernels/attention/cuda/attention_cuda.cu — CUDA attention built-ins (docs/attention.md, "CUDA built-ins"):
//  - attention_{f16,bf16}_flash_cuda: a FlashAttention-2-style fused forward on mma.sync tensor cores (f32
//    accumulators), online softmax over key blocks of 64 in base 2 with the scale folded in, reciprocal normalisation;
//  - attention_f32_naive_cuda: the three-kernel reference subject in f32 (scores, shifted softmax with expf, P V) on
//    the CUDA cores, every sum an fmaf chain in a stated order.
// Every fault of AttentionBug each kernel can carry is a runtime switch of the same device code (with_bug), so a mutant
// is the kernel with its own arithmetic changed, not a model of it. Every launch is checked; run() synchronises its
// stream before returning.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/attention/attention_kernel.hpp"
#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cuda/mma_kernel.cuh"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

namespace fpcert {
namespace {

using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using mma_device::Mma;

constexpr unsigned kFull = 0xffffffffu;
constexpr float kLog2e = 0x1.715476p+0f;  // RN_f32(log2 e) = 1.44269502...: the ScaleAfterSoftmax fault's c
constexpr float kLn2 = 0x1.62e430p-1f;    // RN_f32(ln 2) = 0.693147182...: the LSE's change of base

/// c = RN_f32(s log2 e), correctly rounded on the host: s hi + s lo (log2 e = hi + lo, a double-double with
/// |log2 e - hi - lo| < 2^-106) as p + tail with p = RN_f64(s hi) and tail = fma(s, hi, -p) + s lo; (float)p is RN_f32 of
/// p, and p lies on the same side of every f32 midpoint as s log2 e (a midpoint is a double, so it can only be p
/// itself), where the tail's sign decides (s log2 e is irrational for s != 0, never a midpoint).
float scale_log2e(float s) {
  const double hi = 0x1.71547652b82fep+0, lo = 0x1.777d0ffda0d24p-56;
  const double p = static_cast<double>(s) * hi;
  const double tail = std::fma(static_cast<double>(s), hi, -p) + static_cast<double>(s) * lo;
  float r = static_cast<float>(p);
  const double d = p - static_cast<double>(r);  // exact: r is within half an f32 ulp of p
  if (d != 0 && tail != 0) {
    const float other = std::nextafter(r, d > 0 ? INFINITY : -INFINITY);
    const bool midpoint = std::fabs(static_cast<double>(other) - p) == std::fabs(d);
    if (midpoint && (tail > 0) == (d > 0)) r = other;  // the exact value is past the midpoint, on other's side
  }
  return r;
}

// ---- the flash kernel (device) -------------------------------------------------------------------------------------
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

constexpr int kBQ = 64, kBK = 64, kFlashThreads = 128;
static_assert(kBQ == kBK && kBQ == 16 * (kFlashThreads / 32), "4 warps of 16 query rows; Q's tile fits in K's space");

struct FlashArgs {
  int64_t len_q, len_k, heads_q, heads_kv;
  const uint16_t* q;
  int64_t ldq;
  const uint16_t* k;
  int64_t ldk;
  const uint16_t* v;
  int64_t ldv;
  const float* mask;
  int64_t ldm;
  bool causal;
  int64_t causal_off;  ///< key j visible from query i iff j <= i + causal_off (bottom-right: len_k - len_q; +1: the fault)
  int64_t keys;        ///< keys considered: len_k (DropLastKeyBlock: the whole key blocks only)
  float c;             ///< RN(s log2 e), or RN(log2 e) for ScaleAfterSoftmax
  float post_scale;    ///< 1, or s for ScaleAfterSoftmax (applied to O)
  uint16_t* o;
  int64_t ldo;
  float* lse;
  bool vec;            ///< 16-byte loads: Q, K, V 16-byte aligned with leading dimensions multiples of 8
  bool no_rescale, lse_no_max, p_e4m3, zeros;
};

template <bool kBf16>
__device__ __forceinline__ uint16_t to_code(float x) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}
/// Two probabilities rounded to nearest into the input format, `lo` in the low half (the lower k).
template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  return static_cast<uint32_t>(to_code<kBf16>(lo)) | (static_cast<uint32_t>(to_code<kBf16>(hi)) << 16);
}
/// The PRoundedLower fault: p rounded to nearest into e4m3 (saturating) first; e4m3 values are exact in f16 and bf16.
__device__ __forceinline__ float via_e4m3(float p) {
  const __nv_fp8_storage_t c = __nv_cvt_float_to_fp8(p, __NV_SATFINITE, __NV_E4M3);
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E4M3)));
}

/// Rows r0 .. r0 + 63 of a [len][D] tensor (row stride ld) into dst (row stride ldd, halves); rows past len are zeros.
/// transpose: dst[c][r] instead of dst[r][c].
template <int D, bool kTranspose>
__device__ void load_block(uint16_t* dst, int ldd, const uint16_t* src, int64_t ld, int64_t r0, int64_t len, bool vec) {
  if (vec) {
    constexpr int kChunks = D / 8;  // 16-byte chunks of a row
    for (int idx = threadIdx.x; idx < kBK * kChunks; idx += kFlashThreads) {
      const int r = idx / kChunks, ch = idx % kChunks;
      uint4 w = make_uint4(0, 0, 0, 0);
      if (r0 + r < len) w = *reinterpret_cast<const uint4*>(src + (r0 + r) * ld + ch * 8);
      if constexpr (kTranspose) {
        const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[(ch * 8 + e) * ldd + r] = static_cast<uint16_t>(words[e / 2] >> (16 * (e % 2)));
      } else {
        *reinterpret_cast<uint4*>(dst + r * ldd + ch * 8) = w;
      }
    }
  } else {
    for (int idx = threadIdx.x; idx < kBK * D; idx += kFlashThreads) {
      const int r = idx / D, c = idx % D;
      const uint16_t x = r0 + r < len ? src[(r0 + r) * ld + c] : uint16_t{0};
      if constexpr (kTranspose) dst[c * ldd + r] = x;
      else dst[r * ldd + c] = x;
    }
  }
}

__device__ __forceinline__ uint32_t word_at(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

template <bool kBf16, int D>
__global__ void __launch_bounds__(kFlashThreads) flash_fwd(FlashArgs a) {
  constexpr Mma kMma = kBf16 ? Mma::BF16 : Mma::F16;
  constexpr int kLdK = D + 8, kLdV = kBK + 8, kDt = D / 8, kKk = D / 16;
  __shared__ __align__(16) uint16_t smem[kBK * kLdK + D * kLdV];
  uint16_t* const ks = smem;
  uint16_t* const vt = smem + kBK * kLdK;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t b = blockIdx.z, h = blockIdx.y, q0 = static_cast<int64_t>(blockIdx.x) * kBQ;
  const int64_t hk = h / (a.heads_q / a.heads_kv);
  const uint16_t* const Q = a.q + (b * a.heads_q + h) * a.len_q * a.ldq;
  const uint16_t* const K = a.k + (b * a.heads_kv + hk) * a.len_k * a.ldk;
  const uint16_t* const V = a.v + (b * a.heads_kv + hk) * a.len_k * a.ldv;
  const int64_t row_base = (b * a.heads_q + h) * a.len_q;  // LSE index of query 0
  int64_t qi[2];
  qi[0] = q0 + 16 * warp + g;
  qi[1] = qi[0] + 8;

  // Q's block into registers (through Ks's space).
  load_block<D, false>(ks, kLdK, Q, a.ldq, q0, a.len_q, a.vec);
  __syncthreads();
  uint32_t qf[kKk][4];
#pragma unroll
  for (int kk = 0; kk < kKk; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) qf[kk][r] = word_at(ks + (16 * warp + g + 8 * (r & 1)) * kLdK + 16 * kk + 2 * t + 8 * (r >> 1));

  float o[kDt][4];
#pragma unroll
  for (int dt = 0; dt < kDt; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float m2[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  // Keys this CTA reads: every considered key below the last row's causal limit.
  int64_t kend = a.keys;
  if (a.causal) kend = std::min(kend, std::min(q0 + kBQ - 1, a.len_q - 1) + a.causal_off + 1);
  for (int64_t kb = 0; kb < kend; kb += kBK) {
    __syncthreads();  // every warp done with the previous block (and with Q's tile)
    load_block<D, false>(ks, kLdK, K, a.ldk, kb, a.len_k, a.vec);
    load_block<D, true>(vt, kLdV, V, a.ldv, kb, a.len_k, a.vec);
    __syncthreads();

    float s[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kKk; ++kk)
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const uint16_t* kp = ks + (8 * nt + g) * kLdK + 16 * kk + 2 * t;
        const uint32_t bf[2] = {word_at(kp), word_at(kp + 8)};
        mma_device::mma<kMma>(s[nt], qf[kk], bf);
      }

    // Scores to base-2 arguments: without a mask the raw x is kept (p = exp2f(fma(x, c, -m2)), m2 = max RN(x c));
    // with the additive mask w = fma(x, c, RN(mask log2 e)) replaces it (p = exp2f(RN(w - m2)), m2 = max w).
    uint32_t vis = 0;  // bit 4 nt + i: key visible from the row
    float bm[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int rr = i >> 1;
        const int64_t j = kb + 8 * nt + 2 * t + (i & 1);
        const bool ok = j < a.keys && qi[rr] < a.len_q && (!a.causal || j <= qi[rr] + a.causal_off);
        if (!ok) continue;
        vis |= 1u << (4 * nt + i);
        float arg;
        if (a.mask) {
          s[nt][i] = __fmaf_rn(s[nt][i], a.c, __fmul_rn(a.mask[qi[rr] * a.ldm + j], kLog2e));
          arg = s[nt][i];
        } else {
          arg = __fmul_rn(s[nt][i], a.c);
        }
        bm[rr] = fmaxf(bm[rr], arg);
      }
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      bm[rr] = fmaxf(bm[rr], __shfl_xor_sync(kFull, bm[rr], 1));
      bm[rr] = fmaxf(bm[rr], __shfl_xor_sync(kFull, bm[rr], 2));
    }
    float alpha[2], mn[2];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      mn[rr] = fmaxf(m2[rr], bm[rr]);
      // Nothing visible yet (mn = -Inf): O~ and l stay +0; else rescale by exp2(m2_old - m2_new) (0 for the first).
      alpha[rr] = mn[rr] == -INFINITY || a.no_rescale ? 1.0f : exp2f(__fsub_rn(m2[rr], mn[rr]));
    }
    float ls[2] = {0.0f, 0.0f};
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int rr = i >> 1;
        float p = 0.0f;
        if ((vis >> (4 * nt + i)) & 1u && mn[rr] != -INFINITY)
          p = exp2f(a.mask ? __fsub_rn(s[nt][i], mn[rr]) : __fmaf_rn(s[nt][i], a.c, -mn[rr]));
        ls[rr] = __fadd_rn(ls[rr], p);  // the f32 probabilities, before P's rounding
        s[nt][i] = a.p_e4m3 ? via_e4m3(p) : p;
      }
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      ls[rr] = __fadd_rn(ls[rr], __shfl_xor_sync(kFull, ls[rr], 1));
      ls[rr] = __fadd_rn(ls[rr], __shfl_xor_sync(kFull, ls[rr], 2));
      l[rr] = __fadd_rn(__fmul_rn(l[rr], alpha[rr]), ls[rr]);
      m2[rr] = mn[rr];
    }
#pragma unroll
    for (int dt = 0; dt < kDt; ++dt)
#pragma unroll
      for (int i = 0; i < 4; ++i) o[dt][i] = __fmul_rn(o[dt][i], alpha[i >> 1]);

    // P (rounded to nearest into the input format) times V's block.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint32_t pf[4] = {pack2<kBf16>(s[2 * kk][0], s[2 * kk][1]), pack2<kBf16>(s[2 * kk][2], s[2 * kk][3]),
                              pack2<kBf16>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<kBf16>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dt = 0; dt < kDt; ++dt) {
        const uint16_t* vp = vt + (8 * dt + g) * kLdV + 16 * kk + 2 * t;
        const uint32_t bf[2] = {word_at(vp), word_at(vp + 8)};
        mma_device::mma<kMma>(o[dt], pf, bf);
      }
    }
  }

  // O = RN_out(RN(O~ RN(1 / l))) (ScaleAfterSoftmax: times s once more); a row with no visible key: O = +0, LSE = +Inf.
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    if (qi[rr] >= a.len_q) continue;
    const bool masked = m2[rr] == -INFINITY;
    const float r = __frcp_rn(l[rr]);
#pragma unroll
    for (int dt = 0; dt < kDt; ++dt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float y = masked ? 0.0f : __fmul_rn(o[dt][2 * rr + e], r);
        if (a.post_scale != 1.0f) y = __fmul_rn(y, a.post_scale);
        if (a.zeros) y = 0.0f;
        a.o[(row_base + qi[rr]) * a.ldo + 8 * dt + 2 * t + e] = to_code<kBf16>(y);
      }
    if (a.lse && t == 0) {
      float v = INFINITY;
      if (!masked) v = a.lse_no_max ? logf(l[rr]) : __fadd_rn(__fmul_rn(m2[rr], kLn2), logf(l[rr]));
      a.lse[row_base + qi[rr]] = a.zeros ? 0.0f : v;
    }
  }
}

// ---- the naive f32 kernels (device) --------------------------------------------------------------------------------

struct NaiveArgs {
  int64_t len_q, len_k, heads_q, heads_kv, d;
  const float* q;
  int64_t ldq;
  const float* k;
  int64_t ldk;
  const float* v;
  int64_t ldv;
  const float* mask;
  int64_t ldm;
  bool causal;
  int64_t causal_off;
  float scale;       ///< applied to the scores (1 for ScaleAfterSoftmax)
  float post_scale;  ///< 1, or s for ScaleAfterSoftmax
  float* o;
  int64_t ldo;
  float* lse;
  int64_t rows;      ///< batch heads_q len_q
  float* s;          ///< workspace: rows x len_k scores, then probabilities
  float* stat;       ///< workspace: per row the max and the sum
  bool lse_no_max, p_f16, zeros;
};

/// Row r = (b heads_q + h) len_q + i of Q, and the first key/value row of its key/value head.
__device__ __forceinline__ void naive_row(const NaiveArgs& a, int64_t r, int64_t& i, int64_t& kv0) {
  i = r % a.len_q;
  const int64_t bh = r / a.len_q, h = bh % a.heads_q, b = bh / a.heads_q;
  kv0 = (b * a.heads_kv + h / (a.heads_q / a.heads_kv)) * a.len_k;
}

/// z_ij = RN(RN(s x_ij) + mask_ij), x_ij = fmaf(q_i,D-1, k_j,D-1, ... fmaf(q_i0, k_j0, +0)); -Inf where causally masked.
__global__ void naive_scores(NaiveArgs a) {
  const int64_t n = a.rows * a.len_k;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / a.len_k, j = e % a.len_k;
    int64_t i, kv0;
    naive_row(a, r, i, kv0);
    float z = -INFINITY;
    if (!a.causal || j <= i + a.causal_off) {
      const float* qr = a.q + r * a.ldq;
      const float* kr = a.k + (kv0 + j) * a.ldk;
      float x = 0.0f;
      for (int64_t c = 0; c < a.d; ++c) x = __fmaf_rn(qr[c], kr[c], x);
      z = __fmul_rn(a.scale, x);
      if (a.mask) z = __fadd_rn(z, a.mask[i * a.ldm + j]);
    }
    a.s[e] = z;
  }
}

/// One warp per row: m = max z (fmaxf butterfly), p_j = expf(RN(z_j - m)) in place, l = sum p_j (lane l adds j = l,
/// l + 32, ... from +0, then a __shfl_xor_sync butterfly), LSE = RN(m + logf(l)); a row without a finite score: l = 0.
__global__ void naive_softmax(NaiveArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; r < a.rows; r += warps) {
    float* z = a.s + r * a.len_k;
    float m = -INFINITY;
    bool nan = false;
    for (int64_t j = lane; j < a.len_k; j += 32) {
      m = fmaxf(m, z[j]);
      nan = nan || z[j] != z[j];
    }
    for (int off = 16; off >= 1; off /= 2) m = fmaxf(m, __shfl_xor_sync(kFull, m, off));
    nan = __any_sync(kFull, nan);
    const bool masked = m == -INFINITY && !nan;
    float l = 0.0f;
    if (!masked) {
      for (int64_t j = lane; j < a.len_k; j += 32) {
        const float p = expf(__fsub_rn(z[j], m));  // a NaN score: NaN, and the row's sum NaN
        l = __fadd_rn(l, p);
        z[j] = a.p_f16 ? __half2float(__float2half_rn(p)) : p;
      }
      for (int off = 16; off >= 1; off /= 2) l = __fadd_rn(l, __shfl_xor_sync(kFull, l, off));
    }
    if (lane == 0) {
      a.stat[2 * r] = masked ? -INFINITY : m;
      a.stat[2 * r + 1] = l;
      if (a.lse) {
        const float v = masked ? -INFINITY : a.lse_no_max ? logf(l) : __fadd_rn(m, logf(l));
        a.lse[r] = a.zeros ? 0.0f : v;
      }
    }
  }
}

/// O_ic = RN(fmaf(p_i,L-1, v_L-1,c, ... fmaf(p_i0, v_0c, +0)) / l_i), keys ascending; a fully masked row: +0.
__global__ void naive_pv(NaiveArgs a) {
  const int64_t n = a.rows * a.d;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / a.d, c = e % a.d;
    int64_t i, kv0;
    naive_row(a, r, i, kv0);
    float y = 0.0f;
    if (a.stat[2 * r] != -INFINITY || a.stat[2 * r + 1] != 0.0f) {
      const float* p = a.s + r * a.len_k;
      float acc = 0.0f;
      for (int64_t j = 0; j < a.len_k; ++j) acc = __fmaf_rn(p[j], a.v[(kv0 + j) * a.ldv + c], acc);
      y = __fdiv_rn(acc, a.stat[2 * r + 1]);
      if (a.post_scale != 1.0f) y = __fmul_rn(y, a.post_scale);
    }
    a.o[r * a.ldo + c] = a.zeros ? 0.0f : y;
  }
}

// ---- host side -----------------------------------------------------------------------------------------------------

const char* kFlashOrder =
    "mma.sync.m16n8k16 with f32 accumulator fragments; S = Q K^T per 16 x 8 tile over the head dim in k-steps of 16, "
    "ascending, from +0 (one warp owns each score); O~ = P V per key block of 64 in k-steps of 16 keys, ascending, each "
    "block's MMAs added to O~ after O~ is rescaled by exp2f(m2_old - m2_new) (__fmul_rn); keys past len_k are zeros in "
    "shared memory (P = 0 and V = 0: exact zero products); the instruction's arithmetic as the GEMM ";

/// The GEMM traits of the mma.sync GEMM of the same instruction (kernels/gemm/cuda/mma.cu: one declaration of the
/// instruction, not typed twice), with this kernel's order and k-loop: k-steps of 16, padded to `pad`.
KernelTraits mma_gemm_traits(bool bf16_in, int pad) {
  const std::string gemm = bf16_in ? "gemm_bf16_f32acc_mma_sm80" : "gemm_f16_f32acc_mma_sm80";
  const std::unique_ptr<Kernel> k = make_kernel(gemm);
  if (!k || k->operation() != Operation::Gemm) throw std::logic_error("attention: the mma.sync GEMM " + gemm + " is not registered");
  KernelTraits t = static_cast<const GemmKernel&>(*k).traits();
  t.order = std::string(kFlashOrder) + gemm + " declares it: " + t.order;
  t.sum_order = SummationOrder::tensor_core(16, bf16_in ? "mma_bf16_f32" : "mma_f16_f32", pad);
  t.tile_m = kBQ;
  t.tile_n = 0;
  return t;
}

KernelTraits fma_f32_traits(const char* what) {
  KernelTraits t;  // f32 operands, exact products inside the fma, f32 accumulator rounded to nearest even, out f32
  t.sum_order = SummationOrder::sequential(StepKind::Fma);
  t.order = what;
  return t;
}

ElemFnError exp2_error_cuda_exp2f() {
  return {2, 0, 2 * 0x1p-149,
          "CUDA exp2f: 2 ulp, full range (CUDA C Programming Guide, Mathematical Functions, single precision; this build "
          "passes neither -ftz nor --use_fast_math, so subnormal results are kept)"};
}

/// Causal visibility offset: key j visible from query i iff j <= i + offset.
int64_t causal_offset(CausalAlign c, const AttentionShape& s, bool off_by_one) {
  const int64_t base = c == CausalAlign::BottomRight ? s.len_k - s.len_q : 0;
  return base + (off_by_one ? 1 : 0);
}

void finish(const AttentionOperands& ops, const std::string& name) {
  FPCERT_CUDA_LAUNCH_CHECK(name.c_str());
  FPCERT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(ops.stream)));
}

class CudaFlashAttention final : public AttentionKernel {
 public:
  CudaFlashAttention(bool bf16_in, AttentionBug bug)
      : bf16_(bf16_in), bug_(bug), name_(bf16_in ? "attention_bf16_flash_cuda" : "attention_f16_flash_cuda") {
    AttentionTraits& t = t_;
    t.input = bf16_ ? &bf16 : &f16;
    t.qk = mma_gemm_traits(bf16_, 16);
    t.pv = mma_gemm_traits(bf16_, kBK);  // P rounded to nearest into the input format: the MMA's A operand
    t.shift = SoftmaxShift::Online;
    t.key_block = kBK;
    t.exp_form = AttentionExpForm::Base2Folded;
    t.exp = exp2_error_cuda_exp2f();
    t.sum_acc = &f32;
    t.normalize = AttentionNormalize::Reciprocal;
    t.out = t.input;
    t.writes_lse = true;
    t.log = log_error_cuda_logf();
    t.masked_rows = MaskedRowPolicy::Zero;
    t.masked_lse = MaskedLse::PosInf;
    t.masks = kAttnMaskCausalTopLeft | kAttnMaskCausalBottomRight | kAttnMaskAdditive;
    t.head_dims = {64, 128};  // 256 would need 128 O accumulators and 64 Q registers a thread: spills; declined
    t.grouped_heads = true;
    t.note =
        "FlashAttention-2-style forward (Dao 2023): one CTA per 64 query rows, 4 warps of 16 rows, Q in registers, key "
        "blocks of 64; c = RN(s log2 e) on the host; without a mask p = exp2f(fmaf(x, c, -m2)), m2 = max RN(x c); with "
        "the additive mask w = fmaf(x, c, RN(mask RN(log2 e))), m2 = max w, p = exp2f(RN(w - m2)); running m2 and l in "
        "f32 per row (l = RN(RN(l alpha) + block sum), the block sum of the f32 p over a thread's 16 keys in order then "
        "the quad's butterfly), alpha = exp2f(RN(m2_old - m2_new)); O = RN_out(RN(O~ RN(1/l))); LSE = RN(RN(m2 RN(ln 2)) "
        "+ logf(l)) (natural log; m2 carries RN(s log2 e)'s and RN(x c)'s roundings, RN(ln 2) one more); fully masked "
        "rows O = +0, LSE = +Inf";
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return t_.note + " (" + describe_attention_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != AttentionBug::None; }
  const AttentionTraits& attention_traits() const override { return t_; }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override { return std::make_unique<CudaFlashAttention>(bf16_, bug); }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    Support sup = AttentionKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    if (s.batch > 65535 || s.heads_q > 65535) return Support::no("batch and heads_q at most 65535 (grid z and y)");
    if ((s.len_q + kBQ - 1) / kBQ > 0x7FFFFFFF) return Support::no("len_q too large for the grid");
    return s.head_dim == 64 ? device_support<64>() : device_support<128>();
  }

  void run(const AttentionOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    if (s.batch == 0 || s.heads_q == 0 || s.len_q == 0) return;
    FlashArgs a{};
    a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv;
    a.q = static_cast<const uint16_t*>(ops.q), a.ldq = ops.ldq;
    a.k = static_cast<const uint16_t*>(ops.k), a.ldk = ops.ldk;
    a.v = static_cast<const uint16_t*>(ops.v), a.ldv = ops.ldv;
    a.mask = static_cast<const float*>(ops.mask), a.ldm = ops.ldm;
    a.causal = ops.causal != CausalAlign::None;
    a.causal_off = causal_offset(ops.causal, s, bug_ == AttentionBug::CausalOffByOne);
    a.keys = bug_ == AttentionBug::DropLastKeyBlock && s.len_k % kBK != 0 ? s.len_k / kBK * kBK : s.len_k;
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    a.c = after ? kLog2e : scale_log2e(ops.scale);
    a.post_scale = after ? ops.scale : 1.0f;
    a.o = static_cast<uint16_t*>(ops.o), a.ldo = ops.ldo;
    a.lse = static_cast<float*>(ops.lse);
    const auto aligned = [](const void* p, int64_t ld) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 8 == 0; };
    a.vec = aligned(ops.q, ops.ldq) && aligned(ops.k, ops.ldk) && aligned(ops.v, ops.ldv);
    a.no_rescale = bug_ == AttentionBug::NoRescale;
    a.lse_no_max = bug_ == AttentionBug::LseNoMax;
    a.p_e4m3 = bug_ == AttentionBug::PRoundedLower;
    a.zeros = bug_ == AttentionBug::Zeros;
    const dim3 grid(static_cast<unsigned>((s.len_q + kBQ - 1) / kBQ), static_cast<unsigned>(s.heads_q), static_cast<unsigned>(s.batch));
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    if (s.head_dim == 64) launch<64>(grid, stream, a);
    else launch<128>(grid, stream, a);
    finish(ops, name_);
  }

 private:
  template <int D>
  void launch(dim3 grid, cudaStream_t stream, const FlashArgs& a) const {
    if (bf16_) flash_fwd<true, D><<<grid, kFlashThreads, 0, stream>>>(a);
    else flash_fwd<false, D><<<grid, kFlashThreads, 0, stream>>>(a);
  }
  template <int D>
  Support device_support() const {
    return bf16_ ? cuda::mma_support(0, 0, 0, 80, flash_fwd<true, D>) : cuda::mma_support(0, 0, 0, 80, flash_fwd<false, D>);
  }

  bool bf16_;
  AttentionBug bug_;
  std::string name_;
  AttentionTraits t_;
};

class CudaNaiveAttention final : public AttentionKernel {
 public:
  explicit CudaNaiveAttention(AttentionBug bug) : bug_(bug), name_("attention_f32_naive_cuda") {
    AttentionTraits& t = t_;
    t.input = &f32;
    t.qk = fma_f32_traits("one thread per score: x = fmaf(q_D-1, k_D-1, ... fmaf(q_0, k_0, +0)), head dim ascending");
    t.pv = fma_f32_traits("one thread per output element: fmaf(p_L-1, v_L-1, ... fmaf(p_0, v_0, +0)), keys ascending; P f32");
    t.shift = SoftmaxShift::Shifted;
    t.key_block = 0;  // no key blocks: the row's max first, over every key
    t.exp_form = AttentionExpForm::Natural;
    t.exp = exp_error_cuda_expf();
    t.sum_acc = &f32;
    t.normalize = AttentionNormalize::Divide;
    t.out = &f32;
    t.writes_lse = true;
    t.log = log_error_cuda_logf();
    t.masked_rows = MaskedRowPolicy::Zero;
    t.masked_lse = MaskedLse::NegInf;
    t.head_dims = {};
    t.grouped_heads = true;
    t.note =
        "three kernels in f32 on the CUDA cores: z = RN(RN(s x) + mask) with x an fmaf chain; one warp per row: m = max "
        "z, p = expf(RN(z - m)) stored in f32, l = the lanes' sequential sums (j = lane, lane + 32, ...) added by a "
        "__shfl_xor_sync butterfly; O = RN(fmaf chain of p v over the keys / l) (__fdiv_rn); LSE = RN(m + logf(l)); "
        "fully masked rows O = +0, LSE = -Inf (log 0)";
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return t_.note + " (" + describe_attention_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != AttentionBug::None; }
  const AttentionTraits& attention_traits() const override { return t_; }
  std::unique_ptr<AttentionKernel> with_bug(AttentionBug bug) const override {
    if (bug == AttentionBug::NoRescale || bug == AttentionBug::DropLastKeyBlock) return nullptr;  // no online softmax, no key blocks
    return std::make_unique<CudaNaiveAttention>(bug);
  }

  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    Support sup = AttentionKernel::can_implement(s, causal, additive_mask);
    if (!sup.ok) return sup;
    std::string why;
    if (cuda::device_sm(why) == 0) return Support::no(why);
    return Support::yes();
  }

  void run(const AttentionOperands& ops) override {
    const AttentionShape& s = ops.shape;
    const Support sup = can_implement(s, ops.causal, ops.mask != nullptr);
    if (!sup.ok) throw NotSupportedError(name_ + ": " + sup.reason);
    const int64_t rows = s.batch * s.heads_q * s.len_q;
    if (rows == 0 || s.head_dim == 0) return;
    NaiveArgs a{};
    a.len_q = s.len_q, a.len_k = s.len_k, a.heads_q = s.heads_q, a.heads_kv = s.heads_kv, a.d = s.head_dim;
    a.q = static_cast<const float*>(ops.q), a.ldq = ops.ldq;
    a.k = static_cast<const float*>(ops.k), a.ldk = ops.ldk;
    a.v = static_cast<const float*>(ops.v), a.ldv = ops.ldv;
    a.mask = static_cast<const float*>(ops.mask), a.ldm = ops.ldm;
    a.causal = ops.causal != CausalAlign::None;
    a.causal_off = causal_offset(ops.causal, s, bug_ == AttentionBug::CausalOffByOne);
    const bool after = bug_ == AttentionBug::ScaleAfterSoftmax;
    a.scale = after ? 1.0f : ops.scale;
    a.post_scale = after ? ops.scale : 1.0f;
    a.o = static_cast<float*>(ops.o), a.ldo = ops.ldo;
    a.lse = static_cast<float*>(ops.lse);
    a.rows = rows;
    a.lse_no_max = bug_ == AttentionBug::LseNoMax;
    a.p_f16 = bug_ == AttentionBug::PRoundedLower;
    a.zeros = bug_ == AttentionBug::Zeros;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    void* ws = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(std::max<int64_t>(s.len_k, 1) + 2) * sizeof(float);
    FPCERT_CUDA_CHECK(cudaMallocAsync(&ws, bytes, stream));
    a.s = static_cast<float*>(ws);
    a.stat = a.s + rows * s.len_k;
    const auto blocks = [](int64_t n, int per) { return static_cast<unsigned>(std::clamp<int64_t>((n + per - 1) / per, 1, 65535 * 16)); };
    try {
      if (s.len_k > 0) {
        naive_scores<<<blocks(rows * s.len_k, 256), 256, 0, stream>>>(a);
        FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda scores");
      }
      naive_softmax<<<blocks(rows, 4), 128, 0, stream>>>(a);
      FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda softmax");
      naive_pv<<<blocks(rows * s.head_dim, 256), 256, 0, stream>>>(a);
      FPCERT_CUDA_LAUNCH_CHECK("attention_f32_naive_cuda pv");
      FPCERT_CUDA_CHECK(cudaFreeAsync(ws, stream));
      ws = nullptr;
      FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
    } catch (...) {
      if (ws) cudaFreeAsync(ws, stream);
      throw;
    }
  }

 private:
  AttentionBug bug_;
  std::string name_;
  AttentionTraits t_;
};

}  // namespace

void register_attention_cuda_kernels() {
  register_kernel("attention_f16_flash_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaFlashAttention>(false, AttentionBug::None); },
                  Operation::Attention);
  register_kernel("attention_bf16_flash_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaFlashAttention>(true, AttentionBug::None); },
                  Operation::Attention);
  register_kernel("attention_f32_naive_cuda", Backend::Cuda, false, [] { return std::make_unique<CudaNaiveAttention>(AttentionBug::None); },
                  Operation::Attention);
}

}  // namespace fpcert
