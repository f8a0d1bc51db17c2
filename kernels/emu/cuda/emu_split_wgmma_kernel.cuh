// kernels/emu/cuda/emu_split_wgmma_kernel.cuh — device code of the split-product GEMMs on Hopper's wgmma + TMA mainloop
// (kernels/emu/cuda/emu_split_wgmma.cu; issue 43): the same slices, kept terms, order and merge as the mma.sync
// kernels (emu_split_kernel.cuh), on kernels/gemm/cuda/wgmma_kernel.cuh's pipeline.
//
// - The pre-pass writes the S slices of A (m x k, row-major) as one K-major matrix of S m rows (slice l at rows
//   l m ...), and the slices of B (k x n, row-major) transposed, as one K-major matrix of S n rows, both with a
//   leading dimension of k rounded up to 16 elements (the TMA's 16-byte rule). Rows of a tile past m (past n) read
//   the next slice's rows or the TMA's zero fill: they only feed rows (columns) of C that are not written.
// - One block of 384 threads computes a 128 x 128 tile of C: warpgroup 0 loads (one thread issues 2 S TMA boxes per
//   stage: every slice of A's 128 rows and of B's 128 columns, 128 bytes of K each), warpgroups 1 and 2 each own 64
//   rows. Stages of 128 bytes of K (64 bf16, 32 tf32 elements) in a ring of 6 / 3 / 2 stages for S = 1 / 2 / 3
//   (S x 32 KiB per stage, within 227 KiB).
// - Two accumulator sets per thread (m64n128: 64 fp32 registers each): per k-step (16 bf16, 8 tf32 products),
//   every kept term (i, j) but (0, 0) is one wgmma into `small`, in the canonical order (i + j descending, then i
//   descending: the split table's, checked on the host), then the (0, 0) term into `acc`. Both start from +0 and
//   chain over all of K (zero-padded by the TMA to whole stages); C = RN(small + acc) (__fadd_rn), or acc for one
//   slice. Each element's order is fixed: runs are bitwise reproducible.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/emu/emu_arith.cuh"
#include "kernels/gemm/cuda/wgmma_kernel.cuh"

