// kernels/gemm/cuda/mma_kernel.cuh — the device code of the mma.sync tensor-core GEMMs (kernels/gemm/cuda/mma.cu).
//
// One design for fp16, bf16, tf32, e4m3 and e5m2: a block computes a 128 x 128 tile of C with 8 warps
// (2 along M x 4 along N, 64 x 32 per warp: 4 x 4 MMA tiles of 16 x 8). K advances in stages of 64
// bytes of K (32 fp16, 16 tf32, 64 fp8 elements: two MMA k-steps of 32 bytes each), double-buffered
// in shared memory with register staging (the next stage's global loads are issued before the
// current stage's MMAs). K tails and M/N edges are zero-filled in shared memory (zero products leave
// every sum unchanged); C is written element by element, only where row < m and col < n, so the ldc
// padding is never touched.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k8 / m16n8k16 / m16n8k32"; the same maps
// as CUTLASS cute/atom/mma_traits_sm80.hpp and mma_traits_sm89.hpp, checked term by term), with
// g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group):
//   A (16 x K_step, "row"), 4 registers of 32 bits: register r holds the 32-bit word of row
//     g + 8 * (r & 1) at byte 4t + 16 * (r >> 1) of the 32-byte K step — for every type:
//       f16/bf16 (m16n8k16): a_{2r}, a_{2r+1} = A[g + 8(r&1)][2t + 8(r>>1) + {0,1}]
//       tf32     (m16n8k8):  a_r              = A[g + 8(r&1)][t + 4(r>>1)]
//       e4m3/e5m2 (m16n8k32): a_{4r..4r+3}    = A[g + 8(r&1)][4t + 16(r>>1) + {0..3}]
//   B (K_step x 8, "col": k contiguous per column), 2 registers: register r holds the 32-bit word
//     of column g at byte 4t + 16r of the K step (f16: B[2t + 8r + {0,1}][g]; tf32: B[t + 4r][g];
//     fp8: B[4t + 16r + {0..3}][g]); the lowest k sits in the lowest bits.
//   C/D (16 x 8 fp32), 4 registers: c_i = C[g + 8 * (i >> 1)][2t + (i & 1)].
// So A is kept in shared memory row-major (K contiguous) and B transposed (one row per column n, K
// contiguous), and every fragment register is one aligned 32-bit shared-memory load. Rows are padded
// from 64 to 80 bytes (20 words): the 8 rows x 4 words a warp reads per register, word 20g + t,
// land in 32 distinct banks.
//
// With FPCERT_MMA_EMULATION defined the same code compiles as host C++ (tests/kernels/
// mma_emulation_test.cpp supplies threadIdx, __syncthreads and an emulated warp-collective MMA built
// from the PTX fragment tables), so its index arithmetic is checked on machines without a GPU.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(FPCERT_MMA_EMULATION)
#define FPCERT_MMA_NS mma_emulated
#define FPCERT_UNROLL
#else
#include <cuda_runtime.h>
#define FPCERT_MMA_NS mma_device
#define FPCERT_UNROLL _Pragma("unroll")
#endif

