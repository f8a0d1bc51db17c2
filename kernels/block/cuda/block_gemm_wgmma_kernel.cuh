// kernels/block/cuda/block_gemm_wgmma_kernel.cuh — the block-scaled "blocksum" GEMM on Hopper's wgmma + TMA mainloop
// (kernels/block/cuda/block_gemm.cu, the gemm_<f>_<rule>_blocksum_f32acc_wgmma_sm90 kernels; issue 43): the arithmetic of
// block_mma_gemm (block_gemm_kernel.cuh) on kernels/gemm/cuda/wgmma_kernel.cuh's pipeline.
//
// - Operands: the element values (unscaled, exact in fp16), A m x k K-major and B k x n row-major (read N-major,
//   wgmma's transpose bit), both with leading dimensions padded to 16 bytes for the TMA. Tiles of 128 x 128, a ring of
//   6 stages of 64 K, two consumer warpgroups with two accumulator sets each (acc, and part for the running K-block).
// - Per K-block of kBlock = 16 or 32 (one or two k-steps of m64n128k16 f16, fp32 accumulation) a partial chain from +0
//   into part; once it completes (wgmma.wait_group 0), acc = RN(acc + RN(part * scale_A * scale_B)) (scale_part: the
//   same function as the mma.sync kernel's) and part = +0; K-blocks ascending; K-blocks past nkb (the zero-filled
//   tail of the last stage) add nothing. The partial sums are exact (block_gemm_kernel.cuh gives why), so the result is
//   bit for bit the CPU model's, whatever the instruction's internal order.
// - The scales of a stage (A: 128 rows x 64 / kBlock blocks, B: 64 / kBlock blocks x 128 columns, E8M0 or UE4M3 codes)
//   are copied into shared memory beside the stage by the producer warpgroup's second warp, which arrives on the
//   stage's "full" barrier after its stores (mbarrier.arrive releases them to the consumers that wait on it): the
//   consumers read them from shared memory, not global memory, at every K-block.
// - One block per tile (grid: tiles of 128 x 128, 1-D, grouped along M like the GEMMs'); bounded barrier waits.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/block/cuda/block_gemm_kernel.cuh"
#include "kernels/gemm/cuda/wgmma_kernel.cuh"

