// kernels/attention/cuda/attention_bwd_kernel.cuh — the device code of the flash attention backward built-ins
// (kernels/attention/cuda/attention_bwd_cuda.cu: traits, launches, registration; docs/backward.md, "Attention backward",
// "CUDA kernels"). FlashAttention-2's backward (Dao 2023, Algorithm 2) on mma.sync.m16n8k16 with f32 accumulators:
//   bwd_dot:      D_i = sum_c dO_ic O_ic, one warp per row (lane l: c = l, l + 32, ... an fmaf chain from +0; then a
//                 __shfl_xor_sync butterfly 16, 8, 4, 2, 1); f16/bf16 products are exact in f32;
//   bwd_flash_kv: one CTA per (key block of 64, key/value head, batch), 4 warps, warp w owning keys 16w .. 16w + 15 of
//                 the block; it loops over the group's query heads (ascending) and their query blocks of 64 (ascending,
//                 from the first the causal mask lets see the block): S^T = K Q^T recomputed, P^T = exp2(fma(x, c, -l2))
//                 with l2 = RN(LSE RN(log2 e)), dV += P^T dO (P rounded into the input format), dP^T = V dO^T,
//                 dS^T = RN(P RN(dP - D)) in f32, dK += dS^T Q (dS rounded into the input format); dK and dV stay in
//                 the MMA accumulators over every query block of every head of the group, then dK = RN_out(RN(s dK~)),
//                 dV = RN_out(dV~). With dq_atomic it also writes dS (input format) to shared memory and each warp adds
//                 its 16 queries' dS K (an MMA chain over the block's 64 keys from +0) into the f32 dQ~ buffer, one
//                 compare-and-swap __fadd_rn per element (atomicAdd on f32 flushes subnormals: PTX ISA, atom);
//   bwd_dq_convert: dQ = RN_out(RN(s dQ~));
//   bwd_flash_dq: the deterministic dQ: one CTA per (query block of 64, query head, batch), warp w owning queries 16w ..
//                 16w + 15, looping over the key blocks in ascending order: S = Q K^T, P, dP = dO V^T, dS as above,
//                 dQ~ += dS K in the MMA accumulators (one chain over every key), then dQ = RN_out(RN(s dQ~)).
// The fault switches of AttentionBwdBug are arguments (BwdArgs), so a mutant runs this same code.
//
// Fragments (PTX ISA "Matrix Fragments for mma.m16n8k16", g = lane / 4, t = lane % 4; kernels/attention/cuda/
// flash_kernel.cuh's header): A register r = A[g + 8 (r & 1)][2t + 8 (r >> 1) + {0, 1}], B register r = B[2t + 8r + {0, 1}][g],
// C c_i = C[g + 8 (i >> 1)][2t + (i & 1)]. The C layout of two 8-column tiles is the A layout of one 16-deep k-step, so
// P^T and dS^T feed dV and dK from registers, as P feeds P V in the forward. Every B operand is read as 32-bit words of
// a shared tile whose k index is contiguous: Qs/dOs [query][d] (S^T, dP^T: k = d), Qt/dOt [d][query] (dK, dV: k =
// query), Kt [d][key] (dQ: k = key); the A operands K and V of S^T, dP^T from Ks/Vs [key][d]. Rows padded by 8 halves.
//
// With FPCERT_MMA_EMULATION defined the same code compiles as host C++ (tests/kernels/attention/
// attention_bwd_cuda_emulation_test.cpp runs it with threads, barriers, shuffles, the emulated MMA and atomics).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/attention/cuda/flash_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

