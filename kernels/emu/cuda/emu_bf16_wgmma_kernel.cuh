// kernels/emu/cuda/emu_bf16_wgmma_kernel.cuh — the MMA stage of the BF16-on-FP16 GEMMs on Hopper's wgmma + TMA mainloop
// (kernels/emu/cuda/emu_bf16.cu, the gemm_bf16_on_f16_<tag>_wgmma_sm90 kernels; issue 43): the packed fp16 operands
// (already scaled by powers of two), fp16 wgmma on fp32 accumulators, and the exact removal of the scales — the
// mma.sync stage's arithmetic (emu_bf16_kernel.cuh) on kernels/gemm/cuda/wgmma_kernel.cuh's pipeline:
//   row:    the accumulators sum all of K from +0 (the native fp16 wgmma kernel's order); epilogue
//           C_ij = RN(acc * 2^-(s_A,i + s_B,j)) (emu::ldexp_rn: exact unless the result is subnormal or overflows);
//   kblock: per K-block of kblock_stages stages (64 K each) a partial chain from +0, then
//           acc = RN(acc + RN(part * 2^-(s_A,ig + s_B,gj))) (__fadd_rn), part = +0.
// A (m x lda16, K-major) and B (k x ldb16, row-major: read N-major, wgmma's transpose bit) come from the packing
// stage. Tiles: 128 x 256 in row mode (one accumulator set), 128 x 128 in K-block mode (two sets) and for the Auto
// strategy in both modes, whose per-tile mode arrays are per 128 x 128 tile (emu::kModeTile): each block runs only
// where max(mode_rows, mode_cols) of its tile is its mode (a block-uniform exit before any barrier).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/emu/cuda/emu_bf16_kernel.cuh"
#include "kernels/gemm/cuda/wgmma_kernel.cuh"

namespace fpcert::wgmma_device {

/// kScale = false skips the power-of-two multiplications (the stage timing's "rescale epilogue" is the difference).
template <bool kKBlock, bool kScale, int kN>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_f16_scaled(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m, int n, int k,
                     float* __restrict__ c, long long ldc, mma_device::ScaleView sa, mma_device::ScaleView sb, int kblock_stages,
                     const std::uint32_t* mode_rows, const std::uint32_t* mode_cols) {
  static_assert(!kKBlock || kN == 128, "K-block mode keeps two accumulator sets: 128-wide tiles");
#if defined(FPCERT_WG_ON)
  constexpr int kS = stages(kN), kSB = stage_bytes(kN), kRegs = kN / 2;
  constexpr int kStageElems = kStageK / 2;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t full0 = base + kS * kSB, empty0 = full0 + 8 * kS;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  int m0, n0;
  tile_origin<kN>(m, n, m0, n0);
  if (mode_rows) {  // Auto (kN = 128 = the mode tile): this tile's mode
    const std::uint32_t r = mode_rows[m0 / 128], cl = mode_cols[n0 / 128];
    if ((r > cl ? r : cl) != (kKBlock ? emu::kModeKBlock : emu::kModeRow)) return;
  }
  const int ktiles = static_cast<int>((static_cast<long long>(k) + kStageElems - 1) / kStageElems);
  init_ring(full0, empty0, kS);
  __syncthreads();
  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) produce<Wg::F16, true, kN, kS, kSB>(&map_a, &map_b, base, full0, empty0, m0, n0, ktiles);
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ct = tid - 128 * wg, lane = ct % 32, w = ct / 32, g = lane / 4, t = lane % 4;
  const int row0 = m0 + cw * 64 + 16 * w + g;  // this thread's rows row0 and row0 + 8; columns n0 + 8 cc + 2 t (+1)
  float acc[kRegs];
  float part[kKBlock ? kRegs : 1];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) acc[i] = 0.0f;
  if constexpr (kKBlock) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) part[i] = 0.0f;
  }
  int released = 0;  // ring stages below this one have been given back to the producer
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % kS;
    bar_wait(full0 + 8 * s, static_cast<std::uint32_t>((kt / kS) & 1));
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    const std::uint32_t sa_s = base + s * kSB + cw * 64 * kStageK, sb_s = base + s * kSB + kATile;
    if constexpr (kKBlock) mma_stage<Wg::F16, true>(part, sa_s, sb_s, kNMajorLbo, 1024);
    else mma_stage<Wg::F16, true>(acc, sa_s, sb_s, kNMajorLbo, 1024);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    bool block_end = false;
    if constexpr (kKBlock) block_end = (kt + 1) % kblock_stages == 0 || kt + 1 == ktiles;
    if (block_end) {
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");  // the K-block's chain is complete
      for (; released <= kt; ++released)
        if (lane == 0) bar_arrive(empty0 + 8 * (released % kS));
      if constexpr (kKBlock) {
        const long long seg = kt / kblock_stages;
        const int sr[2] = {mma_device::scale_of(sa, row0, seg), mma_device::scale_of(sa, row0 + 8, seg)};
#pragma unroll
        for (int cc = 0; cc < kN / 8; ++cc)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int scol = mma_device::scale_of(sb, n0 + 8 * cc + 2 * t + e, seg);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int q = 4 * cc + 2 * h + e;
              const float p = kScale ? emu::ldexp_rn(part[q], -(sr[h] + scol)) : part[q];
              acc[q] = __fadd_rn(acc[q], p);
              part[q] = 0.0f;
            }
          }
      }
    } else {
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");  // the previous stages' wgmmas are done
      for (; released < kt; ++released)
        if (lane == 0) bar_arrive(empty0 + 8 * (released % kS));
    }
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  if constexpr (!kKBlock && kScale) {  // row mode: the lines' scales, removed once
    const int sr[2] = {mma_device::scale_of(sa, row0, 0), mma_device::scale_of(sa, row0 + 8, 0)};
#pragma unroll
    for (int cc = 0; cc < kN / 8; ++cc)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int scol = mma_device::scale_of(sb, n0 + 8 * cc + 2 * t + e, 0);
#pragma unroll
        for (int h = 0; h < 2; ++h) acc[4 * cc + 2 * h + e] = emu::ldexp_rn(acc[4 * cc + 2 * h + e], -(sr[h] + scol));
      }
  }
  store_tile<kN>(acc, m0, n0, cw, w, lane, m, n, c, ldc, 0);
#else
  (void)map_a, (void)map_b, (void)m, (void)n, (void)k, (void)c, (void)ldc, (void)sa, (void)sb, (void)kblock_stages, (void)mode_rows,
      (void)mode_cols;
  __trap();  // compiled out: the host's support check (sm_90a code) never launches this
#endif
}

}  // namespace fpcert::wgmma_device