namespace fpcert::FPCERT_MMA_NS {

enum class Mma { F16, BF16, TF32, E4M3, E5M2 };

/// Element size in bytes, K of one MMA, the SM version whose instructions the kernel needs, and the
/// blocks per SM asked of the register allocator (2: at most 128 registers, which the 16-bit and
/// tf32 kernels meet without spills; the FP8 kernels' byte transposes need about 210).
template <Mma T>
struct MmaInfo;
template <>
struct MmaInfo<Mma::F16> {
  static constexpr int kBytes = 2, kK = 16, kArch = 80, kMinBlocks = 2;
};
template <>
struct MmaInfo<Mma::BF16> {
  static constexpr int kBytes = 2, kK = 16, kArch = 80, kMinBlocks = 2;
};
template <>
struct MmaInfo<Mma::TF32> {
  static constexpr int kBytes = 4, kK = 8, kArch = 80, kMinBlocks = 2;
};
template <>
struct MmaInfo<Mma::E4M3> {
  static constexpr int kBytes = 1, kK = 32, kArch = 89, kMinBlocks = 1;
};
template <>
struct MmaInfo<Mma::E5M2> {
  static constexpr int kBytes = 1, kK = 32, kArch = 89, kMinBlocks = 1;
};

constexpr int kThreads = 256;                      // 8 warps
constexpr int kBM = 128, kBN = 128;                // block tile of C
constexpr int kStageBytes = 64;                    // bytes of K per shared-memory stage
constexpr int kStepBytes = 32;                     // bytes of K per MMA (16 f16, 8 tf32, 32 fp8)
constexpr int kSteps = kStageBytes / kStepBytes;   // MMA k-steps per stage
constexpr int kRowWords = (kStageBytes + 16) / 4;  // padded row: 80 bytes = 20 words
constexpr int kWarpM = 64, kWarpN = 32;            // warp tile (warps: 2 along M x 4 along N)
constexpr int kMTiles = kWarpM / 16, kNTiles = kWarpN / 8;
static_assert((kBM / kWarpM) * (kBN / kWarpN) * 32 == kThreads, "the warp grid covers the block tile");
static_assert(kMTiles * 16 == kWarpM && kNTiles * 8 == kWarpN, "MMA tiles cover the warp tile");
static_assert(MmaInfo<Mma::F16>::kK * 2 == kStepBytes && MmaInfo<Mma::TF32>::kK * 4 == kStepBytes &&
                  MmaInfo<Mma::E4M3>::kK == kStepBytes,
              "one MMA consumes 32 bytes of K for every type");

// ---- memory helpers (plain casts on the device; memcpy in the host emulation) ----
struct Words4 {
  std::uint32_t w[4];
};
struct Words2 {
  std::uint32_t w[2];
};
__device__ __forceinline__ Words4 load16(const std::uint8_t* p) {
  Words4 r;
#if defined(FPCERT_MMA_EMULATION)
  std::memcpy(r.w, p, 16);
#else
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  r.w[0] = v.x, r.w[1] = v.y, r.w[2] = v.z, r.w[3] = v.w;
#endif
  return r;
}
__device__ __forceinline__ Words2 load8(const std::uint8_t* p) {
  Words2 r;
#if defined(FPCERT_MMA_EMULATION)
  std::memcpy(r.w, p, 8);
#else
  const uint2 v = *reinterpret_cast<const uint2*>(p);
  r.w[0] = v.x, r.w[1] = v.y;
#endif
  return r;
}
__device__ __forceinline__ void store16_shared(std::uint32_t* p, const std::uint32_t (&w)[4]) {
#if defined(FPCERT_MMA_EMULATION)
  std::memcpy(p, w, 16);
#else
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#endif
}
/// One element's code (ES bytes) from global memory, zero-extended.
template <int ES>
__device__ __forceinline__ std::uint32_t load_elem(const std::uint8_t* base, std::int64_t idx) {
#if defined(FPCERT_MMA_EMULATION)
  std::uint32_t v = 0;
  std::memcpy(&v, base + idx * ES, ES);  // little-endian host, as the device
  return v;
#else
  if constexpr (ES == 1) return base[idx];
  else if constexpr (ES == 2) return reinterpret_cast<const std::uint16_t*>(base)[idx];
  else return reinterpret_cast<const std::uint32_t*>(base)[idx];
#endif
}

// ---- the MMA instructions (D = A * B + C, accumulator in place) ----
#if defined(FPCERT_MMA_EMULATION)
/// Defined by the emulation: the warp-collective MMA from the PTX fragment tables.
template <Mma T>
void emulated_mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]);
std::uint32_t emulated_tf32_rna(std::uint32_t f32_bits);
template <Mma T>
inline void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  emulated_mma<T>(d, a, b);
}
inline std::uint32_t to_tf32(std::uint32_t bits) { return emulated_tf32_rna(bits); }
inline float fadd_rn(float x, float y) { return x + y; }  // host: IEEE binary32 add, -ffp-contract=off
#else
// One warp-wide mma.sync.aligned.<shape>.row.col.f32.<A>.<B>.f32: D = A B + D on the fp32 fragment,
// D (4 fp32, read and written), A (4 registers), B (2 registers) for every shape used here.
#define FPCERT_MMA_SYNC(shape_types)                                                                          \
  asm volatile("mma.sync.aligned." shape_types ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

template <Mma T>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (T == Mma::F16) FPCERT_MMA_SYNC("m16n8k16.row.col.f32.f16.f16");
  else if constexpr (T == Mma::BF16) FPCERT_MMA_SYNC("m16n8k16.row.col.f32.bf16.bf16");
  else if constexpr (T == Mma::TF32) FPCERT_MMA_SYNC("m16n8k8.row.col.f32.tf32.tf32");
#if __CUDA_ARCH__ >= 890
  else if constexpr (T == Mma::E4M3) FPCERT_MMA_SYNC("m16n8k32.row.col.f32.e4m3.e4m3");
  else if constexpr (T == Mma::E5M2) FPCERT_MMA_SYNC("m16n8k32.row.col.f32.e5m2.e5m2");
#else
  else __trap();  // unreachable: can_implement refuses devices and binaries without sm_89 code
#endif
#else
  __trap();  // unreachable: can_implement refuses devices and binaries without sm_80 code
#endif
}
#undef FPCERT_MMA_SYNC

