// kernels/attention/cuda/flash_fp8_kernel.cuh — the device code of the FP8 flash attention built-in
// (kernels/attention/cuda/attention_cuda.cu: traits, launch, registration; docs/attention.md, "FP8 and descale factors").
//
// FlashAttention-3's FP8 forward arithmetic (hopper/mainloop and softmax.h: the descales folded into the scale, the
// probabilities offset by Max_offset = 8 so that P uses e4m3's range, the V descale folded into the normalisation) on
// Ada/Hopper mma.sync.m16n8k32.row.col.f32.e4m3.e4m3.f32, in the tile design of flash_kernel.cuh: one CTA per 64 query
// rows, 4 warps of 16 rows, key blocks of 64, Q in registers. Shared memory holds bytes: K's block row-major
// Ks[64][D + 16] (Q's block first), V's block transposed Vt[D][64 + 16].
//
// Fragments of m16n8k32 (PTX ISA, "Matrix Fragments for mma.m16n8k32"; kernels/gemm/cuda/mma_kernel.cuh's map), g = lane
// / 4, t = lane % 4; each register 4 bytes, the lowest k in the lowest byte:
//   A (16 x 32, row): register r holds A[g + 8 (r & 1)][4t + 16 (r >> 1) + {0..3}];
//   B (32 x 8, col):  register r holds B[4t + 16r + {0..3}][g];
//   C (16 x 8, f32):  c_i = C[g + 8 (i >> 1)][2t + (i & 1)].
// S = Q K^T: A = Q (word Qs[16w + g + 8 (r & 1)][32 kk + 4t + 16 (r >> 1)]), B = K^T (word Ks[8 nt + g][32 kk + 4t + 16r]),
// per warp 16 rows x 64 keys as 8 n-tiles, D / 32 k-steps. s[nt][i] = S[row g + 8 (i >> 1)][key 8 nt + 2t + (i & 1)].
// O~ += P V over two k-steps of 32 keys. The C layout of S gives a thread keys 2t, 2t + 1 of each 8-key tile, the A layout
// wants keys 4t .. 4t + 3 of each 16: the k-step's keys enter the instruction permuted (a sum over keys: P's columns and
// V's rows permuted alike), k-position 16h + 4t + e <-> key 32 kk + 16h + 8 (e >> 1) + 2t + (e & 1):
//   A = P, register r (h = r >> 1): bytes e = e4m3(s[4 kk + 2h + (e >> 1)][2 (r & 1) + (e & 1)]), no shuffle;
//   B = V, register r, column n = 8 dt + g: bytes {0, 1} = Vt[n][32 kk + 16r + 2t + {0, 1}], {2, 3} = Vt[n][... + 8 + ...].
// With FPCERT_MMA_EMULATION defined it compiles as host C++ (tests/kernels/attention/attention_fp8_cuda_emulation_test.cpp).
#pragma once

#include <cstdint>

#include "kernels/attention/cuda/flash_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

struct FlashFp8Args {
  std::int64_t len_q, len_k, heads_q, heads_kv;
  const std::uint8_t* q;
  std::int64_t ldq;
  const std::uint8_t* k;
  std::int64_t ldk;
  const std::uint8_t* v;
  std::int64_t ldv;
  bool causal;
  std::int64_t causal_off;  ///< key j visible from query i iff j <= i + causal_off
  std::int64_t keys;        ///< keys considered (DropLastKeyBlock: whole blocks)
  float c;                  ///< RN(RN(s log2 e) RN(dq dk)) (ScaleAfterSoftmax: RN(RN(log2 e) RN(dq dk)))
  float koff;               ///< Max_offset: 8 (the fault PRoundedLower: 0, P rounded in [0, 1])
  float l_scale;            ///< 2^-koff: the LSE is log(l 2^-koff)
  float s_lse;              ///< RN(s RN(dq dk)) (ScaleAfterSoftmax: RN(dq dk))
  float dv;                 ///< V's descale (DescaleVDropped: 1)
  float post_scale;         ///< 1, or s for ScaleAfterSoftmax
  std::uint16_t* o;         ///< bf16 codes
  std::int64_t ldo;
  float* lse;
  bool no_rescale, lse_no_max, zeros;
};

#if defined(FPCERT_MMA_EMULATION)
std::uint8_t emulated_e4m3_code(float x);  ///< to nearest even into e4m3, saturating to +-448
void emulated_flash_mma_e4m3(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]);  ///< warp-collective
inline std::uint32_t e4m3_byte(float x) { return emulated_e4m3_code(x); }
inline void fp8_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) { emulated_flash_mma_e4m3(d, a, b); }
inline std::uint32_t fp8_word_at(const std::uint8_t* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
inline std::uint32_t fp8_half_at(const std::uint8_t* p) { return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8); }
#else
__device__ __forceinline__ std::uint32_t e4m3_byte(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
__device__ __forceinline__ void fp8_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) { mma<Mma::E4M3>(d, a, b); }
__device__ __forceinline__ std::uint32_t fp8_word_at(const std::uint8_t* p) { return *reinterpret_cast<const std::uint32_t*>(p); }
__device__ __forceinline__ std::uint32_t fp8_half_at(const std::uint8_t* p) { return *reinterpret_cast<const std::uint16_t*>(p); }
#endif

/// Four probabilities rounded to nearest into e4m3 (saturating), e0 in the lowest byte.
__device__ __forceinline__ std::uint32_t pack4_e4m3(float e0, float e1, float e2, float e3) {
  return e4m3_byte(e0) | (e4m3_byte(e1) << 8) | (e4m3_byte(e2) << 16) | (e4m3_byte(e3) << 24);
}

