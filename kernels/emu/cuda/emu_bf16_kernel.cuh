// kernels/emu/cuda/emu_bf16_kernel.cuh — the MMA stage of the BF16-on-FP16 GEMMs (kernels/emu/cuda/emu_bf16.cu):
// fp16 operands already scaled by powers of two (per line, or per line and K-block), fp16 mma.sync on an
// fp32 accumulator, and the exact removal of the scales.
//
// kernels/gemm/cuda/mma_kernel.cuh's mainloop on fp16 (same tiles, stages, fragment loads) with the
// ScaledAcc policy: a block computes a 128 x 128 tile of C in one of two modes (emu::kModeRow,
// emu::kModeKBlock):
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

/// The BF16-on-FP16 accumulation policy (mma_kernel.cuh's mainloop). Row mode: every MMA into `acc`.
/// K-block mode: into `part`; at the end of each K-block of kblock_stages stages (and of K),
/// acc = RN(acc + RN(part * 2^-(s_A,ig + s_B,gj))), part = +0 (kScale false: no multiplication).
template <bool kKBlock, bool kScale>
struct ScaledAcc {
  float acc[kMTiles][kNTiles][4];
  float part[kKBlock ? kMTiles : 1][kKBlock ? kNTiles : 1][4];
  ScaleView sa, sb;
  int kblock_stages;
  __device__ __forceinline__ ScaledAcc(ScaleView a, ScaleView b, int stages_per_block) : sa(a), sb(b), kblock_stages(stages_per_block) {
    zero_frags(acc);
    if constexpr (kKBlock) zero_frags(part);
  }
  __device__ __forceinline__ void issue(int i, int j, const std::uint32_t (&af)[1][4], const std::uint32_t (&bf)[1][kNTiles][2]) {
    if constexpr (kKBlock) emu_mma<Mma::F16>(part[i][j], af[0], bf[0][j]);
    else emu_mma<Mma::F16>(acc[i][j], af[0], bf[0][j]);
  }
  __device__ __forceinline__ void step() {}
  __device__ __forceinline__ void stage(std::int64_t s, std::int64_t stages, const TilePos& pos) {
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
        for_each_element([&](int i, int j, int q) {
          const float p = kScale ? emu::ldexp_rn(part[i][j][q], -(sr[i][q >> 1] + sc[j][q & 1])) : part[i][j][q];
          acc[i][j][q] = emu::fadd_rn(acc[i][j][q], p);
          part[i][j][q] = 0.0f;
        });
      }
    }
  }
};

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
  __shared__ __align__(16) std::uint32_t smem[2 * kSliceTileWords];
  const TilePos pos = tile_pos();  // this thread's rows pos.row(i, h) and columns pos.col(j, e) of C
  ScaledAcc<kKBlock, kScale> acc(sa, sb, kblock_stages);
  mainloop<2, 1, false>(Operands<1>{{a}, {b}, lda, ldb, m, n, k, vec_a, vec_b}, pos, StageTiles<1>{smem}, acc);

  int sr[kMTiles][2], sc[kNTiles][2];  // row mode: the lines' scales, removed in the epilogue
  FPCERT_UNROLL
  for (int i = 0; i < kMTiles; ++i)
    FPCERT_UNROLL
    for (int h = 0; h < 2; ++h) sr[i][h] = kKBlock ? 0 : scale_of(sa, pos.row(i, h), 0);
  FPCERT_UNROLL
  for (int j = 0; j < kNTiles; ++j)
    FPCERT_UNROLL
    for (int e = 0; e < 2; ++e) sc[j][e] = kKBlock ? 0 : scale_of(sb, pos.col(j, e), 0);
  store_tile(pos, m, n, c, ldc, [&](int i, int j, int q) {
    float v = acc.acc[i][j][q];
    if constexpr (!kKBlock && kScale) v = emu::ldexp_rn(v, -(sr[i][q >> 1] + sc[j][q & 1]));
    return v;
  });
}

}  // namespace fpcert::FPCERT_MMA_NS