/// fp32 -> tf32, round to nearest with ties away from zero (the low 13 bits of the result are 0).
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t bits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
  return r;
#else
  __trap();
  return 0;
#endif
}
__device__ __forceinline__ float fadd_rn(float x, float y) { return __fadd_rn(x, y); }  // never contracted
#endif

/// Registers staging one stage of A and B between global and shared memory.
template <int ES>
struct Stage {
  // A: 128 rows x 64 bytes = 512 chunks of 16 bytes, two per thread.
  static constexpr int kAChunks = kBM * kStageBytes / 16 / kThreads;
  // B: jobs of R = 4/ES consecutive k rows (one 32-bit word of K per column) x W columns.
  static constexpr int kR = 4 / ES;
  static constexpr int kW = ES == 4 ? 4 : 8;
  static constexpr int kRowWordsB = kW * ES / 4;  // 32-bit words per job row: 2 (fp8) or 4
  static constexpr int kJobs = (kStageBytes / 4) * (kBN / kW);
  static constexpr int kBJobs = kJobs / kThreads;
  static_assert(kAChunks * kThreads * 16 == kBM * kStageBytes, "the A stage splits evenly");
  static_assert(kBJobs * kThreads == kJobs, "the B stage splits evenly");
  std::uint32_t a[kAChunks][4];
  std::uint32_t b[kBJobs][kR][kRowWordsB];
};

