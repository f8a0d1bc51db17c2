// kernels/emu/cuda/emu_split_kernel.cuh — device code of the split-product tensor-core GEMMs (3xTF32 and
// nxBF16, kernels/emu/cuda/emu_split.cu): a pre-pass cuts each fp32 operand into slices, then one mma.sync
// GEMM multiplies the kept slice pairs.
//
// The GEMM is kernels/gemm/cuda/mma_kernel.cuh's mainloop (same 128 x 128 block tile, 8 warps of 64 x 32,
// K stages of 64 bytes double-buffered in shared memory through registers, the same fragment loads)
// with S slices of A and S of B per stage (dynamic shared memory, S * 40,960 bytes) and the SplitAcc
// policy, which issues per k-step one MMA per kept term (i, j) = (slice of A, slice of B) into one of
// two accumulators:
//   acc_small  every kept term except (0, 0), in the split table's order (smallest first) per k-step;
//   acc_big    the (0, 0) term alone;
// and the epilogue writes C = RN(acc_small + acc_big) (one fp32 add, __fadd_rn): the smaller class is
// merged into the larger at the end, as the CPU models merge their per-term sums smallest first. The
// big accumulator sees exactly the K products of a plain tf32/bf16 GEMM; the small one sees at most
// 8K products whose sum is at most 2^-7 (bf16) or 2^-10 (tf32) of the big one's magnitude, so its
// rounding adds at most that fraction to the accumulation error (docs/emulation.md).
//
// Term order inside a k-step is canonical — by i + j descending, then i descending — which is the split
// table's order for every scheme (kernels/emu/split.cpp); the host side derives the term mask from the
// table and refuses a table whose order is not canonical (emu_split.cu), so kernel and table cannot
// drift apart.
//
// With FPCERT_EMU_EMULATION defined the code compiles as host C++ on top of mma_kernel.cuh's emulation
// path (tests/kernels/emu/emulation_mma_test.cpp supplies the emulated MMA through emu_emulated_mma).
#pragma once

#if defined(FPCERT_EMU_EMULATION) && !defined(FPCERT_MMA_EMULATION)
#define FPCERT_MMA_EMULATION 1
#endif
#include "kernels/emu/emu_arith.cuh"
#include "kernels/gemm/cuda/mma_kernel.cuh"

namespace fpcert::FPCERT_MMA_NS {

// ---- the MMA and shared memory, for the emulated kernels ----
#if defined(FPCERT_MMA_EMULATION)
/// Defined by the emulation test (its own warp exchange, independent of mma_emulation_test.cpp's).
template <Mma T>
void emu_emulated_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]);
template <Mma T>
inline void emu_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  emu_emulated_mma<T>(d, a, b);
}
/// The block's dynamic shared memory (the emulation runs one block at a time).
inline std::uint32_t* emu_dynamic_smem = nullptr;
inline std::uint32_t* emu_smem() { return emu_dynamic_smem; }
#else
template <Mma T>
__device__ __forceinline__ void emu_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  mma<T>(d, a, b);
}
__device__ __forceinline__ std::uint32_t* emu_smem() {
  extern __shared__ __align__(16) std::uint32_t emu_dyn_smem[];
  return emu_dyn_smem;
}
#endif

/// Up to three slice matrices of one operand (same shape and leading dimension).
struct SlicePtrs {
  const std::uint8_t* p[3];
};

/// Bytes of dynamic shared memory of a kernel with S slices: 2 buffers x S slices x (A + B) tiles.
constexpr int split_smem_bytes(int slices) { return 2 * slices * kSliceTileWords * 4; }

using emu::term_bit;  // bit of term (i, j) in a term mask (kernels/emu/emu_arith.cuh)

