// kernels/gemm/cuda/wgmma_kernel.cuh — the device code of the Hopper tensor-core GEMMs (kernels/gemm/cuda/wgmma.cu):
// wgmma.mma_async fed by TMA, for fp16, bf16, tf32, e4m3 and e5m2 with fp32 accumulation and fp32 output.
//
// Design (written here; CUTLASS's sm90 "warp-specialized" mainloop and the PTX ISA are what was read):
// - One block of 384 threads computes a kBM x kBN = 128 x 256 tile of C. Warpgroup 0 is the producer: after
//   giving registers back (setmaxnreg.dec 40) one of its threads issues the TMA loads. Warpgroups 1 and 2 are the
//   consumers (setmaxnreg.inc 232): each owns 64 rows of the tile and all 256 columns, 128 fp32 accumulators per
//   thread, and issues wgmma.mma_async m64n256k{16,8,32} from shared memory.
// - K advances in stages of 128 bytes (64 fp16/bf16, 32 tf32, 128 fp8 elements), 4 stages in a ring (6 for 128-wide tiles),
//   each with a "full" mbarrier (the producer's arrive.expect_tx, completed by the TMA's transaction bytes) and an
//   "empty" mbarrier (one arrive per consumer warp when its wgmmas of the stage have completed).
// - Shared-memory tiles use the 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B on the TMA side, layout type 1 in
//   the wgmma descriptors): A (K-major) as 128 rows x 128 bytes; B either K-major (n rows x 128 bytes of K, the
//   descriptor for "B column-major") or, for fp16/bf16 only, N-major as read from a row-major B (64 K-rows x 128
//   bytes of N per 64-column box, wgmma's transpose-B bit). Every stage buffer is 1024-byte aligned (the swizzle
//   atom: 8 rows x 128 bytes); one wgmma k-step advances the K-major descriptor's start by 32 bytes and the
//   N-major one by 16 K-rows (2048 bytes).
// - Zero fill: the TMA writes zeros for every element outside the matrix (rows past M or N, K past the end), so
//   the K tail adds exact zero products to whole stages (the order's pad) and edge tiles need no special path;
//   C is written from the accumulators only where row < m and col < n.
// - The order of every C element is fixed: its consumer warpgroup owns it for all of K and applies the wgmma
//   k-steps for k ascending (K zero-padded to a multiple of the stage), starting from +0 accumulators. Runs are
//   bitwise reproducible. Tiles are visited in groups of kGroupM tiles along M (L2 reuse of B).
// - Persistent schedule (wgmma_gemm): one block per SM at most, each computing tiles blockIdx.x, + gridDim.x, ...;
//   the ring's stage counter runs on across a block's tiles (slot it % kS, phase (it / kS) & 1), so the producer
//   fills the next tile's stages while the consumers store the previous tile. The other kernels on this mainloop
//   (kernels/emu/cuda/) keep one block per tile.
// - The promoted FP8 kernels (tiles 128 x 128, m64n128: a second set of 64 accumulators) wait for each stage's chain
//   (128 products, started from +0), add it to the fp32 accumulators with one round-to-nearest add each, and restart.
// - Every mbarrier wait is bounded (2^31 tries, seconds): a broken protocol traps (a device error the caller
//   reports) instead of hanging the GPU.
//
// Accumulator fragment of m64nN (PTX ISA, "Register fragments and shared memory matrix layouts", wgmma D):
// thread 32w + lane of the warpgroup, g = lane / 4, t = lane % 4, holds for each 8-column chunk c the registers
// d[4c + i] = D[16w + g + 8 (i >> 1)][8c + 2t + (i & 1)].
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace fpcert::wgmma_device {

enum class Wg { F16, BF16, TF32, E4M3, E5M2 };

/// Element bytes and K of one wgmma (32 bytes of K for every type: 16 fp16/bf16, 8 tf32, 32 fp8).
template <Wg T>
struct WgInfo {
  static constexpr int kBytes = T == Wg::TF32 ? 4 : (T == Wg::E4M3 || T == Wg::E5M2) ? 1 : 2;
  static constexpr int kK = 32 / kBytes;
};

constexpr int kBM = 128, kBN = 256;                // block tile of C (kBN: the plain kernels; promoted FP8: 128)
constexpr int kStageK = 128;                       // bytes of K per stage (one 128-byte swizzle row)
constexpr int kStepBytes = 32;                     // bytes of K per wgmma (16 f16, 8 tf32, 32 fp8)
constexpr int kSteps = kStageK / kStepBytes;       // wgmmas per stage
constexpr int kConsumers = 2;                      // warpgroups computing
constexpr int kThreads = 128 * (kConsumers + 1);   // + the producer warpgroup
constexpr int kATile = kBM * kStageK;              // 16 KiB
/// Per tile width N (256 or 128): B's stage bytes, the ring's stages (within 227 KiB) and the dynamic shared memory.
constexpr int stage_bytes(int n) { return kATile + n * kStageK; }
constexpr int stages(int n) { return n == 256 ? 4 : 6; }
constexpr int smem_bytes(int n) { return stages(n) * stage_bytes(n) + 1024 /* alignment */ + 2 * stages(n) * 8 /* barriers */; }
constexpr int kGroupM = 8;                         // tiles along M visited together
constexpr int kNBox = 64;                          // N-major B: columns per TMA box (128 bytes of fp16)
/// The N-major B descriptor (fp16/bf16): LBO = bytes between 64-column boxes (64 K-rows x 128 bytes), SBO = bytes
/// between 8-row groups of K (1024, as K-major): CUTLASS's MN-major SW128 canonical layout
/// ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)) in 16-byte units, checked on the device (wgmma_gpu_test).
constexpr std::uint32_t kNMajorLbo = (kStageK / 2) * 128;

}  // namespace fpcert::wgmma_device