namespace fpcert::wgmma_device {

constexpr int kSplitN = 128;  // tile width: two accumulator sets of m64n128
/// Stage bytes, ring stages and dynamic shared memory of a kernel with S slices per operand.
constexpr int split_stage_bytes(int s) { return s * (kATile + kSplitN * kStageK); }
constexpr int split_stages(int s) { return s == 1 ? 6 : s == 2 ? 3 : 2; }
constexpr int split_smem_bytes(int s) { return split_stages(s) * split_stage_bytes(s) + 1024 + 2 * split_stages(s) * 8; }
static_assert(split_smem_bytes(3) <= 227 * 1024 && split_smem_bytes(2) <= 227 * 1024 && split_smem_bytes(1) <= 227 * 1024,
              "a split kernel's ring does not fit in shared memory");

/// C = sum over kept terms (i, j) of A_i B_j; map_a: the stacked A slices {k, S m}, boxes {stage elements, 128};
/// map_b: the stacked, transposed B slices {k, S n}, boxes {stage elements, 128}. T: Wg::BF16 or Wg::TF32.
template <Wg T, int S, unsigned kMask>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_split_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m, int n, int k,
                     float* __restrict__ c, long long ldc) {
  static_assert(T == Wg::BF16 || T == Wg::TF32, "slices are bf16 or tf32");
  static_assert(S >= 1 && S <= 3, "one to three slices");
  static_assert((kMask & 1u) != 0, "every scheme keeps the leading term");
#if defined(FPCERT_WG_ON)
  constexpr bool kSmall = (kMask & ~1u) != 0;
  constexpr int kS = split_stages(S), kSB = split_stage_bytes(S), kBTile = kSplitN * kStageK;
  constexpr int kStageElems = kStageK / WgInfo<T>::kBytes;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t full0 = base + kS * kSB, empty0 = full0 + 8 * kS;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  int m0, n0;
  tile_origin<kSplitN>(m, n, m0, n0);
  const int ktiles = static_cast<int>((static_cast<long long>(k) + kStageElems - 1) / kStageElems);
  init_ring(full0, empty0, kS);
  __syncthreads();
  if (wg == 0) {  // producer: the S slices of A's rows and of B's columns, one stage of K at a time
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % kS;
        if (kt >= kS) bar_wait(empty0 + 8 * s, static_cast<std::uint32_t>((kt / kS - 1) & 1));
        const std::uint32_t fb = full0 + 8 * s, st = base + s * kSB;
        bar_expect_tx(fb, kSB);
#pragma unroll
        for (int l = 0; l < S; ++l) {
          tma_2d(st + l * kATile, &map_a, fb, kt * kStageElems, l * m + m0);
          tma_2d(st + S * kATile + l * kBTile, &map_b, fb, kt * kStageElems, l * n + n0);
        }
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ct = tid - 128 * wg, lane = ct % 32, w = ct / 32;
  float acc[64];
  float small[kSmall ? 64 : 1];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  if constexpr (kSmall) {
#pragma unroll
    for (int i = 0; i < 64; ++i) small[i] = 0.0f;
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % kS;
    bar_wait(full0 + 8 * s, static_cast<std::uint32_t>((kt / kS) & 1));
    const std::uint32_t st = base + s * kSB;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      if constexpr (kSmall) {
#pragma unroll
        for (int d = 2 * (S - 1); d >= 1; --d)
#pragma unroll
          for (int ia = S - 1; ia >= 0; --ia) {
            const int jb = d - ia;
            if (jb < 0 || jb >= S || !(kMask & emu::term_bit(ia, jb))) continue;
            const std::uint64_t da = desc_sw128(st + ia * kATile + cw * 64 * kStageK + step * kStepBytes, 16, 1024);
            const std::uint64_t db = desc_sw128(st + S * kATile + jb * kBTile + step * kStepBytes, 16, 1024);
            wgmma_step<T, false>(small, da, db);
          }
      }
      const std::uint64_t da = desc_sw128(st + cw * 64 * kStageK + step * kStepBytes, 16, 1024);
      const std::uint64_t db = desc_sw128(st + S * kATile + step * kStepBytes, 16, 1024);
      wgmma_step<T, false>(acc, da, db);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");  // the previous stage's wgmmas are done
    if (kt > 0 && lane == 0) bar_arrive(empty0 + 8 * ((kt - 1) % kS));
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  if constexpr (kSmall) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(small[i], acc[i]);
  }
  store_tile<kSplitN>(acc, m0, n0, cw, w, lane, m, n, c, ldc, 0);
#else
  (void)map_a, (void)map_b, (void)m, (void)n, (void)k, (void)c, (void)ldc;
  __trap();  // compiled out: the host's support check (sm_90a code) never launches this
#endif
}

/// The pre-pass for B: the S slices of a rows x cols fp32 matrix x (row-major, ld), transposed, into one matrix of
/// S cols rows (slice l's column j at row l cols + j, K-major, leading dimension ld_out): tiles of 32 x 32 through
/// shared memory, read along x's rows and written along the output's. bf16 slices as codes, tf32 as fp32 patterns.
template <emu::SliceKind K, int S>
__global__ void split_transposed(int rows, int cols, const float* __restrict__ x, long long ld, void* out, long long ld_out) {
  using Code = std::conditional_t<K == emu::SliceKind::Bf16NearestEven, std::uint16_t, std::uint32_t>;
  __shared__ Code tile[S][32][33];
  const int r0 = static_cast<int>(blockIdx.y) * 32, c0 = static_cast<int>(blockIdx.x) * 32;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);  // 32 x 8
  for (int i = ty; i < 32; i += 8) {
    const int r = r0 + i, col = c0 + tx;
    float sl[3] = {0.0f, 0.0f, 0.0f};
    if (r < rows && col < cols) emu::split_slices(K, S, x[static_cast<long long>(r) * ld + col], sl);
#pragma unroll
    for (int l = 0; l < S; ++l) {
      if constexpr (K == emu::SliceKind::Bf16NearestEven) tile[l][i][tx] = static_cast<Code>(emu::f32_bits(sl[l]) >> 16);
      else tile[l][i][tx] = emu::f32_bits(sl[l]);
    }
  }
  __syncthreads();
  Code* o = static_cast<Code*>(out);
  for (int i = ty; i < 32; i += 8) {
    const int col = c0 + i, r = r0 + tx;  // output row col (of slice l), element r along K
    if (col >= cols || r >= rows) continue;
#pragma unroll
    for (int l = 0; l < S; ++l) o[(static_cast<long long>(l) * cols + col) * ld_out + r] = tile[l][tx][i];
  }
}

/// The pre-pass for A: the S slices of a rows x cols fp32 matrix (row-major, ld) into one matrix of S rows rows
/// (slice l's row i at row l rows + i, leading dimension ld_out). One thread per element along a row.
template <emu::SliceKind K, int S>
__global__ void split_stacked(int rows, int cols, const float* __restrict__ x, long long ld, void* out, long long ld_out) {
  using Code = std::conditional_t<K == emu::SliceKind::Bf16NearestEven, std::uint16_t, std::uint32_t>;
  const int col = static_cast<int>(blockIdx.x) * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);
  if (col >= cols) return;
  Code* o = static_cast<Code*>(out);
  for (int r = static_cast<int>(blockIdx.y); r < rows; r += static_cast<int>(gridDim.y)) {
    float sl[3];
    emu::split_slices(K, S, x[static_cast<long long>(r) * ld + col], sl);
#pragma unroll
    for (int l = 0; l < S; ++l) {
      const long long at = (static_cast<long long>(l) * rows + r) * ld_out + col;
      if constexpr (K == emu::SliceKind::Bf16NearestEven) o[at] = static_cast<Code>(emu::f32_bits(sl[l]) >> 16);
      else o[at] = emu::f32_bits(sl[l]);
    }
  }
}

}  // namespace fpcert::wgmma_device