/// The split products' accumulation policy (mma_kernel.cuh's mainloop): per k-step and tile, every kept
/// term except (0, 0) into `small`, in canonical order (i + j descending, then i descending), and the
/// (0, 0) term last into `acc`.
template <Mma T, int S, unsigned kMask>
struct SplitAcc {
  static constexpr bool kSmall = (kMask & ~term_bit(0, 0)) != 0;
  float acc[kMTiles][kNTiles][4];
  float small[kSmall ? kMTiles : 1][kSmall ? kNTiles : 1][4];
  __device__ __forceinline__ SplitAcc() {
    zero_frags(acc);
    if constexpr (kSmall) zero_frags(small);
  }
  __device__ __forceinline__ void issue(int i, int j, const std::uint32_t (&af)[S][4], const std::uint32_t (&bf)[S][kNTiles][2]) {
    FPCERT_UNROLL
    for (int d = 2 * (S - 1); d >= 1; --d)
      FPCERT_UNROLL
      for (int ia = S - 1; ia >= 0; --ia) {
        const int jb = d - ia;
        if (jb < 0 || jb >= S) continue;
        if (kMask & term_bit(ia, jb)) emu_mma<T>(small[i][j], af[ia], bf[jb][j]);
      }
    emu_mma<T>(acc[i][j], af[0], bf[0][j]);
  }
  __device__ __forceinline__ void step() {}
  __device__ __forceinline__ void stage(std::int64_t, std::int64_t, const TilePos&) {}
};

/// C = sum over kept terms (i, j) of A_i B_j, A_i and B_j the slice matrices (tf32 values as fp32
/// patterns, or bf16 codes), row-major with leading dimensions lda, ldb whose rows are 16-byte
/// aligned (the pre-pass writes them so). T: Mma::TF32 or Mma::BF16. C = RN(small + acc).
template <Mma T, int S, unsigned kMask>
__global__ void __launch_bounds__(kThreads, 1)
    split_gemm(std::int64_t m, std::int64_t n, std::int64_t k, SlicePtrs a, std::int64_t lda, SlicePtrs b,
               std::int64_t ldb, float* __restrict__ c, std::int64_t ldc) {
  static_assert(T == Mma::TF32 || T == Mma::BF16, "slices are tf32 or bf16");
  static_assert(S >= 1 && S <= 3, "one to three slices");
  static_assert((kMask & term_bit(0, 0)) != 0, "every scheme keeps the leading term");
  Operands<S> op{{}, {}, lda, ldb, m, n, k, true, true};
  FPCERT_UNROLL
  for (int l = 0; l < S; ++l) {
    op.a[l] = a.p[l];
    op.b[l] = b.p[l];
  }
  const TilePos pos = tile_pos();
  SplitAcc<T, S, kMask> acc;
  // Slices are stored as they are (tf32 slices are already tf32 values in fp32 bits).
  mainloop<MmaInfo<T>::kBytes, S, false>(op, pos, StageTiles<S>{emu_smem()}, acc);
  store_tile(pos, m, n, c, ldc, [&](int i, int j, int q) {
    if constexpr (SplitAcc<T, S, kMask>::kSmall) return emu::fadd_rn(acc.small[i][j][q], acc.acc[i][j][q]);
    else return acc.acc[i][j][q];
  });
}

#if !defined(FPCERT_MMA_EMULATION)
/// The pre-pass: the S slices of a rows x cols fp32 matrix (leading dimension ld) into S matrices with
/// leading dimension ld_out (tf32 slices as fp32 patterns, bf16 slices as codes). One thread per
/// column of a row, consecutive threads along the row; rows strided by gridDim.y.
template <emu::SliceKind K, int S>
__global__ void split_operand(std::int64_t rows, std::int64_t cols, const float* __restrict__ x, std::int64_t ld,
                              SlicePtrs out_const, std::int64_t ld_out) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  for (std::int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    float sl[3];
    emu::split_slices(K, S, x[row * ld + col], sl);
    FPCERT_UNROLL
    for (int l = 0; l < S; ++l) {
      auto* base = const_cast<std::uint8_t*>(out_const.p[l]);
      if constexpr (K == emu::SliceKind::Bf16NearestEven)
        reinterpret_cast<std::uint16_t*>(base)[row * ld_out + col] = static_cast<std::uint16_t>(emu::f32_bits(sl[l]) >> 16);
      else
        reinterpret_cast<std::uint32_t*>(base)[row * ld_out + col] = emu::f32_bits(sl[l]);
    }
  }
}
#endif

}  // namespace fpcert::FPCERT_MMA_NS