#if defined(FPCERT_MMA_EMULATION)
float emulated_from16(bool bf16_in, std::uint16_t code);  ///< defined by the emulation: an f16/bf16 code's value
void emulated_atomic_add_f32(float* p, float v);          ///< p = RN_f32(p + v), atomically
void emulated_atomic_add_bf16(std::uint16_t* p, float v);  ///< p = RN_bf16(p + RN_bf16(v)), atomically
template <bool kBf16>
inline float from_code(std::uint16_t c) { return emulated_from16(kBf16, c); }
inline void atomic_add_rn(float* p, float v) { emulated_atomic_add_f32(p, v); }
inline void atomic_add_bf16(std::uint16_t* p, float v) { emulated_atomic_add_bf16(p, v); }
#else
template <bool kBf16>
__device__ __forceinline__ float from_code(std::uint16_t c) {
  if constexpr (kBf16) return __bfloat162float(__ushort_as_bfloat16(c));
  else return __half2float(__ushort_as_half(c));
}
/// p = RN(p + v) in f32 with subnormals kept (atomicAdd's atom.add.f32 flushes them): a compare-and-swap loop.
__device__ __forceinline__ void atomic_add_rn(float* p, float v) {
  unsigned* word = reinterpret_cast<unsigned*>(p);
  unsigned seen = *word, assumed;
  do {
    assumed = seen;
    seen = atomicCAS(word, assumed, __float_as_uint(__fadd_rn(__uint_as_float(assumed), v)));
  } while (seen != assumed);
}
/// The DqAtomicsBf16 fault: v rounded into bf16 and added into a bf16 buffer (atom.add.bf16, sm_90).
__device__ __forceinline__ void atomic_add_bf16(std::uint16_t* p, float v) {
  atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __float2bfloat16_rn(v));
}
#endif

constexpr int kBwdBlock = 64, kBwdThreads = 128;
static_assert(kBwdBlock == 16 * (kBwdThreads / 32), "4 warps of 16 rows");

struct BwdArgs {
  std::int64_t batch, len_q, len_k, heads_q, heads_kv;
  const std::uint16_t *q, *k, *v, *o, *d_o;
  std::int64_t ldq, ldk, ldv, ldo, lddo;
  const float* lse;
  const float* mask;
  std::int64_t ldm;
  bool causal;
  std::int64_t causal_off;  ///< key j visible from query i iff j <= i + causal_off (CausalOffByOne: one more)
  float c;                  ///< RN(s log2 e)
  float fold;               ///< s: the mask folded into x as RN(mask / s)
  float scale;              ///< s, applied to dK and dQ once after their sums (0 / twice: the faults)
  int dq_scales;            ///< how many times dQ is multiplied by s: 1 (0 and 2: DqScaleMissing, DqScaleTwice)
  bool lse_wrong_base;          ///< LseWrongBase: l2 = LSE (not RN(LSE RN(log2 e)))
  bool d_from_do;           ///< DFromWrongO: D = sum dO dO
  bool no_d;                ///< NoDSubtract: dS = P dP
  bool gqa_last;            ///< GqaNotSummed: dK, dV of the group's last head only
  bool zeros;               ///< Zeros
  bool vec;                 ///< 16-byte loads: Q, K, V, dO 16-byte aligned with leading dimensions multiples of 8
  float* delta;             ///< D, batch heads_q len_q (workspace)
  float* dq_acc;            ///< dQ~ in f32, [row][D] (atomic dQ), or null
  std::uint16_t* dq_acc16;  ///< dQ~ in bf16 (DqAtomicsBf16), or null
  std::uint16_t *dq, *dk, *dv;
  std::int64_t lddq, lddk, lddv;
};

/// D_i = sum_c dO_ic O_ic (DFromWrongO: dO_ic dO_ic) for every row, one warp per row; T: f16/bf16 codes or f32.
template <class T, bool kBf16>
__global__ void bwd_dot(BwdArgs a, std::int64_t d, const T* o, std::int64_t ldo, const T* d_o, std::int64_t lddo) {
  const auto val = [](T x) {
    if constexpr (sizeof(T) == 2) return from_code<kBf16>(x);
    else return x;
  };
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t rows = a.batch * a.heads_q * a.len_q, warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    const T* x = (a.d_from_do ? d_o + r * lddo : o + r * ldo);
    const T* y = d_o + r * lddo;
    float acc = 0.0f;
    for (std::int64_t c = lane; c < d; c += 32) acc = f_fma(val(y[c]), val(x[c]), acc);
    for (int off = 16; off >= 1; off /= 2) acc = f_add(acc, shfl_xor(acc, off));
    if (lane == 0) a.delta[r] = acc;
  }
}

