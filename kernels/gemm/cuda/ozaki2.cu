// kernels/gemm/cuda/ozaki2.cu — gemm_f64_ozaki2_int8: FP64 GEMM emulated by Ozaki-II on INT8 tensor cores (docs/fp64.md,
// "The built-in Ozaki-II emulation"). The arithmetic is kernels/gemm/cpu/ozaki2_arith.hpp, the functions the CPU model
// (kernels/gemm/cpu/ozaki2.cpp) calls: same scalings, same residues, exact integer GEMMs, the same exact CRT and the same
// one rounding, so the model is this kernel's bitwise emulation (tests/kernels/gemm/ozaki2_gpu_test.cpp holds it).
//
// Four launches on the caller's stream, workspace from cudaMallocAsync:
//   1. line_scales: s_i per row of A, t_j per column of B (one thread per line, the line's largest magnitude);
//   2. residues: the scaled integers' symmetric residues as INT8, A as [l][i][kpad], B as [l][j][kpad] (K zero-padded
//      to a multiple of 32);
//   3. residue_gemm: per modulus (grid z) one warp per 16 x 8 tile of C, mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
//      (PTX ISA, "Warp-level matrix multiply-accumulate", m16n8k32 with .s8: sm_80 and later), int32 accumulation over
//      K blocks of 131,040 (a multiple of 32 below 2^17 - 1: no overflow), each block's sums reduced mod m_l into the
//      running residue; the residues stored as bytes [l][i][j];
//   4. crt_round: per element Garner's CRT, the symmetric range, the scaling undone, RN to fp64.
// Fragments (m16n8k32 .s8; lane = 4 g + t): A 16 x 32 row: register 0 = A[g][4t..4t+3], 1 = A[g+8][4t..4t+3],
// 2 = A[g][16+4t..], 3 = A[g+8][16+4t..] (the lower index in the lower byte); B 32 x 8 col: register 0 = B[4t..4t+3][g],
// 1 = B[16+4t..16+4t+3][g]; C 16 x 8: c0, c1 = C[g][2t], C[g][2t+1]; c2, c3 = C[g+8][2t], C[g+8][2t+1].
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cuda/mma_host.cuh"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "kernels/kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

using ozaki2::Plan;

constexpr int kWarpsPerBlock = 4;                 // 4 tiles of 16 x 8 side by side along N per block
constexpr std::int64_t kDeviceKBlock = 131040;    // 4095 x 32 <= 2^17 - 1: a block's int32 sum cannot overflow
constexpr int kModuliDefault = 20;

__device__ __forceinline__ void mma_s8(int (&d)[4], const int (&a)[4], const int (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
  __trap();  // never launched below sm_80 (can_implement declines)
#endif
}

// One thread per line: the scaling exponent from the line's largest magnitude. Element q of line x at
// base[x * line_stride + q * elem_stride].
__global__ void line_scales(const double* base, std::int64_t lines, std::int64_t len, std::int64_t line_stride, std::int64_t elem_stride,
                            int alpha, int* s) {
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < lines;
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    double mx = 0;
    for (std::int64_t q = 0; q < len; ++q) mx = ozaki2::line_max(mx, base[x * line_stride + q * elem_stride]);
    s[x] = ozaki2::scale_exponent(mx, alpha);
  }
}

// One thread per (line, q < kpad): the N residues of rint(2^s v) (0 in the padding), out[(l lines + line) kpad + q].
__global__ void residues(const double* base, std::int64_t lines, std::int64_t len, std::int64_t line_stride, std::int64_t elem_stride,
                         const int* s, Plan pl, std::int64_t kpad, std::int8_t* out) {
  const std::int64_t total = lines * kpad;
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t line = x / kpad, q = x % kpad;
    const double v = q < len ? ozaki2::scaled_integer(base[line * line_stride + q * elem_stride], s[line]) : 0.0;
    for (int l = 0; l < pl.n; ++l) out[(l * lines + line) * kpad + q] = static_cast<std::int8_t>(ozaki2::symmetric_residue(v, pl.m[l]));
  }
}

