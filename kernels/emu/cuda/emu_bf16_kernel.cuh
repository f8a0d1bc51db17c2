// kernels/emu/cuda/emu_bf16_kernel.cuh — the MMA stage of the BF16-on-FP16 GEMMs (kernels/emu/cuda/emu_bf16.cu):
// fp16 operands already scaled by powers of two (per line, or per line and K-block), fp16 mma.sync on an
// fp32 accumulator, and the exact removal of the scales.
//
// A variant of kernels/gemm/cuda/mma_kernel.cuh's mma_gemm<F16> (same tiles, stages, fragment loads): a
// block computes a 128 x 128 tile of C in one of two modes (emu::kModeRow, emu::kModeKBlock):
//   row:    the fragment accumulates all of K from +0 (exactly the native fp16/bf16 kernel's order);
//           epilogue C_ij = RN(acc * 2^-(s_A,i + s_B,j)) (emu::ldexp_rn: exact unless the result is
//           subnormal or overflows fp32, where it rounds once);
//   kblock: per K-block of kblock_stages stages (32 K each) a partial fragment from +0, then
//           acc = RN(acc + RN(part * 2^-(s_A,ig + s_B,gj))) (__fadd_rn), part = +0.
// The Auto strategy launches both instantiations over the whole grid with per-block-row and
// per-block-column mode arrays; each block runs only where max(mode_rows[y], mode_cols[x]) is its mode
// (a block-uniform early exit, before any barrier). kScale = false skips the power-of-two
// multiplications (the stage timing's "rescale epilogue" is the difference).
//
// With FPCERT_EMU_EMULATION the code compiles as host C++ (tests/kernels/emu/emulation_mma_test.cpp).
#pragma once

#include "kernels/emu/cuda/emu_split_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

/// Scales of one operand: entries of line l, K-block g were multiplied by 2^s[l * line_stride + g * seg_stride]
/// (line_stride = seg_stride = 0: one scale for the whole operand).
struct ScaleView {
  const std::int16_t* s;
  std::int64_t line_stride;
  std::int64_t seg_stride;
  std::int64_t lines;
};
__device__ __forceinline__ int scale_of(const ScaleView& v, std::int64_t line, std::int64_t seg) {
  return line < v.lines ? v.s[line * v.line_stride + seg * v.seg_stride] : 0;
}