/// l2 = RN(LSE RN(log2 e)) of an LSE (LseWrongBase: the LSE itself); a fully masked row (LSE +-Inf): +Inf, so P = 0.
__device__ __forceinline__ float bwd_l2(const BwdArgs& a, float lse) {
  if (lse == INFINITY || lse == -INFINITY) return INFINITY;
  return a.lse_wrong_base ? lse : f_mul(lse, kLog2e);
}

/// P_ij = exp2(fma(x, c, -l2_i)) of the raw score x = q_i . k_j (the mask folded in as RN(x + RN(mask / s)), as the
/// forward does); 0 where the key is past len_k, the query past len_q, causally masked or the row fully masked.
__device__ __forceinline__ float bwd_prob(const BwdArgs& a, float x, std::int64_t i, std::int64_t j, float l2) {
  if (i >= a.len_q || j >= a.len_k || (a.causal && j > i + a.causal_off) || l2 == INFINITY) return 0.0f;
  if (a.mask) x = f_add(x, f_div(a.mask[i * a.ldm + j], a.fold));
  return f_exp2(f_fma(x, a.c, -l2));
}

/// dS = RN(P RN(dP - D)) (NoDSubtract: RN(P dP)).
__device__ __forceinline__ float bwd_ds(const BwdArgs& a, float p, float dp, float dd) { return f_mul(p, a.no_d ? dp : f_sub(dp, dd)); }

/// y = RN(s y) `times` times.
__device__ __forceinline__ float bwd_scaled(float y, float s, int times) {
  for (int n = 0; n < times; ++n) y = f_mul(y, s);
  return y;
}

/// A-operand fragment of k-step kk from a [row][k] tile (row stride ld halves), rows r0 .. r0 + 15.
__device__ __forceinline__ void bwd_frag_a(std::uint32_t (&f)[4], const std::uint16_t* tile, int ld, int r0, int kk, int g, int t) {
  FPCERT_UNROLL
  for (int r = 0; r < 4; ++r) f[r] = word_at(tile + (r0 + g + 8 * (r & 1)) * ld + 16 * kk + 2 * t + 8 * (r >> 1));
}
/// B-operand fragment of k-step kk, column tile nt, from a [column][k] tile (row stride ld halves).
__device__ __forceinline__ void bwd_frag_b(std::uint32_t (&f)[2], const std::uint16_t* tile, int ld, int nt, int kk, int g, int t) {
  const std::uint16_t* p = tile + (8 * nt + g) * ld + 16 * kk + 2 * t;
  f[0] = word_at(p);
  f[1] = word_at(p + 8);
}
/// The A fragment of k-step kk of a 16 x 64 C-layout block x[8][4] (rows of the warp, 64 columns), rounded into the
/// input format.
template <bool kBf16>
__device__ __forceinline__ void bwd_frag_c2a(std::uint32_t (&f)[4], const float (&x)[8][4], int kk) {
  f[0] = pack2<kBf16>(x[2 * kk][0], x[2 * kk][1]);
  f[1] = pack2<kBf16>(x[2 * kk][2], x[2 * kk][3]);
  f[2] = pack2<kBf16>(x[2 * kk + 1][0], x[2 * kk + 1][1]);
  f[3] = pack2<kBf16>(x[2 * kk + 1][2], x[2 * kk + 1][3]);
}

/// Every accumulator of x to +0.
template <int N>
__device__ __forceinline__ void bwd_zero(float (&x)[N][4]) {
  FPCERT_UNROLL
  for (int n = 0; n < N; ++n) x[n][0] = x[n][1] = x[n][2] = x[n][3] = 0.0f;
}