namespace fpcert::wgmma_device {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FPCERT_WG_ON 1
#endif

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#if defined(FPCERT_WG_ON)
__device__ __forceinline__ void bar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/// Wait for the phase of parity `parity` to complete; trap after about 10 s (a broken protocol, not a slow load).
__device__ __forceinline__ void bar_wait(std::uint32_t bar, std::uint32_t parity) {
  long long start = 0;
  for (;;) {
    std::uint32_t done = 0;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    if (done) return;
    if (start == 0) start = clock64();
    else if (clock64() - start > (1LL << 34)) __trap();
  }
}
/// TMA: a box of the 2-D tensor `map` at coordinates (c0 innermost, c1) into shared memory at dst, completing
/// `bar`'s transaction bytes.
__device__ __forceinline__ void tma_2d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
/// wgmma shared-memory descriptor: start address, leading and stride byte offsets (>> 4), 128-byte swizzle.
__device__ __forceinline__ std::uint64_t desc_sw128(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ULL << 62);
}

// The accumulator operands of m64n128 (64 registers) and m64n256 (128): %0.. in order, d[0..] read and written.
#define FPCERT_WG_D64_REGS \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63" 
#define FPCERT_WG_D64_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),\
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),\
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),\
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),\
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),\
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),\
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),\
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FPCERT_WG_D128_REGS FPCERT_WG_D64_REGS "," \
  "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95," \
  "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111," \
  "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127" 
#define FPCERT_WG_D128_OUT FPCERT_WG_D64_OUT, \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),\
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),\
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),\
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),\
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),\
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),\
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),\
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define FPCERT_WG_MMA(types, tail)                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                             \
               "wgmma.mma_async.sync.aligned." types " {" FPCERT_WG_D128_REGS "}, %128, %129, p" tail ";\n}\n" \
               : FPCERT_WG_D128_OUT                                                                       \
               : "l"(da), "l"(db), "r"(1))
#define FPCERT_WG_MMA64(types, tail)                                                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                              \
               "wgmma.mma_async.sync.aligned." types " {" FPCERT_WG_D64_REGS "}, %64, %65, p" tail ";\n}\n"  \
               : FPCERT_WG_D64_OUT                                                                        \
               : "l"(da), "l"(db), "r"(1))