/// Global -> registers for the stage starting at element k0 of K. Out-of-range elements are zero.
/// vec_a / vec_b: the matrix's base and rows are 16-byte aligned, so whole in-range chunks may be
/// loaded as vectors; every other chunk is gathered element by element.
template <int ES>
__device__ __forceinline__ void load_stage(Stage<ES>& st, const std::uint8_t* a, std::int64_t lda, bool vec_a,
                                           const std::uint8_t* b, std::int64_t ldb, bool vec_b, std::int64_t m,
                                           std::int64_t n, std::int64_t k, std::int64_t row0, std::int64_t col0,
                                           std::int64_t k0) {
  constexpr int E = 16 / ES;  // elements per 16-byte chunk of A
  FPCERT_UNROLL
  for (int c = 0; c < Stage<ES>::kAChunks; ++c) {
    const int chunk = static_cast<int>(threadIdx.x) + c * kThreads;
    const std::int64_t row = row0 + (chunk >> 2);
    const std::int64_t ke = k0 + (chunk & 3) * E;
    std::uint32_t w[4] = {0, 0, 0, 0};
    if (row < m) {
      if (vec_a && ke + E <= k) {
        const Words4 v = load16(a + (row * lda + ke) * ES);
        w[0] = v.w[0], w[1] = v.w[1], w[2] = v.w[2], w[3] = v.w[3];
      } else {
        FPCERT_UNROLL
        for (int e = 0; e < E; ++e)
          if (ke + e < k) w[(e * ES) / 4] |= load_elem<ES>(a, row * lda + ke + e) << (((e * ES) % 4) * 8);
      }
    }
    FPCERT_UNROLL
    for (int q = 0; q < 4; ++q) st.a[c][q] = w[q];
  }
  constexpr int R = Stage<ES>::kR, W = Stage<ES>::kW, RW = Stage<ES>::kRowWordsB;
  FPCERT_UNROLL
  for (int j = 0; j < Stage<ES>::kBJobs; ++j) {
    const int job = static_cast<int>(threadIdx.x) + j * kThreads;
    const int kq = job % (kStageBytes / 4);  // 32-bit word of K within the stage
    const std::int64_t n0 = col0 + (job / (kStageBytes / 4)) * W;
    FPCERT_UNROLL
    for (int r = 0; r < R; ++r) {
      const std::int64_t kr = k0 + kq * R + r;
      std::uint32_t w[RW];
      FPCERT_UNROLL
      for (int q = 0; q < RW; ++q) w[q] = 0;
      if (kr < k) {
        if (vec_b && n0 + W <= n) {
          if constexpr (RW == 4) {
            const Words4 v = load16(b + (kr * ldb + n0) * ES);
            w[0] = v.w[0], w[1] = v.w[1], w[2] = v.w[2], w[3] = v.w[3];
          } else {
            const Words2 v = load8(b + (kr * ldb + n0) * ES);
            w[0] = v.w[0], w[1] = v.w[1];
          }
        } else {
          FPCERT_UNROLL
          for (int e = 0; e < W; ++e)
            if (n0 + e < n) w[(e * ES) / 4] |= load_elem<ES>(b, kr * ldb + n0 + e) << (((e * ES) % 4) * 8);
        }
      }
      FPCERT_UNROLL
      for (int q = 0; q < RW; ++q) st.b[j][r][q] = w[q];
    }
  }
}

/// Registers -> shared memory: A row-major (K contiguous), B transposed (row n holds column n's K
/// run). tf32 kernels round every fp32 operand here (cvt.rna), once per element and block.
template <Mma T, int ES>
__device__ __forceinline__ void store_stage(const Stage<ES>& st, std::uint32_t* sa, std::uint32_t* sb) {
  constexpr bool kTf32 = T == Mma::TF32;
  FPCERT_UNROLL
  for (int c = 0; c < Stage<ES>::kAChunks; ++c) {
    const int chunk = static_cast<int>(threadIdx.x) + c * kThreads;
    std::uint32_t w[4];
    FPCERT_UNROLL
    for (int q = 0; q < 4; ++q) w[q] = kTf32 ? to_tf32(st.a[c][q]) : st.a[c][q];
    store16_shared(sa + (chunk >> 2) * kRowWords + (chunk & 3) * 4, w);
  }
  constexpr int R = Stage<ES>::kR, W = Stage<ES>::kW;
  constexpr std::uint32_t kMask = 0xFFFFFFFFu >> (32 - 8 * ES);  // one element's code
  FPCERT_UNROLL
  for (int j = 0; j < Stage<ES>::kBJobs; ++j) {
    const int job = static_cast<int>(threadIdx.x) + j * kThreads;
    const int kq = job % (kStageBytes / 4);
    const int nb = (job / (kStageBytes / 4)) * W;
    FPCERT_UNROLL
    for (int e = 0; e < W; ++e) {
      // Column e of the job: its R k-consecutive elements, the lowest k in the lowest bits.
      std::uint32_t word = 0;
      FPCERT_UNROLL
      for (int r = 0; r < R; ++r) word |= ((st.b[j][r][(e * ES) / 4] >> (((e * ES) % 4) * 8)) & kMask) << (r * ES * 8);
      sb[(nb + e) * kRowWords + kq] = kTf32 ? to_tf32(word) : word;
    }
  }
}