/// x = A1 B1^T and y = A2 B2^T from +0 for the warp's 16 rows x 64 columns, over the head dim (kKk k-steps of 16,
/// ascending): fa(kk, a1, a2) gives the A fragments of step kk, b1 and b2 are [column][d] tiles (row stride ld).
template <Mma M, int kKk, class FragA>
__device__ __forceinline__ void bwd_two_products(float (&x)[8][4], float (&y)[8][4], FragA fa, const std::uint16_t* b1,
                                                 const std::uint16_t* b2, int ld, int g, int t) {
  bwd_zero(x);
  bwd_zero(y);
  FPCERT_UNROLL
  for (int kk = 0; kk < kKk; ++kk) {
    std::uint32_t a1[4], a2[4];
    fa(kk, a1, a2);
    FPCERT_UNROLL
    for (int nt = 0; nt < 8; ++nt) {
      std::uint32_t f1[2], f2[2];
      bwd_frag_b(f1, b1, ld, nt, kk, g, t);
      bwd_frag_b(f2, b2, ld, nt, kk, g, t);
      flash_mma<M>(x[nt], a1, f1);
      flash_mma<M>(y[nt], a2, f2);
    }
  }
}

/// acc += A B over 64 (4 k-steps of 16, ascending): fa(kk, a) gives the A fragment of step kk, bt is a [d][64] tile.
template <Mma M, int kDt, class FragA>
__device__ __forceinline__ void bwd_times_tile(float (&acc)[kDt][4], FragA fa, const std::uint16_t* bt, int g, int t) {
  FPCERT_UNROLL
  for (int kk = 0; kk < 4; ++kk) {
    std::uint32_t f[4];
    fa(kk, f);
    FPCERT_UNROLL
    for (int dt = 0; dt < kDt; ++dt) {
      std::uint32_t b[2];
      bwd_frag_b(b, bt, kBwdBlock + 8, dt, kk, g, t);
      flash_mma<M>(acc[dt], f, b);
    }
  }
}

/// Shared memory of bwd_flash_kv in halves (then 2 x 64 floats): Ks, Vs, Qs, dOs [64][D + 8]; Qt, dOt, Kt [D][72];
/// dSs [64][72].
template <int D>
constexpr int bwd_kv_smem_halves() {
  return 4 * kBwdBlock * (D + 8) + 3 * D * (kBwdBlock + 8) + kBwdBlock * (kBwdBlock + 8);
}
template <int D>
constexpr int bwd_kv_smem_bytes() {
  return 2 * bwd_kv_smem_halves<D>() + 2 * kBwdBlock * 4;
}
/// bwd_flash_dq: Ks, Vs [64][D + 8], Kt [D][72] (Q's and dO's blocks pass through Ks and Vs first).
template <int D>
constexpr int bwd_dq_smem_bytes() {
  return 2 * (2 * kBwdBlock * (D + 8) + D * (kBwdBlock + 8));
}

#if defined(FPCERT_MMA_EMULATION)
unsigned char* emulated_dynamic_smem();  ///< defined by the emulation: the CTA's dynamic shared memory
#define FPCERT_BWD_SMEM(name) unsigned char* name = emulated_dynamic_smem()
#else
#define FPCERT_BWD_SMEM(name) \
  extern __shared__ __align__(16) unsigned char fpcert_bwd_smem[]; \
  unsigned char* name = fpcert_bwd_smem
#endif