/// D (64 x 256, fp32) += A B for one k-step: A from shared memory K-major, B K-major or (kTransB) N-major.
template <Wg T, bool kTransB>
__device__ __forceinline__ void wgmma_step(float (&d)[128], std::uint64_t da, std::uint64_t db) {
  if constexpr (T == Wg::F16) {
    if constexpr (kTransB) FPCERT_WG_MMA("m64n256k16.f32.f16.f16", ", 1, 1, 0, 1");
    else FPCERT_WG_MMA("m64n256k16.f32.f16.f16", ", 1, 1, 0, 0");
  } else if constexpr (T == Wg::BF16) {
    if constexpr (kTransB) FPCERT_WG_MMA("m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 1");
    else FPCERT_WG_MMA("m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0");
  } else if constexpr (T == Wg::TF32) {
    FPCERT_WG_MMA("m64n256k8.f32.tf32.tf32", ", 1, 1");
  } else if constexpr (T == Wg::E4M3) {
    FPCERT_WG_MMA("m64n256k32.f32.e4m3.e4m3", ", 1, 1");
  } else {
    FPCERT_WG_MMA("m64n256k32.f32.e5m2.e5m2", ", 1, 1");
  }
}
/// D (64 x 128, fp32) += A B for one k-step, A K-major, B K-major or (fp16 / bf16, kTransB) N-major: the kernels with
/// two accumulator sets (the promoted FP8 kernels; the split-product and BF16-on-FP16 kernels of kernels/emu/cuda/).
template <Wg T, bool kTransB>
__device__ __forceinline__ void wgmma_step(float (&d)[64], std::uint64_t da, std::uint64_t db) {
  static_assert(!kTransB || T == Wg::F16 || T == Wg::BF16, "m64n128: N-major B for fp16 / bf16 only");
  if constexpr (T == Wg::E4M3) FPCERT_WG_MMA64("m64n128k32.f32.e4m3.e4m3", ", 1, 1");
  else if constexpr (T == Wg::E5M2) FPCERT_WG_MMA64("m64n128k32.f32.e5m2.e5m2", ", 1, 1");
  else if constexpr (T == Wg::BF16 && kTransB) FPCERT_WG_MMA64("m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 1");
  else if constexpr (T == Wg::BF16) FPCERT_WG_MMA64("m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 0");
  else if constexpr (T == Wg::F16 && kTransB) FPCERT_WG_MMA64("m64n128k16.f32.f16.f16", ", 1, 1, 0, 1");
  else if constexpr (T == Wg::F16) FPCERT_WG_MMA64("m64n128k16.f32.f16.f16", ", 1, 1, 0, 0");
  else FPCERT_WG_MMA64("m64n128k8.f32.tf32.tf32", ", 1, 1");
}
/// Tile `id` of C (m0, n0) in the visiting order: groups of kGroupM tiles along M share B's columns in L2.
template <int kN>
__device__ __forceinline__ void tile_origin(int m, int n, int id, int& m0, int& n0) {
  const int tiles_m = (m + kBM - 1) / kBM, tiles_n = (n + kN - 1) / kN;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (id / per_group) * kGroupM, gsize = min(tiles_m - first_m, kGroupM);
  m0 = (first_m + (id % per_group) % gsize) * kBM;
  n0 = ((id % per_group) / gsize) * kN;
}
/// This block's tile when the grid has one block per tile.
template <int kN>
__device__ __forceinline__ void tile_origin(int m, int n, int& m0, int& n0) {
  tile_origin<kN>(m, n, static_cast<int>(blockIdx.x), m0, n0);
}
/// The number of tiles of C.
template <int kN>
__device__ __forceinline__ int tile_count(int m, int n) {
  return ((m + kBM - 1) / kBM) * ((n + kN - 1) / kN);
}
/// Thread 0 initialises the ring's barriers: "full" (the producer's expect_tx, plus `extra_full` arrivals of other
/// producer threads filling a stage's side data) and "empty" (one arrive per consumer warp). The caller synchronises
/// the block after.
__device__ __forceinline__ void init_ring(std::uint32_t full0, std::uint32_t empty0, int stages, int extra_full = 0) {
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) {
    bar_init(full0 + 8 * s, 1 + extra_full);
    bar_init(empty0 + 8 * s, kConsumers * 4);
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// The producer thread's loop: stage kt of A's kBM rows (K-major) and B's kN columns (K-major boxes, or kTransB
/// N-major boxes of kNBox columns) into ring slot (it0 + kt) % kS, once the consumers have released it. it0: the
/// ring position of the tile's first stage (a persistent block's earlier tiles used it0 stages; 0 for the first).
template <Wg T, bool kTransB, int kN, int kS, int kSB>
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b, std::uint32_t base, std::uint32_t full0,
                                        std::uint32_t empty0, int m0, int n0, int ktiles, long long it0 = 0) {
  constexpr int kStageElems = kStageK / WgInfo<T>::kBytes;
  for (int kt = 0; kt < ktiles; ++kt) {
    const long long it = it0 + kt;
    const int s = static_cast<int>(it % kS);
    if (it >= kS) bar_wait(empty0 + 8 * s, static_cast<std::uint32_t>((it / kS - 1) & 1));
    const std::uint32_t fb = full0 + 8 * s, sa = base + s * kSB, sb = sa + kATile;
    bar_expect_tx(fb, kSB);
    tma_2d(sa, map_a, fb, kt * kStageElems, m0);
    if constexpr (kTransB) {
#pragma unroll
      for (int j = 0; j < kN / kNBox; ++j) tma_2d(sb + j * kStageElems * 128, map_b, fb, n0 + j * kNBox, kt * kStageElems);
    } else {
      tma_2d(sb, map_b, fb, kt * kStageElems, n0);
    }
  }
}
/// The wgmma k-steps first .. first + kCount - 1 of a stage into d: A's 64 rows of this consumer at sa (K-major), B
/// at sb (K-major, or kTransB N-major with the descriptor's lbo_b / sbo_b). The caller fences before and commits after.
template <Wg T, bool kTransB, int kCount, int kRegs>
__device__ __forceinline__ void mma_steps(float (&d)[kRegs], int first, std::uint32_t sa, std::uint32_t sb, std::uint32_t lbo_b,
                                          std::uint32_t sbo_b) {
  static_assert(kCount > 0 && kCount <= kSteps, "k-steps inside one stage");
#pragma unroll
  for (int step = first; step < first + kCount; ++step) {
    const std::uint64_t da = desc_sw128(sa + step * kStepBytes, 16, 1024);
    const std::uint64_t db = kTransB ? desc_sw128(sb + step * (kStepBytes / WgInfo<T>::kBytes) * 128, lbo_b, sbo_b)
                                     : desc_sw128(sb + step * kStepBytes, 16, 1024);
    wgmma_step<T, kTransB>(d, da, db);
  }
}
/// One stage's wgmma k-steps into d (all kSteps of them).
template <Wg T, bool kTransB, int kRegs>
__device__ __forceinline__ void mma_stage(float (&d)[kRegs], std::uint32_t sa, std::uint32_t sb, std::uint32_t lbo_b, std::uint32_t sbo_b) {
  mma_steps<T, kTransB, kSteps>(d, 0, sa, sb, lbo_b, sbo_b);
}
#undef FPCERT_WG_MMA
#undef FPCERT_WG_MMA64
#endif  // FPCERT_WG_ON