/// Rows r0 .. r0 + 63 of a [len][D] byte tensor into dst (row stride ldd bytes); rows past len are zeros. kTranspose:
/// dst[c][r]. One byte a thread per step: a warp reads 32 consecutive bytes of a row.
template <int D, bool kTranspose>
__device__ void load_block_fp8(std::uint8_t* dst, int ldd, const std::uint8_t* src, std::int64_t ld, std::int64_t r0, std::int64_t len) {
  for (int idx = static_cast<int>(threadIdx.x); idx < kBK * D; idx += kFlashThreads) {
    const int r = idx / D, c = idx % D;
    const std::uint8_t x = r0 + r < len ? src[(r0 + r) * ld + c] : std::uint8_t{0};
    if constexpr (kTranspose) dst[c * ldd + r] = x;
    else dst[r * ldd + c] = x;
  }
}

template <int D>
__global__ void __launch_bounds__(kFlashThreads) flash_fwd_fp8(FlashFp8Args a) {
  constexpr int kLdK = D + 16, kLdV = kBK + 16, kDt = D / 8, kKk = D / 32;
  __shared__ __align__(16) std::uint8_t smem[kBK * kLdK + D * kLdV];
  std::uint8_t* const ks = smem;
  std::uint8_t* const vt = smem + kBK * kLdK;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const std::int64_t b = blockIdx.z, h = blockIdx.y, q0 = static_cast<std::int64_t>(blockIdx.x) * kBQ;
  const std::int64_t hk = h / (a.heads_q / a.heads_kv);
  const std::uint8_t* const Q = a.q + (b * a.heads_q + h) * a.len_q * a.ldq;
  const std::uint8_t* const K = a.k + (b * a.heads_kv + hk) * a.len_k * a.ldk;
  const std::uint8_t* const V = a.v + (b * a.heads_kv + hk) * a.len_k * a.ldv;
  const std::int64_t row_base = (b * a.heads_q + h) * a.len_q;
  std::int64_t qi[2];
  qi[0] = q0 + 16 * warp + g;
  qi[1] = qi[0] + 8;

  load_block_fp8<D, false>(ks, kLdK, Q, a.ldq, q0, a.len_q);
  __syncthreads();
  std::uint32_t qf[kKk][4];
  FPCERT_UNROLL
  for (int kk = 0; kk < kKk; ++kk)
    FPCERT_UNROLL
    for (int r = 0; r < 4; ++r) qf[kk][r] = fp8_word_at(ks + (16 * warp + g + 8 * (r & 1)) * kLdK + 32 * kk + 4 * t + 16 * (r >> 1));

  float o[kDt][4];
  FPCERT_UNROLL
  for (int dt = 0; dt < kDt; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float mx[2] = {-INFINITY, -INFINITY}, m2[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // raw max, RN(RN(mx c) - koff), sum

  std::int64_t kend = a.keys;
  if (a.causal) kend = std::min(kend, std::min<std::int64_t>(q0 + kBQ - 1, a.len_q - 1) + a.causal_off + 1);
  for (std::int64_t kb = 0; kb < kend; kb += kBK) {
    __syncthreads();
    load_block_fp8<D, false>(ks, kLdK, K, a.ldk, kb, a.len_k);
    load_block_fp8<D, true>(vt, kLdV, V, a.ldv, kb, a.len_k);
    __syncthreads();

    float s[8][4];
    FPCERT_UNROLL
    for (int nt = 0; nt < 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
    FPCERT_UNROLL
    for (int kk = 0; kk < kKk; ++kk)
      FPCERT_UNROLL
      for (int nt = 0; nt < 8; ++nt) {
        const std::uint8_t* kp = ks + (8 * nt + g) * kLdK + 32 * kk + 4 * t;
        const std::uint32_t bf[2] = {fp8_word_at(kp), fp8_word_at(kp + 16)};
        fp8_mma(s[nt], qf[kk], bf);
      }

    std::uint32_t vis = 0;
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
        bm[rr] = f_max(bm[rr], s[nt][i]);
      }
    online_block<kDt>(s, vis, bm, a.c, a.koff, a.no_rescale, false, mx, m2, l, o);

    FPCERT_UNROLL
    for (int kk = 0; kk < 2; ++kk) {
      std::uint32_t pf[4];
      FPCERT_UNROLL
      for (int r = 0; r < 4; ++r) {
        const int na = 4 * kk + 2 * (r >> 1), c0 = 2 * (r & 1);
        pf[r] = pack4_e4m3(s[na][c0], s[na][c0 + 1], s[na + 1][c0], s[na + 1][c0 + 1]);
      }
      FPCERT_UNROLL
      for (int dt = 0; dt < kDt; ++dt) {
        const std::uint8_t* vp = vt + (8 * dt + g) * kLdV + 32 * kk + 2 * t;
        const std::uint32_t bf[2] = {fp8_half_at(vp) | (fp8_half_at(vp + 8) << 16), fp8_half_at(vp + 16) | (fp8_half_at(vp + 24) << 16)};
        fp8_mma(o[dt], pf, bf);
      }
    }
  }

  // O = RN_bf16(RN(O~ RN(RN(1 / l) dv))); LSE = RN(RN(m_x s') + logf(RN(l 2^-koff))); a row with no visible key: +0, +Inf.
  const RowOut w{a.o, a.ldo, a.lse, row_base, a.len_q, a.dv, a.post_scale, a.s_lse, a.l_scale, a.lse_no_max, a.zeros};
  write_rows<true, kDt>(w, qi, t, o, mx, m2, l);
}

}  // namespace fpcert::FPCERT_MMA_NS