/// This thread's place in the block tile: the block's first row and column of C, its warp's tile
/// (wm, wn) and its lane's group g = lane / 4 and thread-in-group t = lane % 4 (the MMA fragment
/// coordinates). Shared by every mma.sync GEMM here and in the emulation kernels.
struct TilePos {
  std::int64_t row0, col0;
  int wm, wn, g, t;
  /// Rows and columns of C this thread holds: fragment (i, j), element q (h = q / 2, e = q % 2).
  __device__ __forceinline__ std::int64_t row(int i, int h) const { return row0 + wm * kWarpM + i * 16 + g + 8 * h; }
  __device__ __forceinline__ std::int64_t col(int j, int e) const { return col0 + wn * kWarpN + j * 8 + 2 * t + e; }
};
__device__ __forceinline__ TilePos tile_pos() {
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  return TilePos{static_cast<std::int64_t>(blockIdx.y) * kBM, static_cast<std::int64_t>(blockIdx.x) * kBN, warp / (kBN / kWarpN),
                 warp % (kBN / kWarpN), lane >> 2, lane & 3};
}

/// Every accumulator of a fragment array set to +0.
template <int MT, int NT>
__device__ __forceinline__ void zero_frags(float (&f)[MT][NT][4]) {
  FPCERT_UNROLL
  for (int i = 0; i < MT; ++i)
    FPCERT_UNROLL
    for (int j = 0; j < NT; ++j)
      FPCERT_UNROLL
      for (int q = 0; q < 4; ++q) f[i][j][q] = 0.0f;
}

/// The A fragment of M-tile i and the B fragment of N-tile j for k-step ks, from a stage in shared
/// memory (A row-major, B transposed; kRowWords words per row).
__device__ __forceinline__ void load_a_frag(const std::uint32_t* A, const TilePos& p, int i, int ks, std::uint32_t (&f)[4]) {
  const int kw = ks * (kStepBytes / 4) + p.t;  // word of this lane's first K bytes in the row
  const int r = p.wm * kWarpM + i * 16 + p.g;
  f[0] = A[r * kRowWords + kw];            // row g,     bytes 4t
  f[1] = A[(r + 8) * kRowWords + kw];      // row g + 8, bytes 4t
  f[2] = A[r * kRowWords + kw + 4];        // row g,     bytes 4t + 16
  f[3] = A[(r + 8) * kRowWords + kw + 4];  // row g + 8, bytes 4t + 16
}
__device__ __forceinline__ void load_b_frag(const std::uint32_t* B, const TilePos& p, int j, int ks, std::uint32_t (&f)[2]) {
  const int kw = ks * (kStepBytes / 4) + p.t;
  const int col = p.wn * kWarpN + j * 8 + p.g;
  f[0] = B[col * kRowWords + kw];      // column g, bytes 4t
  f[1] = B[col * kRowWords + kw + 4];  // column g, bytes 4t + 16
}

// ---- the mainloop: one K loop for every mma.sync GEMM here and in kernels/emu/cuda ----------------
// As CUTLASS splits a GEMM into a mainloop and an epilogue composed with an MMA policy: the mainloop
// below moves S slices of A and B through shared memory and hands each k-step's fragments to an
// accumulation policy (`Acc`), which issues its MMAs and folds its partial sums; each kernel then
// writes its epilogue with store_tile. Policies: PlainAcc (one fragment, optionally promoted every N
// k-steps) here; SplitAcc (kernels/emu/cuda/emu_split_kernel.cuh) and ScaledAcc
// (kernels/emu/cuda/emu_bf16_kernel.cuh). A policy has
//   issue(i, j, af, bf)  the MMAs of M-tile i and N-tile j for one k-step (af[S][4], bf[S][kNTiles][2]);
//   step()               after every k-step (all tiles issued);
//   stage(s, stages, pos) after every stage of K (pos: this thread's place in the tile).
// Each accumulator receives its MMAs in k order, whatever the order of the tiles within a k-step.