template <bool kBf16, int D>
__global__ void __launch_bounds__(kBwdThreads) bwd_flash_kv(BwdArgs a) {
  constexpr Mma kMma = kBf16 ? Mma::BF16 : Mma::F16;
  constexpr int kLd = D + 8, kLdT = kBwdBlock + 8, kDt = D / 8, kKk = D / 16;
  FPCERT_BWD_SMEM(raw);
  std::uint16_t* const ks = reinterpret_cast<std::uint16_t*>(raw);
  std::uint16_t* const vs = ks + kBwdBlock * kLd;
  std::uint16_t* const qs = vs + kBwdBlock * kLd;
  std::uint16_t* const dos = qs + kBwdBlock * kLd;
  std::uint16_t* const qt = dos + kBwdBlock * kLd;
  std::uint16_t* const dot = qt + D * kLdT;
  std::uint16_t* const kt = dot + D * kLdT;
  std::uint16_t* const dss = kt + D * kLdT;
  float* const l2s = reinterpret_cast<float*>(dss + kBwdBlock * kLdT);
  float* const dds = l2s + kBwdBlock;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const std::int64_t b = blockIdx.z, hk = blockIdx.y, kb = static_cast<std::int64_t>(blockIdx.x) * kBwdBlock;
  const std::int64_t group = a.heads_q / a.heads_kv;
  const std::int64_t kv_row0 = (b * a.heads_kv + hk) * a.len_k;
  const bool vec = a.vec;
  load_block<D, false>(ks, kLd, a.k + kv_row0 * a.ldk, a.ldk, kb, a.len_k, vec);
  load_block<D, false>(vs, kLd, a.v + kv_row0 * a.ldv, a.ldv, kb, a.len_k, vec);
  if (a.dq_acc || a.dq_acc16) load_block<D, true>(kt, kLdT, a.k + kv_row0 * a.ldk, a.ldk, kb, a.len_k, vec);

  float dk[kDt][4], dv[kDt][4];
  bwd_zero(dk);
  bwd_zero(dv);
  // The first query block that sees a key of this block: query i sees key kb iff i >= kb - causal_off.
  std::int64_t q_first = 0;
  if (a.causal) q_first = std::max<std::int64_t>(0, kb - a.causal_off) / kBwdBlock * kBwdBlock;
  for (std::int64_t hh = 0; hh < group; ++hh) {
    const std::int64_t h = hk * group + hh, row0 = (b * a.heads_q + h) * a.len_q;
    if (a.gqa_last) {
      bwd_zero(dk);
      bwd_zero(dv);
    }
    for (std::int64_t q0 = q_first; q0 < a.len_q; q0 += kBwdBlock) {
      __syncthreads();  // every warp done with the previous query block's tiles (and dSs)
      load_block<D, false>(qs, kLd, a.q + row0 * a.ldq, a.ldq, q0, a.len_q, vec);
      load_block<D, true>(qt, kLdT, a.q + row0 * a.ldq, a.ldq, q0, a.len_q, vec);
      load_block<D, false>(dos, kLd, a.d_o + row0 * a.lddo, a.lddo, q0, a.len_q, vec);
      load_block<D, true>(dot, kLdT, a.d_o + row0 * a.lddo, a.lddo, q0, a.len_q, vec);
      for (int r = static_cast<int>(threadIdx.x); r < kBwdBlock; r += kBwdThreads) {
        const bool in = q0 + r < a.len_q;
        l2s[r] = in ? bwd_l2(a, a.lse[row0 + q0 + r]) : INFINITY;
        dds[r] = in ? a.delta[row0 + q0 + r] : 0.0f;
      }
      __syncthreads();

      // S^T = K Q^T: st[nt][i] = S[query q0 + 8 nt + 2t + (i & 1)][key kb + 16 warp + g + 8 (i >> 1)].
      float st[8][4], dp[8][4];
      bwd_two_products<kMma, kKk>(
          st, dp,
          [&](int kk, std::uint32_t (&kf)[4], std::uint32_t (&vf)[4]) {
            bwd_frag_a(kf, ks, kLd, 16 * warp, kk, g, t);
            bwd_frag_a(vf, vs, kLd, 16 * warp, kk, g, t);
          },
          qs, dos, kLd, g, t);  // and dP^T = V dO^T
      // P^T, then dS^T = RN(P RN(dP - D)) in place of dP^T.
      FPCERT_UNROLL
      for (int nt = 0; nt < 8; ++nt)
        FPCERT_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int qc = 8 * nt + 2 * t + (i & 1);
          const std::int64_t j = kb + 16 * warp + g + 8 * (i >> 1);
          st[nt][i] = bwd_prob(a, st[nt][i], q0 + qc, j, l2s[qc]);
          dp[nt][i] = bwd_ds(a, st[nt][i], dp[nt][i], dds[qc]);
        }
      // dV += P^T dO, dK += dS^T Q over the block's 64 queries, k-steps of 16 ascending.
      bwd_times_tile<kMma>(dv, [&](int kk, std::uint32_t (&f)[4]) { bwd_frag_c2a<kBf16>(f, st, kk); }, dot, g, t);
      bwd_times_tile<kMma>(dk, [&](int kk, std::uint32_t (&f)[4]) { bwd_frag_c2a<kBf16>(f, dp, kk); }, qt, g, t);
      if (!a.dq_acc && !a.dq_acc16) continue;
      // Atomic dQ: dS (input format) into dSs[query][key], then warp w's queries 16w .. 16w + 15 times K's block.
      FPCERT_UNROLL
      for (int nt = 0; nt < 8; ++nt)
        FPCERT_UNROLL
        for (int i = 0; i < 4; ++i) dss[(8 * nt + 2 * t + (i & 1)) * kLdT + 16 * warp + g + 8 * (i >> 1)] = to_code<kBf16>(dp[nt][i]);
      __syncthreads();
      float dq[kDt][4];
      bwd_zero(dq);
      bwd_times_tile<kMma>(dq, [&](int kk, std::uint32_t (&f)[4]) { bwd_frag_a(f, dss, kLdT, 16 * warp, kk, g, t); }, kt, g, t);
      FPCERT_UNROLL
      for (int i = 0; i < 4; ++i) {
        const std::int64_t qi = q0 + 16 * warp + g + 8 * (i >> 1);
        if (qi >= a.len_q) continue;
        FPCERT_UNROLL
        for (int dt = 0; dt < kDt; ++dt) {
          const std::int64_t e = (row0 + qi) * D + 8 * dt + 2 * t + (i & 1);
          if (a.dq_acc16) atomic_add_bf16(a.dq_acc16 + e, dq[dt][i]);
          else atomic_add_rn(a.dq_acc + e, dq[dt][i]);
        }
      }
    }
  }
  // dK = RN_out(RN(s dK~)), dV = RN_out(dV~) for the warp's keys below len_k.
  FPCERT_UNROLL
  for (int i = 0; i < 4; ++i) {
    const std::int64_t j = kb + 16 * warp + g + 8 * (i >> 1);
    if (j >= a.len_k) continue;
    FPCERT_UNROLL
    for (int dt = 0; dt < kDt; ++dt) {
      const int c = 8 * dt + 2 * t + (i & 1);
      a.dk[(kv_row0 + j) * a.lddk + c] = to_code<kBf16>(a.zeros ? 0.0f : f_mul(dk[dt][i], a.scale));
      a.dv[(kv_row0 + j) * a.lddv + c] = to_code<kBf16>(a.zeros ? 0.0f : dv[dt][i]);
    }
  }
}

