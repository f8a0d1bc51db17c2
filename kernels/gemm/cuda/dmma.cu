// kernels/gemm/cuda/dmma.cu — gemm_f64_dmma_sm80: FP64 GEMM on DMMA tensor cores (docs/fp64.md), one warp per 8 x 8
// tile of C, mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 (PTX ISA, "Warp-level matrix multiply-accumulate
// instructions", m8n8k4 with .f64: sm_80 and later).
//
// The K-loop is declared: K zero-padded to a multiple of 4, steps k0 = 0, 4, 8, ... ascending, D = mma(A[:, k0..k0+3],
// B[k0..k0+3, :], C) with each step's D the next step's C, from C = +0. How one instruction combines its four
// products with C is not documented by NVIDIA; measured on the H200 (docs/fp64.md, "The DMMA kernel's order"), it is
// one FMA chain in k order with C first: C = fma(a_k, b_k, C) for k = k0 .. k0 + 3. The kernel declares that,
// `sequential:step=fma` over the whole K (the zero padding adds fma(0, 0, C) = C), so the bitwise tier holds every
// element to it; tests/kernels/gemm/f64_gpu_test.cpp probes the instruction on crafted rows that tell the models apart.
//
// Fragments (PTX ISA, m8n8k4 .f64): lane = 4 g + t (g = lane / 4, t = lane % 4). A (8 x 4, row): one double per lane,
// A[g][t]. B (4 x 8, col): one double per lane, B[t][g]. C, D (8 x 8): two doubles per lane, row g, columns 2 t and
// 2 t + 1. Elements beyond M, N or K load +0 and are never stored.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/device/cuda_check.cuh"
#include "kernels/kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr int kWarpsPerBlock = 4;  // 4 tiles of 8 x 8 side by side along N per block

__device__ __forceinline__ void dmma_m8n8k4(double& d0, double& d1, double a, double b, double c0, double c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};\n"
               : "=d"(d0), "=d"(d1)
               : "d"(a), "d"(b), "d"(c0), "d"(c1));
#else
  (void)a, (void)b;
  d0 = c0, d1 = c1;
  __trap();  // never launched below sm_80 (can_implement declines)
#endif
}

// Tiles in grid-stride loops along M: gridDim.y is at most 65,535.
__global__ void dmma_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda, bool a_col,
                          const double* b, std::int64_t ldb, bool b_col, double* c, std::int64_t ldc) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int g = lane >> 2, t = lane & 3;
  const std::int64_t col0 = (static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp) * 8;
  if (col0 >= n) return;  // a whole warp leaves together (mma.sync needs all 32 lanes)
  for (std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * 8; row0 < m; row0 += static_cast<std::int64_t>(gridDim.y) * 8) {
    double d0 = 0.0, d1 = 0.0;
    const std::int64_t ar = row0 + g, bc = col0 + g;
    for (std::int64_t k0 = 0; k0 < k; k0 += 4) {
      const std::int64_t kk = k0 + t;
      const double av = (ar < m && kk < k) ? a[a_col ? kk * lda + ar : ar * lda + kk] : 0.0;
      const double bv = (bc < n && kk < k) ? b[b_col ? bc * ldb + kk : kk * ldb + bc] : 0.0;
      dmma_m8n8k4(d0, d1, av, bv, d0, d1);
    }
    const std::int64_t cr = row0 + g, cc = col0 + 2 * t;
    if (cr < m && cc < n) c[cr * ldc + cc] = d0;
    if (cr < m && cc + 1 < n) c[cr * ldc + cc + 1] = d1;
  }
}

KernelTraits dmma_traits() {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f64;
  t.acc = &f64;
  t.out = &f64;
  t.exact_products = true;  // inside the FMA
  t.order = "K zero-padded to a multiple of 4; for k0 = 0, 4, ... ascending: D = mma.m8n8k4.f64(A[:, k0..k0+3], "
            "B[k0..k0+3, :], C), C = D, from C = +0; one DMMA is C = fma(a_k, b_k, C) for k = k0 .. k0 + 3 in order, C "
            "first (not documented by NVIDIA; measured on the H200: docs/fp64.md, \"The DMMA kernel's order\"): a "
            "sequential FMA chain in k order over the whole K";
  t.sum_order = SummationOrder::sequential(StepKind::Fma);
  t.tile_m = 8;
  t.tile_n = 8;
  t.determinism = Determinism::Deterministic;
  t.determinism_note = "one warp per tile, a fixed K-loop, no atomics: the same instructions in the same order every run";
  return t;
}

class DmmaF64 final : public GemmKernel {
 public:
  DmmaF64() : name_("gemm_f64_dmma_sm80"), traits_(dmma_traits()) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return "fp64 GEMM on DMMA tensor cores (mma.sync m8n8k4 f64), one warp per 8 x 8 tile, K in steps of 4";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    (void)m, (void)n, (void)k;
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      cudaGetLastError();
      return Support::no("no CUDA device");
    }
    if (major < 8) return Support::no("DMMA (mma.sync m8n8k4 f64) needs sm_80 or later");
    return Support::yes();
  }
  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const std::int64_t tiles_n = (ops.n + 8 * kWarpsPerBlock - 1) / (8 * kWarpsPerBlock);
    const std::int64_t tiles_m = std::min<std::int64_t>((ops.m + 7) / 8, 65535);
    if (tiles_n > 0x7FFFFFFF) throw NotSupportedError(name_ + ": N beyond the grid's x range");
    dmma_gemm<<<dim3(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m)), 32 * kWarpsPerBlock, 0, stream>>>(
        ops.m, ops.n, ops.k, static_cast<const double*>(ops.a), ops.lda, ops.a_layout == Layout::ColMajor,
        static_cast<const double*>(ops.b), ops.ldb, ops.b_layout == Layout::ColMajor, static_cast<double*>(ops.c), ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK("gemm_f64_dmma_sm80");
  }

 private:
  std::string name_;
  KernelTraits traits_;
};

std::unique_ptr<GemmKernel> make_dmma() { return std::make_unique<DmmaF64>(); }

}  // namespace

void register_dmma_f64_kernels() { register_kernel("gemm_f64_dmma_sm80", Backend::Cuda, false, &make_dmma); }

}  // namespace fpcert
