// kernels/block/cuda/block_gemm_kernel.cuh — the device code of the block-scaled "blocksum" GEMM (kernels/block/cuda/block_gemm.cu):
// element values (unscaled, exact in fp16) multiplied on fp16 tensor cores (mma.sync m16n8k16, fp32
// accumulator), one zeroed partial fragment per K-block of B = 32 (two MMA k-steps, one 64-byte stage) or
// B = 16 (one k-step), then acc = RN(acc + RN(part * scale_A * scale_B)) per block, blocks ascending.
//
// The tiles, stages, fragment layouts, loads and the K loop are mma_gemm's: the one mainloop of
// kernels/gemm/cuda/mma_kernel.cuh (with the PTX fragment tables cited there), composed with an accumulation
// policy of its own (BlockSumAcc): each thread reads the scale of the rows and columns of the C elements it
// holds (row g / g + 8 of each M-tile, columns 2t / 2t + 1 of each N-tile) when a K-block ends.
//
// The bit-for-bit claim against model_gemm_<f>_<rule>_blocksum_f32acc (kernels/block/block_scaled.hpp) rests on
// the partial block sums being exact: for E2M3, E3M2, E2M1 and int8 elements every product is a multiple of
// 2^-6, 2^-8, 2^-2 or 2^-12 and a block's sum has at most 23 significant bits, so any MMA that keeps at least
// 24 bits of the aligned sum (Fasi, Higham, Mikaitis, Pranesh, PeerJ CS 7:e330, 2021, measured the fp32
// accumulation of fp16 tensor cores) returns it exactly. tests/kernels/block/block_scaled_gpu_test.cpp checks the claim.
#pragma once

#include <cstdint>

#include "kernels/block/block_quant_arith.cuh"
#include "kernels/gemm/cuda/mma_kernel.cuh"

namespace fpcert::mma_device {

/// part * scale, one rounding: E8M0 scales 2^(a + b) (NaN code 0xFF: NaN), UE4M3 scales S_A * S_B (exact
/// in fp32: 4 + 4 bits; 0x7F: NaN).
template <bool kPow2>
__device__ __forceinline__ float scale_part(float part, std::uint32_t ca, std::uint32_t cb) {
  if constexpr (kPow2) {
    if (ca == 0xFFu || cb == 0xFFu) return __uint_as_float(0x7FC00000u);
    return emu::ldexp_rn(part, static_cast<int>(ca) + static_cast<int>(cb) - 254);
  } else {
    return __fmul_rn(part, __fmul_rn(blockq::e4m3_value(ca), blockq::e4m3_value(cb)));
  }
}

/// The accumulation policy of the blocksum GEMM (the mainloop's issue / step / stage, kernels/gemm/cuda/
/// mma_kernel.cuh): the MMAs of a K-block go into `part` (zeroed at the block's start); after its last
/// k-step (one k-step of 16 for kBlock 16, two for kBlock 32) acc = RN(acc + RN(part * scale_A * scale_B)),
/// blocks ascending; K-blocks past nkb (zero-filled stages) add nothing.
template <bool kPow2, int kBlock>
struct BlockSumAcc {
  static_assert(kBlock == 16 || kBlock == 32, "a block is one or two MMA k-steps of 16");
  static constexpr int kStepsPerBlock = kBlock / 16;
  float acc[kMTiles][kNTiles][4], part[kMTiles][kNTiles][4];
  const TilePos& pos;
  std::int64_t m, n, nkb;
  const std::uint8_t* sa;
  const std::uint8_t* sb;
  std::int64_t steps = 0;  ///< k-steps done
  __device__ __forceinline__ BlockSumAcc(const TilePos& p, std::int64_t m_, std::int64_t n_, const std::uint8_t* sa_, const std::uint8_t* sb_,
                                         std::int64_t nkb_)
      : pos(p), m(m_), n(n_), nkb(nkb_), sa(sa_), sb(sb_) {
    zero_frags(acc);
    zero_frags(part);
  }
  __device__ __forceinline__ void issue(int i, int j, const std::uint32_t (&af)[1][4], const std::uint32_t (&bf)[1][kNTiles][2]) {
    mma<Mma::F16>(part[i][j], af[0], bf[0][j]);
  }
  __device__ __forceinline__ void step() {
    if (++steps % kStepsPerBlock != 0) return;
    const std::int64_t kb = steps / kStepsPerBlock - 1;
    if (kb < nkb) {
      FPCERT_UNROLL
      for (int i = 0; i < kMTiles; ++i)
        FPCERT_UNROLL
        for (int h = 0; h < 2; ++h) {
          const std::int64_t row = pos.row(i, h);
          const std::uint32_t ca = row < m ? sa[row * nkb + kb] : 0u;
          FPCERT_UNROLL
          for (int j = 0; j < kNTiles; ++j)
            FPCERT_UNROLL
            for (int e = 0; e < 2; ++e) {
              const std::int64_t col = pos.col(j, e);
              const std::uint32_t cb = col < n ? sb[kb * n + col] : 0u;
              const int q = 2 * h + e;
              acc[i][j][q] = fadd_rn(acc[i][j][q], scale_part<kPow2>(part[i][j][q], ca, cb));
            }
        }
    }
    zero_frags(part);
  }
  __device__ __forceinline__ void stage(std::int64_t, std::int64_t, const TilePos&) {}
};

/// C = sum over K-blocks of scale_A(i, b) scale_B(b, j) (A_b B_b), then (NVFP4) C = RN(C * tt). A (m x k) and
/// B (k x n) hold fp16 codes of element values, row-major; sa is m x nkb, sb nkb x n (codes).
/// One block per SM asked of the register allocator: the per-block epilogue (scale reads, a second fragment
/// array) does not fit 128 registers without spills (ptxas: 500-800 bytes at 2 blocks per SM).
template <bool kPow2, int kBlock>
__global__ void __launch_bounds__(kThreads, 1)
    block_mma_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::uint8_t* __restrict__ a, std::int64_t lda, bool vec_a,
                   const std::uint8_t* __restrict__ b, std::int64_t ldb, bool vec_b, float* __restrict__ c, std::int64_t ldc,
                   const std::uint8_t* __restrict__ sa, const std::uint8_t* __restrict__ sb, std::int64_t nkb, float tt, bool apply_tt) {
  __shared__ __align__(16) std::uint32_t smem[2 * kSliceTileWords];
  const TilePos pos = tile_pos();
  BlockSumAcc<kPow2, kBlock> acc(pos, m, n, sa, sb, nkb);
  mainloop<2, 1, false>(Operands<1>{{a}, {b}, lda, ldb, m, n, k, vec_a, vec_b}, pos, StageTiles<1>{smem}, acc);
  store_tile(pos, m, n, c, ldc, [&](int i, int j, int q) { return apply_tt ? __fmul_rn(acc.acc[i][j][q], tt) : acc.acc[i][j][q]; });
}

}  // namespace fpcert::mma_device