namespace fpcert::wgmma_device {

constexpr int kBlockSumN = 128;                    // tile width (two accumulator sets of m64n128)
constexpr int kBlockSumStageElems = kStageK / 2;   // 64 fp16 of K per stage
/// Scale bytes per stage: A's kBM rows and B's kBlockSumN columns, 64 / block blocks each (the 16-block size bounds both).
constexpr int kBlockSumScaleBytes = (kBM + kBlockSumN) * (kBlockSumStageElems / 16);
constexpr int blocksum_smem_bytes() {
  return smem_bytes(kBlockSumN) + stages(kBlockSumN) * kBlockSumScaleBytes;
}

/// C = sum over K-blocks of RN(part_b * scale_A(i, b) * scale_B(b, j)) in fp32, blocks ascending, then (apply_tt)
/// C = RN(C * tt); C row-major (ldc). sa: m x nkb scale codes, sb: nkb x n. map_a: A16 as {K, M}, boxes {64, 128};
/// map_b: B16 as {N, K}, boxes {kNBox, 64}. Dynamic shared memory blocksum_smem_bytes().
template <bool kPow2, int kBlock>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_blocksum(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m, int n, int k,
                   float* __restrict__ c, long long ldc, const std::uint8_t* __restrict__ sa, const std::uint8_t* __restrict__ sb,
                   long long nkb, float tt, int apply_tt) {
  static_assert(kBlock == 16 || kBlock == 32, "a K-block is one or two wgmma k-steps of 16");
#if defined(FPCERT_WG_ON)
  constexpr int kN = kBlockSumN, kS = stages(kN), kSB = stage_bytes(kN), kRegs = kN / 2;
  constexpr int kBps = kBlockSumStageElems / kBlock;  // K-blocks per stage
  constexpr int kStepsPerBlock = kBlock / 16;
  constexpr int kRowScales = kBM * kBps;              // A's codes of a stage: [row][block]; then B's: [block][col]
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t full0 = base + kS * kSB, empty0 = full0 + 8 * kS;
  std::uint8_t* const scales0 = smem_raw + (empty0 + 8 * kS - smem_addr(smem_raw));  // kS slots of kRowScales + kBps * kN
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  int m0, n0;
  tile_origin<kN>(m, n, m0, n0);
  const int ktiles = static_cast<int>((static_cast<long long>(k) + kBlockSumStageElems - 1) / kBlockSumStageElems);
  init_ring(full0, empty0, kS, 32);  // the TMA thread's expect_tx and the 32 lanes of the scale warp
  __syncthreads();
  if (wg == 0) {  // producer warpgroup: warp 0 lane 0 issues the TMA loads, warp 1 copies the scales
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) produce<Wg::F16, true, kN, kS, kSB>(&map_a, &map_b, base, full0, empty0, m0, n0, ktiles);
    if (tid / 32 == 1) {  // lane l copies A's codes of block l % kBps for rows l / kBps + (32 / kBps) j, B's columns l + 32 j
      const int lane = tid % 32;
      const int rb = lane % kBps, rr = lane / kBps;
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % kS;
        if (kt >= kS) bar_wait(empty0 + 8 * s, static_cast<std::uint32_t>((kt / kS - 1) & 1));
        std::uint8_t* const slot = scales0 + s * kBlockSumScaleBytes;
        const long long kb0 = static_cast<long long>(kt) * kBps;
        const bool a_block = kb0 + rb < nkb;
        const std::uint8_t* pa = sa + (m0 + rr) * nkb + kb0 + rb;
#pragma unroll 1
        for (int r = rr; r < kBM; r += 32 / kBps, pa += (32 / kBps) * nkb)
          slot[r * kBps + rb] = (a_block && m0 + r < m) ? *pa : std::uint8_t{0};
#pragma unroll 1
        for (int b = 0; b < kBps; ++b) {
          const bool b_block = kb0 + b < nkb;
          const std::uint8_t* pb = sb + (kb0 + b) * n + n0 + lane;
#pragma unroll
          for (int j = 0; j < kN / 32; ++j)
            slot[kRowScales + b * kN + lane + 32 * j] = (b_block && n0 + lane + 32 * j < n) ? pb[32 * j] : std::uint8_t{0};
        }
        bar_arrive(full0 + 8 * s);  // release: the consumers waiting on this phase see the stores
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ct = tid - 128 * wg, lane = ct % 32, w = ct / 32, g = lane / 4, t = lane % 4;
  const int r0 = cw * 64 + 16 * w + g;  // this thread's rows of the tile r0 and r0 + 8; columns 8 cc + 2 t (+1)
  float acc[kRegs], part[kRegs];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) acc[i] = part[i] = 0.0f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % kS;
    bar_wait(full0 + 8 * s, static_cast<std::uint32_t>((kt / kS) & 1));
    const std::uint32_t sa_s = base + s * kSB + cw * 64 * kStageK, sb_s = base + s * kSB + kATile;
    const std::uint8_t* const slot = scales0 + s * kBlockSumScaleBytes;
#pragma unroll
    for (int b = 0; b < kBps; ++b) {
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      mma_steps<Wg::F16, true, kStepsPerBlock>(part, b * kStepsPerBlock, sa_s, sb_s, kNMajorLbo, 1024);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");  // the K-block's chain is complete
      if (static_cast<long long>(kt) * kBps + b < nkb) {
        const std::uint32_t ca[2] = {slot[r0 * kBps + b], slot[(r0 + 8) * kBps + b]};
#pragma unroll
        for (int cc = 0; cc < kN / 8; ++cc)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const std::uint32_t cb = slot[kRowScales + b * kN + 8 * cc + 2 * t + e];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int q = 4 * cc + 2 * h + e;
              acc[q] = __fadd_rn(acc[q], mma_device::scale_part<kPow2>(part[q], ca[h], cb));
            }
          }
      }
#pragma unroll
      for (int i = 0; i < kRegs; ++i) part[i] = 0.0f;
    }
    if (lane == 0) bar_arrive(empty0 + 8 * s);  // the stage's wgmmas and scale reads are done
  }
  if (apply_tt) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) acc[i] = __fmul_rn(acc[i], tt);
  }
  store_tile<kN>(acc, m0, n0, cw, w, lane, m, n, c, ldc, 0);
#else
  (void)map_a, (void)map_b, (void)m, (void)n, (void)k, (void)c, (void)ldc, (void)sa, (void)sb, (void)nkb, (void)tt, (void)apply_tt;
  __trap();  // compiled out: the host's support check (sm_90a code) never launches this
#endif
}

}  // namespace fpcert::wgmma_device