__device__ __forceinline__ int load4(const std::int8_t* p, bool ok) { return ok ? *reinterpret_cast<const int*>(p) : 0; }

// Per modulus (blockIdx.z) the exact INT8 GEMM, its result mod m_l in [0, m_l) as bytes res[(l m + i) n + j].
__global__ void residue_gemm(Plan pl, std::int64_t m, std::int64_t n, std::int64_t kpad, const std::int8_t* ar, const std::int8_t* br,
                             std::uint8_t* res) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int g = lane >> 2, t = lane & 3, l = static_cast<int>(blockIdx.z), ml = pl.m[l];
  const std::int64_t col0 = (static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp) * 8;
  if (col0 >= n) return;  // a whole warp leaves together (mma.sync needs all 32 lanes)
  const std::int8_t* al = ar + l * m * kpad;
  const std::int8_t* bl = br + l * n * kpad;
  const std::int64_t bc = col0 + g;
  for (std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * 16; row0 < m; row0 += static_cast<std::int64_t>(gridDim.y) * 16) {
    const std::int64_t r0 = row0 + g, r1 = row0 + g + 8;
    int acc[4] = {0, 0, 0, 0};
    for (std::int64_t kb = 0; kb < kpad; kb += kDeviceKBlock) {
      const std::int64_t ke = kb + kDeviceKBlock < kpad ? kb + kDeviceKBlock : kpad;
      int d[4] = {0, 0, 0, 0};
      for (std::int64_t k0 = kb; k0 < ke; k0 += 32) {
        const int a[4] = {load4(al + r0 * kpad + k0 + 4 * t, r0 < m), load4(al + r1 * kpad + k0 + 4 * t, r1 < m),
                          load4(al + r0 * kpad + k0 + 16 + 4 * t, r0 < m), load4(al + r1 * kpad + k0 + 16 + 4 * t, r1 < m)};
        const int b[2] = {load4(bl + bc * kpad + k0 + 4 * t, bc < n), load4(bl + bc * kpad + k0 + 16 + 4 * t, bc < n)};
        mma_s8(d, a, b);
      }
      for (int e = 0; e < 4; ++e) acc[e] = ozaki2::mod_positive(static_cast<long long>(acc[e]) + d[e], ml);
    }
    const std::int64_t cc = col0 + 2 * t;
    std::uint8_t* rl = res + l * m * n;
    if (r0 < m && cc < n) rl[r0 * n + cc] = static_cast<std::uint8_t>(acc[0]);
    if (r0 < m && cc + 1 < n) rl[r0 * n + cc + 1] = static_cast<std::uint8_t>(acc[1]);
    if (r1 < m && cc < n) rl[r1 * n + cc] = static_cast<std::uint8_t>(acc[2]);
    if (r1 < m && cc + 1 < n) rl[r1 * n + cc + 1] = static_cast<std::uint8_t>(acc[3]);
  }
}

// One thread per element: CRT, the scaling undone, RN to fp64, into C (row-major, ldc).
__global__ void crt_round(Plan pl, std::int64_t m, std::int64_t n, const std::uint8_t* res, const int* s, const int* tt, double* c,
                            std::int64_t ldc) {
  for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; x < m * n;
       x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    int r[ozaki2::kMaxModuli];
    for (int l = 0; l < pl.n; ++l) r[l] = res[l * m * n + x];
    std::uint32_t mag[ozaki2::kLimbs];
    bool neg = false;
    ozaki2::reconstruct(pl, r, mag, neg);
    const std::int64_t i = x / n, j = x % n;
    c[i * ldc + j] = ozaki2::element(mag, neg, s[i], tt[j]);
  }
}

unsigned grid_for(std::int64_t work, int threads) {
  return static_cast<unsigned>(std::min<std::int64_t>((work + threads - 1) / threads, 1 << 16));
}