constexpr int kSliceTileWords = (kBM + kBN) * kRowWords;  // A and B of one slice, one buffer: 5,120 words

/// The shared-memory stages of S slices: buffer `buf` (0 or 1) of slice l holds A's rows, then B's.
template <int S>
struct StageTiles {
  std::uint32_t* smem;  ///< 2 * S * kSliceTileWords words, 16-byte aligned
  __device__ __forceinline__ std::uint32_t* a(int buf, int l) const { return smem + (buf * S + l) * kSliceTileWords; }
  __device__ __forceinline__ std::uint32_t* b(int buf, int l) const { return a(buf, l) + kBM * kRowWords; }
};

/// The mainloop's operands: S slice matrices of A (m x k, lda) and of B (k x n, ldb), codes of ES bytes;
/// vec_a / vec_b: rows 16-byte aligned (whole chunks may be loaded as vectors).
template <int S>
struct Operands {
  const std::uint8_t* a[S];
  const std::uint8_t* b[S];
  std::int64_t lda, ldb, m, n, k;
  bool vec_a, vec_b;
};

/// This block's tile of C through all of K, in stages of kStageBytes of K double-buffered in shared
/// memory through registers (the next stage's global loads are issued before the current stage's
/// MMAs). kRoundTf32: the slices are fp32 rounded to tf32 when stored (cvt.rna); else stored as they are.
template <int ES, int S, bool kRoundTf32, class Acc>
__device__ __forceinline__ void mainloop(const Operands<S>& op, const TilePos& pos, StageTiles<S> tiles, Acc& acc) {
  constexpr int kStageElems = kStageBytes / ES;
  constexpr Mma kStore = kRoundTf32 ? Mma::TF32 : Mma::BF16;  // store_stage rounds only for TF32
  const std::int64_t stages = (op.k + kStageElems - 1) / kStageElems;
  Stage<ES> st[S];
  if (stages > 0) {
    FPCERT_UNROLL
    for (int l = 0; l < S; ++l) {
      load_stage<ES>(st[l], op.a[l], op.lda, op.vec_a, op.b[l], op.ldb, op.vec_b, op.m, op.n, op.k, pos.row0, pos.col0, 0);
      store_stage<kStore, ES>(st[l], tiles.a(0, l), tiles.b(0, l));
    }
  }
  __syncthreads();
  for (std::int64_t s = 0; s < stages; ++s) {
    const int cur = static_cast<int>(s & 1);
    if (s + 1 < stages) {
      FPCERT_UNROLL
      for (int l = 0; l < S; ++l)
        load_stage<ES>(st[l], op.a[l], op.lda, op.vec_a, op.b[l], op.ldb, op.vec_b, op.m, op.n, op.k, pos.row0, pos.col0,
                       (s + 1) * kStageElems);
    }
    FPCERT_UNROLL
    for (int ks = 0; ks < kSteps; ++ks) {
      std::uint32_t bf[S][kNTiles][2];
      FPCERT_UNROLL
      for (int l = 0; l < S; ++l)
        FPCERT_UNROLL
        for (int j = 0; j < kNTiles; ++j) load_b_frag(tiles.b(cur, l), pos, j, ks, bf[l][j]);
      FPCERT_UNROLL
      for (int i = 0; i < kMTiles; ++i) {
        std::uint32_t af[S][4];
        FPCERT_UNROLL
        for (int l = 0; l < S; ++l) load_a_frag(tiles.a(cur, l), pos, i, ks, af[l]);
        FPCERT_UNROLL
        for (int j = 0; j < kNTiles; ++j) acc.issue(i, j, af, bf);
      }
      acc.step();
    }
    acc.stage(s, stages, pos);
    if (s + 1 < stages) {
      FPCERT_UNROLL
      for (int l = 0; l < S; ++l) store_stage<kStore, ES>(st[l], tiles.a(cur ^ 1, l), tiles.b(cur ^ 1, l));
    }
    __syncthreads();  // the stage just read may be overwritten next; the stage just written is complete
  }
}

