// kernels/gemm/cuda/splitk_atomic.cu — gemm_f32_splitk4_atomic: a split-K GEMM whose partial sums meet in C through
// atomic additions, nondeterministic run to run by design (as split-K / stream-K kernels, cuBLAS's atomics mode and
// Triton split-K are). Its CPU model is model_gemm_f32_splitk4_atomic (kernels/gemm/cpu/nondet_models.cpp), with the
// same traits (atomic_splitk_traits): order splitk:splits=4,combine=atomic, determinism run_to_run.
//
// Two launches on the caller's stream: the first writes +0 into the m x n elements of C (the runner pre-fills C
// with NaN, and an atomic adds into what is there), the second runs one thread per (element, chunk): the chunk's
// partial by __fmaf_rn from +0, k ascending, then added into C. The chunks of one element sit in neighbouring
// blocks (blockIdx.x = column tile * S + chunk), which the device runs at the same time: the order their additions
// land in changes from run to run.
//
// The addition is a compare-and-swap loop around __fadd_rn, not atomicAdd: atomicAdd on fp32 (atom.add.f32) flushes
// subnormal inputs and results to zero (PTX ISA, atom: "atom.add.f32 rounds to nearest even and flushes subnormal
// inputs and results to sign-preserving zero"), which the declared arithmetic (fp32, nearest even, subnormals
// kept) does not do; the loop adds with one rounding to nearest even, subnormals kept, and is as atomic.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr int kTile = 16;
constexpr int kSplits = 4;

// Rows in grid-stride loops: gridDim.y is at most 65,535 tiles of 16 rows, m may be more (the scale suite's 2^21).
__global__ void zero_c(std::int64_t m, std::int64_t n, float* c, std::int64_t ldc) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + threadIdx.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kTile + threadIdx.y; row < m; row += static_cast<std::int64_t>(gridDim.y) * kTile)
    if (col < n) c[row * ldc + col] = 0.0f;
}

/// *p = RN_f32(*p + v), atomically: one rounding to nearest even, subnormals kept (see the file's comment).
__device__ void atomic_add_rn(float* p, float v) {
  unsigned int* word = reinterpret_cast<unsigned int*>(p);
  unsigned int seen = *word, assumed;
  do {
    assumed = seen;
    seen = atomicCAS(word, assumed, __float_as_uint(__fadd_rn(__uint_as_float(assumed), v)));
  } while (seen != assumed);
}

__global__ void splitk_partials(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t len, const float* a, std::int64_t lda,
                                bool a_col, const float* b, std::int64_t ldb, bool b_col, float* c, std::int64_t ldc) {
  const int split = static_cast<int>(blockIdx.x % kSplits);
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x / kSplits) * kTile + threadIdx.x;
  if (col >= n) return;
  const std::int64_t k0 = split * len < k ? split * len : k, k1 = k0 + len < k ? k0 + len : k;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kTile + threadIdx.y; row < m; row += static_cast<std::int64_t>(gridDim.y) * kTile) {
    float acc = 0.0f;
    for (std::int64_t kk = k0; kk < k1; ++kk)
      acc = __fmaf_rn(a[a_col ? kk * lda + row : row * lda + kk], b[b_col ? col * ldb + kk : kk * ldb + col], acc);
    atomic_add_rn(&c[row * ldc + col], acc);
  }
}

class SplitKAtomic final : public GemmKernel {
 public:
  SplitKAtomic() : name_("gemm_f32_splitk4_atomic"), traits_(atomic_splitk_traits(kSplits)) {
    traits_.order += " (one thread per element and chunk; the chunks' additions into C race: a compare-and-swap loop of __fadd_rn)";
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return "fp32 split-K in 4 chunks, partials added into C by atomics (nondeterministic run to run; model_gemm_f32_splitk4_atomic)";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    const dim3 block(kTile, kTile);
    const unsigned tiles_n = static_cast<unsigned>((ops.n + kTile - 1) / kTile), tiles_m = static_cast<unsigned>(std::min<std::int64_t>((ops.m + kTile - 1) / kTile, 65535));
    float* c = static_cast<float*>(ops.c);
    zero_c<<<dim3(tiles_n, tiles_m), block, 0, stream>>>(ops.m, ops.n, c, ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK("gemm_f32_splitk4_atomic: zero C");
    if (ops.k == 0) return;
    const std::int64_t len = (ops.k + kSplits - 1) / kSplits;
    splitk_partials<<<dim3(tiles_n * kSplits, tiles_m), block, 0, stream>>>(
        ops.m, ops.n, ops.k, len, static_cast<const float*>(ops.a), ops.lda, ops.a_layout == Layout::ColMajor,
        static_cast<const float*>(ops.b), ops.ldb, ops.b_layout == Layout::ColMajor, c, ops.ldc);
    FPCERT_CUDA_LAUNCH_CHECK("gemm_f32_splitk4_atomic: partials");
  }

 private:
  std::string name_;
  KernelTraits traits_;
};

std::unique_ptr<GemmKernel> make_splitk_atomic() { return std::make_unique<SplitKAtomic>(); }

}  // namespace

void register_splitk_atomic_kernels() { register_kernel("gemm_f32_splitk4_atomic", Backend::Cuda, false, &make_splitk_atomic); }

}  // namespace fpcert