/// The epilogue: a consumer warpgroup's 64 x kN fp32 values (the accumulator fragment, `v`) into C (m x n, row- or
/// column-major with ldc) where row < m and col < n; rows m0 + 64 cw + ..., columns n0 + ...
template <int kN>
__device__ __forceinline__ void store_tile(const float (&v)[kN / 2], int m0, int n0, int cw, int w, int lane, int m, int n,
                                           float* __restrict__ c, long long ldc, int c_col_major) {
  const int g = lane / 4, t = lane % 4;
  const int row0 = m0 + cw * 64 + 16 * w + g;
  const bool pair = !c_col_major && (ldc % 2 == 0) && (reinterpret_cast<std::uintptr_t>(c) % 8 == 0);
#pragma unroll
  for (int cc = 0; cc < kN / 8; ++cc) {
    const int col = n0 + 8 * cc + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      if (row >= m) continue;
      const float v0 = v[4 * cc + 2 * h], v1 = v[4 * cc + 2 * h + 1];
      if (c_col_major) {
        if (col < n) c[static_cast<long long>(col) * ldc + row] = v0;
        if (col + 1 < n) c[static_cast<long long>(col + 1) * ldc + row] = v1;
      } else if (pair && col + 1 < n) {
        *reinterpret_cast<float2*>(c + static_cast<long long>(row) * ldc + col) = make_float2(v0, v1);
      } else {
        if (col < n) c[static_cast<long long>(row) * ldc + col] = v0;
        if (col + 1 < n) c[static_cast<long long>(row) * ldc + col + 1] = v1;
      }
    }
  }
}

