// kernels/gemm/cuda/pipeline.cu — the three-pipeline comparison: one tiled kernel (shared-memory tiles,
// same guards and launch shape) in three number formats, so rows of a table differ in the format
// and nothing else:
//   gemm_f32_tiled          fp32 in, fp32 FMA along K                  (= model_gemm_f32)
//   gemm_f16_f32acc_tiled   fp16 in, converted to fp32 in a register   (= model_gemm_f16_f32acc)
//   gemm_f16_f16acc_tiled   fp16 in, fp16 FMA along K (__hfma)          (= model_gemm_f16_f16acc)
// Each thread owns one C element and adds its products for k = 0, 1, ..., K-1 in that order with
// one rounded FMA each (__fmaf_rn / __hfma: never contracted or reassociated by the compiler), so
// the result equals its CPU model bit for bit.
#include <cuda_fp16.h>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr int kTile = 16;

template <class In>
__device__ __forceinline__ In load(const In* p, std::int64_t idx) {
  return p[idx];
}

struct F32Acc {
  using Acc = float;
  __device__ static float zero() { return 0.0f; }
  __device__ static float mac(float a, float b, float acc) { return __fmaf_rn(a, b, acc); }
  __device__ static float mac(__half a, __half b, float acc) { return __fmaf_rn(__half2float(a), __half2float(b), acc); }
};
struct F16Acc {
  using Acc = __half;
  __device__ static __half zero() { return __ushort_as_half(0); }
  __device__ static __half mac(__half a, __half b, __half acc) { return __hfma(a, b, acc); }
};

template <class Out>
__device__ __forceinline__ void store(Out* c, std::int64_t idx, float v) { c[idx] = v; }
__device__ __forceinline__ void store(__half* c, std::int64_t idx, __half v) { c[idx] = v; }

template <class In, class AccOps, class Out>
__global__ void tiled_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const In* a, std::int64_t lda, bool a_col,
                           const In* b, std::int64_t ldb, bool b_col, Out* c, std::int64_t ldc) {
  __shared__ In As[kTile][kTile];
  __shared__ In Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + tx;
  // Row tiles in a grid-stride loop: gridDim.y is at most 65,535, m / 16 may be more (the scale suite's 2^21 rows).
  // Every thread of a block runs the same tiles (the bound depends on blockIdx only), so the barriers stay uniform.
  const std::int64_t tiles_m = (m + kTile - 1) / kTile;
  for (std::int64_t tile = blockIdx.y; tile < tiles_m; tile += gridDim.y) {
    const std::int64_t row = tile * kTile + ty;
    typename AccOps::Acc acc = AccOps::zero();
    for (std::int64_t k0 = 0; k0 < k; k0 += kTile) {
      const std::int64_t ka = k0 + tx, kb = k0 + ty;
      // Out-of-range cells are never used below (kk < kmax), so their contents do not matter.
      if (row < m && ka < k) As[ty][tx] = load(a, a_col ? ka * lda + row : row * lda + ka);
      if (kb < k && col < n) Bs[ty][tx] = load(b, b_col ? col * ldb + kb : kb * ldb + col);
      __syncthreads();
      const int kmax = static_cast<int>(k - k0 < kTile ? k - k0 : kTile);
      for (int kk = 0; kk < kmax; ++kk) acc = AccOps::mac(As[ty][kk], Bs[kk][tx], acc);
      __syncthreads();
    }
    if (row < m && col < n) store(c, row * ldc + col, acc);
  }
}

template <class In, class AccOps, class Out>
class TiledKernel final : public GemmKernel {
 public:
  TiledKernel(std::string name, const char* model) : name_(std::move(name)), model_(model) {
    traits_ = make_cpu_model(model)->traits();
    traits_.order += " (one thread per element, k ascending; shared-memory tiles of 16)";
    // The model's arithmetic, not its calling interface: this kernel computes C = A B of one matrix, so it must not
    // inherit the model's D = alpha AB + beta C, strided batches or epilogue (the H100 main job of 2026-12-06 ran the
    // batch and alpha/beta cases on it because it did, and they failed).
    traits_.alpha_beta = false;
    traits_.batched = false;
    traits_.epilogue = {};
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return std::string("tiled SIMT GEMM, same order as ") + model_; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& ops) override {
    const dim3 block(kTile, kTile);
    const std::int64_t tiles_m = (ops.m + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>((ops.n + kTile - 1) / kTile), static_cast<unsigned>(tiles_m < 65535 ? tiles_m : 65535));
    if (ops.m == 0 || ops.n == 0) return;
    tiled_gemm<In, AccOps, Out><<<grid, block, 0, static_cast<cudaStream_t>(ops.stream)>>>(
        ops.m, ops.n, ops.k, static_cast<const In*>(ops.a), ops.lda, ops.a_layout == Layout::ColMajor,
        static_cast<const In*>(ops.b), ops.ldb, ops.b_layout == Layout::ColMajor, static_cast<Out*>(ops.c), ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  std::string name_;
  const char* model_;
  KernelTraits traits_;
};

std::unique_ptr<GemmKernel> make_f32() { return std::make_unique<TiledKernel<float, F32Acc, float>>("gemm_f32_tiled", "model_gemm_f32"); }
std::unique_ptr<GemmKernel> make_f16_f32acc() {
  return std::make_unique<TiledKernel<__half, F32Acc, float>>("gemm_f16_f32acc_tiled", "model_gemm_f16_f32acc");
}
std::unique_ptr<GemmKernel> make_f16_f16acc() {
  return std::make_unique<TiledKernel<__half, F16Acc, __half>>("gemm_f16_f16acc_tiled", "model_gemm_f16_f16acc");
}

}  // namespace

void register_pipeline_kernels() {
  register_kernel("gemm_f32_tiled", Backend::Cuda, false, &make_f32);
  register_kernel("gemm_f16_f32acc_tiled", Backend::Cuda, false, &make_f16_f32acc);
  register_kernel("gemm_f16_f16acc_tiled", Backend::Cuda, false, &make_f16_f16acc);
}

}  // namespace fpcert