/// dQ = RN_out(RN(s dQ~)) (dq_scales times s) from the atomic buffer, for rows x D elements (grid-stride).
template <bool kBf16>
__global__ void bwd_dq_convert(BwdArgs a, std::int64_t d) {
  const std::int64_t n = a.batch * a.heads_q * a.len_q * d, stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const float acc = a.dq_acc16 ? from_code<true>(a.dq_acc16[e]) : a.dq_acc[e];
    a.dq[(e / d) * a.lddq + e % d] = to_code<kBf16>(a.zeros ? 0.0f : bwd_scaled(acc, a.scale, a.dq_scales));
  }
}

/// The deterministic dQ: one CTA per (query block, query head, batch); key blocks in ascending order.
template <bool kBf16, int D>
__global__ void __launch_bounds__(kBwdThreads) bwd_flash_dq(BwdArgs a) {
  constexpr Mma kMma = kBf16 ? Mma::BF16 : Mma::F16;
  constexpr int kLd = D + 8, kLdT = kBwdBlock + 8, kDt = D / 8, kKk = D / 16;
  FPCERT_BWD_SMEM(raw);
  std::uint16_t* const ks = reinterpret_cast<std::uint16_t*>(raw);
  std::uint16_t* const vs = ks + kBwdBlock * kLd;
  std::uint16_t* const kt = vs + kBwdBlock * kLd;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const std::int64_t b = blockIdx.z, h = blockIdx.y, q0 = static_cast<std::int64_t>(blockIdx.x) * kBwdBlock;
  const std::int64_t hk = h / (a.heads_q / a.heads_kv), row0 = (b * a.heads_q + h) * a.len_q, kv_row0 = (b * a.heads_kv + hk) * a.len_k;
  const bool vec = a.vec;
  // Q's and dO's blocks into registers (through Ks's and Vs's space).
  load_block<D, false>(ks, kLd, a.q + row0 * a.ldq, a.ldq, q0, a.len_q, vec);
  load_block<D, false>(vs, kLd, a.d_o + row0 * a.lddo, a.lddo, q0, a.len_q, vec);
  __syncthreads();
  std::uint32_t qf[kKk][4], of[kKk][4];
  FPCERT_UNROLL
  for (int kk = 0; kk < kKk; ++kk) {
    bwd_frag_a(qf[kk], ks, kLd, 16 * warp, kk, g, t);
    bwd_frag_a(of[kk], vs, kLd, 16 * warp, kk, g, t);
  }
  std::int64_t qi[2];
  float l2[2], dd[2];
  FPCERT_UNROLL
  for (int rr = 0; rr < 2; ++rr) {
    qi[rr] = q0 + 16 * warp + g + 8 * rr;
    const bool in = qi[rr] < a.len_q;
    l2[rr] = in ? bwd_l2(a, a.lse[row0 + qi[rr]]) : INFINITY;
    dd[rr] = in ? a.delta[row0 + qi[rr]] : 0.0f;
  }
  float dq[kDt][4];
  bwd_zero(dq);

  std::int64_t kend = a.len_k;
  if (a.causal) kend = std::min(kend, std::min<std::int64_t>(q0 + kBwdBlock - 1, a.len_q - 1) + a.causal_off + 1);
  for (std::int64_t kb = 0; kb < kend; kb += kBwdBlock) {
    __syncthreads();  // every warp done with the previous block (and with Q's and dO's tiles)
    load_block<D, false>(ks, kLd, a.k + kv_row0 * a.ldk, a.ldk, kb, a.len_k, vec);
    load_block<D, false>(vs, kLd, a.v + kv_row0 * a.ldv, a.ldv, kb, a.len_k, vec);
    load_block<D, true>(kt, kLdT, a.k + kv_row0 * a.ldk, a.ldk, kb, a.len_k, vec);
    __syncthreads();
    // S = Q K^T and dP = dO V^T: s[nt][i] = S[query qi[i >> 1]][key kb + 8 nt + 2t + (i & 1)].
    float s[8][4], dp[8][4];
    bwd_two_products<kMma, kKk>(
        s, dp,
        [&](int kk, std::uint32_t (&qa)[4], std::uint32_t (&oa)[4]) {
          FPCERT_UNROLL
          for (int r = 0; r < 4; ++r) qa[r] = qf[kk][r], oa[r] = of[kk][r];
        },
        ks, vs, kLd, g, t);
    FPCERT_UNROLL
    for (int nt = 0; nt < 8; ++nt)
      FPCERT_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int rr = i >> 1;
        const float p = bwd_prob(a, s[nt][i], qi[rr], kb + 8 * nt + 2 * t + (i & 1), l2[rr]);
        dp[nt][i] = bwd_ds(a, p, dp[nt][i], dd[rr]);
      }
    // dQ~ += dS K over the block's 64 keys, k-steps of 16 ascending.
    bwd_times_tile<kMma>(dq, [&](int kk, std::uint32_t (&f)[4]) { bwd_frag_c2a<kBf16>(f, dp, kk); }, kt, g, t);
  }
  FPCERT_UNROLL
  for (int i = 0; i < 4; ++i) {
    const std::int64_t q = qi[i >> 1];
    if (q >= a.len_q) continue;
    FPCERT_UNROLL
    for (int dt = 0; dt < kDt; ++dt)
      a.dq[(row0 + q) * a.lddq + 8 * dt + 2 * t + (i & 1)] = to_code<kBf16>(a.zeros ? 0.0f : bwd_scaled(dq[dt][i], a.scale, a.dq_scales));
  }
}

}  // namespace fpcert::FPCERT_MMA_NS