class Ozaki2Int8 final : public GemmKernel {
 public:
  explicit Ozaki2Int8(int n)
      : name_(n == kModuliDefault ? "gemm_f64_ozaki2_int8" : "gemm_f64_ozaki2_int8_n" + std::to_string(n)), traits_(ozaki2_traits(n)), plan_(ozaki2::make_plan(n)) {
    traits_.tile_m = 16;
    traits_.tile_n = 8;
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return "fp64 GEMM emulated by Ozaki-II on INT8 tensor cores (mma.sync m16n8k32 s8), " + std::to_string(plan_.n) +
           " moduli, exact CRT, one rounding; bitwise the CPU model model_gemm_f64_ozaki2";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    // The device's compute capability (sm_80+: INT8 mma.sync m16n8k32) and the kernel's image; the 128 x 128 grid limits
    // of mma_support are stricter than this kernel's (16 x 8 tiles, rows in a grid-stride loop): kept as they are.
    return cuda::mma_support(m, n, k, 80, residue_gemm);
  }
  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const std::int64_t m = ops.m, n = ops.n, k = ops.k, kpad = std::max<std::int64_t>(32, (k + 31) / 32 * 32);
    const int alpha = ozaki2::operand_bits(plan_, k);
    const auto* a = static_cast<const double*>(ops.a);
    const auto* b = static_cast<const double*>(ops.b);
    // Workspace: s, t, the residues of A and B, the residues of C.
    const std::size_t n_l = static_cast<std::size_t>(plan_.n);
    const std::size_t bytes_st = static_cast<std::size_t>(m + n) * sizeof(int);
    const std::size_t bytes_a = n_l * static_cast<std::size_t>(m * kpad), bytes_b = n_l * static_cast<std::size_t>(n * kpad);
    const std::size_t bytes_c = n_l * static_cast<std::size_t>(m * n);
    void* ws = nullptr;
    FPCERT_CUDA_CHECK(cudaMallocAsync(&ws, bytes_st + bytes_a + bytes_b + bytes_c + 64, stream));
    auto* s = static_cast<int*>(ws);
    int* t = s + m;
    auto* ar = reinterpret_cast<std::int8_t*>(static_cast<char*>(ws) + (bytes_st + 15) / 16 * 16);
    std::int8_t* br = ar + bytes_a;
    auto* res = reinterpret_cast<std::uint8_t*>(br + bytes_b);
    line_scales<<<grid_for(m, 128), 128, 0, stream>>>(a, m, k, ops.lda, 1, alpha, s);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 line_scales (A)");
    line_scales<<<grid_for(n, 128), 128, 0, stream>>>(b, n, k, 1, ops.ldb, alpha, t);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 line_scales (B)");
    residues<<<grid_for(m * kpad, 256), 256, 0, stream>>>(a, m, k, ops.lda, 1, s, plan_, kpad, ar);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 residues (A)");
    residues<<<grid_for(n * kpad, 256), 256, 0, stream>>>(b, n, k, 1, ops.ldb, t, plan_, kpad, br);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 residues (B)");
    const std::int64_t tiles_n = (n + 8 * kWarpsPerBlock - 1) / (8 * kWarpsPerBlock);
    const std::int64_t tiles_m = std::min<std::int64_t>((m + 15) / 16, 65535);
    residue_gemm<<<dim3(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m), static_cast<unsigned>(plan_.n)), 32 * kWarpsPerBlock,
                   0, stream>>>(plan_, m, n, kpad, ar, br, res);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 residue_gemm");
    crt_round<<<grid_for(m * n, 128), 128, 0, stream>>>(plan_, m, n, res, s, t, static_cast<double*>(ops.c), ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK("ozaki2 crt_round");
    FPCERT_CUDA_CHECK(cudaFreeAsync(ws, stream));
  }

 private:
  std::string name_;
  KernelTraits traits_;
  Plan plan_;
};

std::unique_ptr<GemmKernel> make_ozaki2_int8() { return std::make_unique<Ozaki2Int8>(kModuliDefault); }

}  // namespace

std::unique_ptr<GemmKernel> make_ozaki2_int8_kernel(int n) { return std::make_unique<Ozaki2Int8>(n); }

void register_ozaki2_cuda_kernels() { register_kernel("gemm_f64_ozaki2_int8", Backend::Cuda, false, &make_ozaki2_int8); }

}  // namespace fpcert