/// f(i, j, q) for every element q of this thread's accumulator fragments (M-tile i, N-tile j).
template <class F>
__device__ __forceinline__ void for_each_element(F f) {
  FPCERT_UNROLL
  for (int i = 0; i < kMTiles; ++i)
    FPCERT_UNROLL
    for (int j = 0; j < kNTiles; ++j)
      FPCERT_UNROLL
      for (int q = 0; q < 4; ++q) f(i, j, q);
}

/// The epilogue's store: C[row][col] = value(i, j, q) for this thread's elements inside m x n (the
/// ldc padding is never touched).
template <class Value>
__device__ __forceinline__ void store_tile(const TilePos& pos, std::int64_t m, std::int64_t n, float* __restrict__ c, std::int64_t ldc,
                                           Value value) {
  for_each_element([&](int i, int j, int q) {
    const std::int64_t row = pos.row(i, q >> 1), col = pos.col(j, q & 1);
    const float v = value(i, j, q);
    if (row < m && col < n) c[row * ldc + col] = v;
  });
}

/// One fp32 fragment per tile; with kPromote the MMAs go into a partial fragment that is added to it
/// with one RN add (fadd_rn) every promote_steps k-steps, and at the end, and reset to +0.
template <Mma T, bool kPromote>
struct PlainAcc {
  float acc[kMTiles][kNTiles][4];
  float part[kPromote ? kMTiles : 1][kPromote ? kNTiles : 1][4];
  int promote_steps, since = 0;
  __device__ __forceinline__ explicit PlainAcc(int steps) : promote_steps(steps) {
    zero_frags(acc);
    if constexpr (kPromote) zero_frags(part);
  }
  __device__ __forceinline__ void issue(int i, int j, const std::uint32_t (&af)[1][4], const std::uint32_t (&bf)[1][kNTiles][2]) {
    if constexpr (kPromote) mma<T>(part[i][j], af[0], bf[0][j]);
    else mma<T>(acc[i][j], af[0], bf[0][j]);
  }
  __device__ __forceinline__ void fold() {
    for_each_element([&](int i, int j, int q) {
      acc[i][j][q] = fadd_rn(acc[i][j][q], part[i][j][q]);
      part[i][j][q] = 0.0f;
    });
  }
  __device__ __forceinline__ void step() {
    if constexpr (kPromote)
      if (++since == promote_steps) {  // uniform across the block
        since = 0;
        fold();
      }
  }
  __device__ __forceinline__ void stage(std::int64_t, std::int64_t, const TilePos&) {}
};

/// C = A * B (A m x k row-major with lda, B k x n row-major with ldb, C fp32 row-major with ldc; A
/// and B are codes of the kernel's format). Block (x, y) computes C[128y..][128x..]. With kPromote
/// the MMAs accumulate into a fragment that is added to the fp32 accumulator with one RN add every
/// promote_steps MMA k-steps (promote_steps * K_mma products), and reset to +0.
template <Mma T, bool kPromote>
__global__ void __launch_bounds__(kThreads, MmaInfo<T>::kMinBlocks)
    mma_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::uint8_t* __restrict__ a, std::int64_t lda,
             bool vec_a, const std::uint8_t* __restrict__ b, std::int64_t ldb, bool vec_b, float* __restrict__ c,
             std::int64_t ldc, int promote_steps) {
  __shared__ __align__(16) std::uint32_t smem[2 * kSliceTileWords];
  const TilePos pos = tile_pos();
  PlainAcc<T, kPromote> acc(promote_steps);
  mainloop<MmaInfo<T>::kBytes, 1, T == Mma::TF32>(Operands<1>{{a}, {b}, lda, ldb, m, n, k, vec_a, vec_b}, pos, StageTiles<1>{smem},
                                                   acc);
  if constexpr (kPromote) acc.fold();
  store_tile(pos, m, n, c, ldc, [&](int i, int j, int q) { return acc.acc[i][j][q]; });
}

}  // namespace fpcert::FPCERT_MMA_NS