template <bool kKBlock, bool kScale>
__global__ void __launch_bounds__(kThreads, kKBlock ? 1 : 2)
    f16_scaled_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::uint8_t* __restrict__ a, std::int64_t lda,
                    bool vec_a, const std::uint8_t* __restrict__ b, std::int64_t ldb, bool vec_b, float* __restrict__ c,
                    std::int64_t ldc, ScaleView sa, ScaleView sb, int kblock_stages, const std::uint32_t* mode_rows,
                    const std::uint32_t* mode_cols) {
  if (mode_rows) {
    const std::uint32_t md = mode_rows[blockIdx.y] > mode_cols[blockIdx.x] ? mode_rows[blockIdx.y] : mode_cols[blockIdx.x];
    if (md != (kKBlock ? emu::kModeKBlock : emu::kModeRow)) return;  // block-uniform, before any barrier
  }
  constexpr int ES = 2;
  constexpr int kStageElems = kStageBytes / ES;  // 32
  __shared__ __align__(16) std::uint32_t smA[2][kBM * kRowWords];
  __shared__ __align__(16) std::uint32_t smB[2][kBN * kRowWords];

  const TilePos pos = tile_pos();  // this thread's rows pos.row(i, h) and columns pos.col(j, e) of C
  const std::int64_t row0 = pos.row0, col0 = pos.col0;

  float acc[kMTiles][kNTiles][4];
  [[maybe_unused]] float part[kKBlock ? kMTiles : 1][kKBlock ? kNTiles : 1][4];
  zero_frags(acc);
  if constexpr (kKBlock) zero_frags(part);

  const std::int64_t stages = (k + kStageElems - 1) / kStageElems;
  Stage<ES> st;
  if (stages > 0) {
    load_stage<ES>(st, a, lda, vec_a, b, ldb, vec_b, m, n, k, row0, col0, 0);
    store_stage<Mma::F16, ES>(st, smA[0], smB[0]);
  }
  __syncthreads();
  for (std::int64_t s = 0; s < stages; ++s) {
    const int cur = static_cast<int>(s & 1);
    if (s + 1 < stages) load_stage<ES>(st, a, lda, vec_a, b, ldb, vec_b, m, n, k, row0, col0, (s + 1) * kStageElems);
    const std::uint32_t* A = smA[cur];
    const std::uint32_t* B = smB[cur];
    FPCERT_UNROLL
    for (int ks = 0; ks < kSteps; ++ks) {
      std::uint32_t af[kMTiles][4], bf[kNTiles][2];
      FPCERT_UNROLL
      for (int i = 0; i < kMTiles; ++i) load_a_frag(A, pos, i, ks, af[i]);
      FPCERT_UNROLL
      for (int j = 0; j < kNTiles; ++j) load_b_frag(B, pos, j, ks, bf[j]);
      FPCERT_UNROLL
      for (int i = 0; i < kMTiles; ++i)
        FPCERT_UNROLL
        for (int j = 0; j < kNTiles; ++j) {
          if constexpr (kKBlock) emu_mma<Mma::F16>(part[i][j], af[i], bf[j]);
          else emu_mma<Mma::F16>(acc[i][j], af[i], bf[j]);
        }
    }
    if constexpr (kKBlock) {
      if ((s + 1) % kblock_stages == 0 || s + 1 == stages) {  // uniform across the block
        const std::int64_t seg = s / kblock_stages;
        int sr[kMTiles][2], sc[kNTiles][2];
        FPCERT_UNROLL
        for (int i = 0; i < kMTiles; ++i)
          FPCERT_UNROLL
          for (int h = 0; h < 2; ++h) sr[i][h] = scale_of(sa, pos.row(i, h), seg);
        FPCERT_UNROLL
        for (int j = 0; j < kNTiles; ++j)
          FPCERT_UNROLL
          for (int e = 0; e < 2; ++e) sc[j][e] = scale_of(sb, pos.col(j, e), seg);
        FPCERT_UNROLL
        for (int i = 0; i < kMTiles; ++i)
          FPCERT_UNROLL
          for (int j = 0; j < kNTiles; ++j)
            FPCERT_UNROLL
            for (int q = 0; q < 4; ++q) {
              const float p = kScale ? emu::ldexp_rn(part[i][j][q], -(sr[i][q >> 1] + sc[j][q & 1])) : part[i][j][q];
              acc[i][j][q] = emu::fadd_rn(acc[i][j][q], p);
              part[i][j][q] = 0.0f;
            }
      }
    }
    if (s + 1 < stages) store_stage<Mma::F16, ES>(st, smA[cur ^ 1], smB[cur ^ 1]);
    __syncthreads();
  }

  int sr[kMTiles][2], sc[kNTiles][2];
  FPCERT_UNROLL
  for (int i = 0; i < kMTiles; ++i)
    FPCERT_UNROLL
    for (int h = 0; h < 2; ++h) sr[i][h] = kKBlock ? 0 : scale_of(sa, pos.row(i, h), 0);
  FPCERT_UNROLL
  for (int j = 0; j < kNTiles; ++j)
    FPCERT_UNROLL
    for (int e = 0; e < 2; ++e) sc[j][e] = kKBlock ? 0 : scale_of(sb, pos.col(j, e), 0);
  store_frags(acc, pos, m, n, c, ldc, [&](float v, int i, int j, int q) {
    if constexpr (!kKBlock && kScale) v = emu::ldexp_rn(v, -(sr[i][q >> 1] + sc[j][q & 1]));
    return v;
  });
}

}  // namespace fpcert::FPCERT_MMA_NS