/// C (m x n, fp32, row- or column-major with ldc) = A B over tiles of kBM x kN. map_a: A as {K, M} (K innermost),
/// boxes of {kStageK / bytes, kBM}; map_b: B as {K, N} with boxes {kStageK / bytes, kN} (K-major), or, kTransB, as
/// {N, K} with boxes {kNBox, kStageK / bytes} (N-major). kPromote (FP8, kN = 128): after every stage (128 products)
/// the stage's chain, started from +0, is added to an fp32 accumulator with one RN add. Grid: persistent, 1-D, at
/// most one block per SM (the host launches min(tiles, SMs)); block b computes tiles b, b + gridDim.x, ... in the
/// visiting order, its ring running on across tiles, so the producer loads the next tile's first stages while the
/// consumers store the last one. Each tile is computed exactly as by a block of its own (from +0, k ascending).
/// Dynamic shared memory smem_bytes(kN).
template <Wg T, bool kTransB, int kN = kBN, bool kPromote = false>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m, int n, int k,
               float* __restrict__ c, long long ldc, int c_col_major, std::uint32_t lbo_b, std::uint32_t sbo_b) {
#if defined(FPCERT_WG_ON)
  constexpr int kS = stages(kN), kSB = stage_bytes(kN), kRegs = kN / 2;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t base = (smem_addr(smem_raw) + 1023u) & ~1023u;  // the swizzle atom's alignment
  const std::uint32_t full0 = base + kS * kSB, empty0 = full0 + 8 * kS;
  constexpr int kStageElems = kStageK / WgInfo<T>::kBytes;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  const int tiles = tile_count<kN>(m, n);
  const int ktiles = static_cast<int>((static_cast<long long>(k) + kStageElems - 1) / kStageElems);
  init_ring(full0, empty0, kS);
  __syncthreads();
  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      long long it0 = 0;
      for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x), it0 += ktiles) {
        int m0, n0;
        tile_origin<kN>(m, n, tile, m0, n0);
        produce<T, kTransB, kN, kS, kSB>(&map_a, &map_b, base, full0, empty0, m0, n0, ktiles, it0);
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, ct = tid - 128 * wg, lane = ct % 32, w = ct / 32;
  float d[kRegs];
  float acc[kPromote ? kRegs : 1];
  long long it0 = 0;
  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x), it0 += ktiles) {
    int m0, n0;
    tile_origin<kN>(m, n, tile, m0, n0);
#pragma unroll
    for (int i = 0; i < kRegs; ++i) d[i] = 0.0f;
    if constexpr (kPromote) {
#pragma unroll
      for (int i = 0; i < kRegs; ++i) acc[i] = 0.0f;
    }
    for (int kt = 0; kt < ktiles; ++kt) {
      const long long it = it0 + kt;
      const int s = static_cast<int>(it % kS);
      bar_wait(full0 + 8 * s, static_cast<std::uint32_t>((it / kS) & 1));
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      mma_stage<T, kTransB>(d, base + s * kSB + cw * 64 * kStageK, base + s * kSB + kATile, lbo_b, sbo_b);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      if constexpr (kPromote) {
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");  // this stage's chain is complete
        if (lane == 0) bar_arrive(empty0 + 8 * s);
#pragma unroll
        for (int i = 0; i < kRegs; ++i) {
          acc[i] = __fadd_rn(acc[i], d[i]);
          d[i] = 0.0f;
        }
      } else {
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");  // the previous stage's wgmmas are done
        if (kt > 0 && lane == 0) bar_arrive(empty0 + 8 * static_cast<int>((it - 1) % kS));
      }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if constexpr (!kPromote)  // the tile's last stage back to the producer (the next tile's loads may use it)
      if (ktiles > 0 && lane == 0) bar_arrive(empty0 + 8 * static_cast<int>((it0 + ktiles - 1) % kS));
    if constexpr (kPromote) store_tile<kN>(acc, m0, n0, cw, w, lane, m, n, c, ldc, c_col_major);
    else store_tile<kN>(d, m0, n0, cw, w, lane, m, n, c, ldc, c_col_major);
  }
#else
  (void)map_a, (void)map_b, (void)m, (void)n, (void)k, (void)c, (void)ldc, (void)c_col_major, (void)lbo_b, (void)sbo_b;
  __trap();  // compiled out: the host's support check (sm_90a code) never launches this
#endif
}

/// Operand staging (a misaligned pointer or leading dimension, a column-major A, B for the K-major path): dst,
/// rows x cols with leading dimension ld_dst, K-major, from src element (r, c) at src[r * rs + c * cs]. Tiles of
/// 32 x 32 through shared memory so that both sides are read and written along their contiguous dimension.
template <typename E>
__global__ void stage_kmajor(const E* __restrict__ src, long long rs, long long cs, int rows, int cols, E* __restrict__ dst,
                             long long ld_dst) {
  __shared__ E tile[32][33];
  const int r0 = static_cast<int>(blockIdx.y) * 32, c0 = static_cast<int>(blockIdx.x) * 32;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);  // 32 x 8
  const bool rows_contiguous = rs == 1 && cs != 1;  // src contiguous along r: read down the rows
  for (int i = ty; i < 32; i += 8) {
    if (rows_contiguous) {
      const int r = r0 + tx, cidx = c0 + i;
      tile[tx][i] = (r < rows && cidx < cols) ? src[r + cidx * cs] : E{};
    } else {
      const int r = r0 + i, cidx = c0 + tx;
      tile[i][tx] = (r < rows && cidx < cols) ? src[r * rs + cidx * cs] : E{};
    }
  }
  __syncthreads();
  for (int i = ty; i < 32; i += 8) {
    const int r = r0 + i, cidx = c0 + tx;
    if (r < rows && cidx < cols) dst[r * ld_dst + cidx] = tile[i][tx];  // the padding past cols is never read
  }
}

}  // namespace fpcert::wgmma_device
