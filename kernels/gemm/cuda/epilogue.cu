// kernels/gemm/cuda/epilogue.cu — SIMT GEMMs with every fused epilogue fpcert grades (docs/epilogue.md, "CUDA subjects";
// issue 37), built on the tiled kernel of pipeline.cu (shared-memory tiles of 16, one thread per element, k ascending):
//   simt_f32_epilogue_cuda    f32 in, f32 FMA along K (= model_gemm_f32's accumulation), f32 out, bias f32
//   simt_bf16_epilogue_cuda   bf16 in, f32 FMA along K (= model_gemm_bf16_f32acc's), bf16 out (RN), bias bf16
// Every layout of A, B and C, strided batches (A or B broadcast with stride 0), and the epilogue of EpilogueTraits in
// fp32, each step one correctly rounded operation (__fmul_rn, __fadd_rn, __fdiv_rn: never contracted):
//   alpha' = RN(RN(alpha scale_a) scale_b)                   (host, fp32; alpha' = alpha without FP8 scaling)
//   z = RN(alpha' acc);  z = RN(z + RN(beta c)) if beta != 0 (C never read when beta = 0);  z = RN(z + bias) if a bias
//   y = act(z):  ReLU   z < 0 ? 0 : z                                                        (exact; NaN stays NaN)
//                GELU   RN(RN(0.5 z) RN(1 + erff(RN(z RN(1/sqrt 2)))))                        (erf form)
//                GELU   RN(RN(0.5 z) RN(1 + tanhf(RN(RN(sqrt(2/pi)) RN(z + RN(0.044715 RN(RN(z z) z)))))))  (tanh form)
//                SiLU   RN(z / RN(1 + expf(-z)))
//   amax = max |y| over every element and batch (before scale_d): atomicMax on the bits of |y| (IEEE bit patterns of
//          non-negative floats order as their values; a NaN's bits exceed Inf's, so a NaN reaches amax);
//   D = RN_out(RN(scale_d y)).
// erff, tanhf and expf are CUDA's (no fast-math build flag): 2 ulp each over the whole range (CUDA C++ Programming
// Guide, "Mathematical Functions", single precision), a relative error below 2 x 2^-23 = 2^-22: func_rel_err.
// bias_act_bf16_pass_cuda is the same epilogue as an unfused pass after a plain GEMM (the bench's comparison).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr int kTile = 16;

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store_rn(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_rn(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

/// The activation in fp32, each operation rounded once (the file's comment).
__device__ __forceinline__ float activate(float z, int act) {
  switch (static_cast<Activation>(act)) {
    case Activation::Relu: return z < 0.0f ? 0.0f : z;
    case Activation::GeluErf: return __fmul_rn(__fmul_rn(0.5f, z), __fadd_rn(1.0f, erff(__fmul_rn(z, 0.70710678118654752f))));
    case Activation::GeluTanh: {
      const float cube = __fmul_rn(__fmul_rn(z, z), z);
      const float inner = __fmul_rn(0.79788456080286536f, __fadd_rn(z, __fmul_rn(0.044715f, cube)));
      return __fmul_rn(__fmul_rn(0.5f, z), __fadd_rn(1.0f, tanhf(inner)));
    }
    case Activation::Silu: return __fdiv_rn(z, __fadd_rn(1.0f, expf(-z)));
    default: return z;
  }
}

template <class In, class Out>
struct EpiArgs {
  std::int64_t m, n, k;
  const In* a;
  std::int64_t lda;
  bool a_col;
  const In* b;
  std::int64_t ldb;
  bool b_col;
  Out* c;
  std::int64_t ldc;
  bool c_col;
  const Out* c_in;  // read only when beta != 0
  float alpha, beta, scale_d;
  std::int64_t batch, stride_a, stride_b, stride_c;
  const Out* bias;  // codes of the output format; null: none
  int bias_kind, act;
  unsigned int* amax;  // fp32 bits, zeroed before the launch; null: not asked
};

template <class In, class Out>
__global__ void epilogue_gemm(EpiArgs<In, Out> p) {
  __shared__ In As[kTile][kTile];
  __shared__ In Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + tx;
  const std::int64_t tiles_m = (p.m + kTile - 1) / kTile;
  unsigned int amax = 0;
  // Batches and row tiles in grid-stride loops (gridDim.z and gridDim.y are at most 65,535); the bounds depend on
  // blockIdx only, so every thread of a block runs the same iterations and the barriers stay uniform.
  for (std::int64_t bt = blockIdx.z; bt < p.batch; bt += gridDim.z) {
    const In* a = p.a + bt * p.stride_a;
    const In* b = p.b + bt * p.stride_b;
    for (std::int64_t tile = blockIdx.y; tile < tiles_m; tile += gridDim.y) {
      const std::int64_t row = tile * kTile + ty;
      float acc = 0.0f;
      for (std::int64_t k0 = 0; k0 < p.k; k0 += kTile) {
        const std::int64_t ka = k0 + tx, kb = k0 + ty;
        if (row < p.m && ka < p.k) As[ty][tx] = a[p.a_col ? ka * p.lda + row : row * p.lda + ka];
        if (kb < p.k && col < p.n) Bs[ty][tx] = b[p.b_col ? col * p.ldb + kb : kb * p.ldb + col];
        __syncthreads();
        const int kmax = static_cast<int>(p.k - k0 < kTile ? p.k - k0 : kTile);
        for (int kk = 0; kk < kmax; ++kk) acc = __fmaf_rn(to_f32(As[ty][kk]), to_f32(Bs[kk][tx]), acc);
        __syncthreads();
      }
      if (row < p.m && col < p.n) {
        const std::int64_t at = bt * p.stride_c + (p.c_col ? col * p.ldc + row : row * p.ldc + col);
        float z = __fmul_rn(p.alpha, acc);
        if (p.beta != 0.0f) z = __fadd_rn(z, __fmul_rn(p.beta, to_f32(p.c_in[at])));
        if (p.bias) z = __fadd_rn(z, to_f32(p.bias[p.bias_kind == static_cast<int>(BiasKind::PerRow) ? row : col]));
        const float y = activate(z, p.act);
        amax = max(amax, __float_as_uint(fabsf(y)));
        store_rn(p.c + at, __fmul_rn(p.scale_d, y));
      }
    }
  }
  if (p.amax) {
    amax = __reduce_max_sync(0xffffffffu, amax);  // blockDim.x = 16 x 16: whole warps
    if ((threadIdx.y * kTile + threadIdx.x) % 32 == 0) atomicMax(p.amax, amax);
  }
}

const char* kEpiFuncNote =
    "CUDA's erff, tanhf and expf: 2 ulp over the whole range (CUDA C++ Programming Guide, 'Mathematical Functions'), a "
    "relative error below 2^-22; no fast-math flag in the build";

template <class In, class Out>
class EpilogueTiled final : public GemmKernel {
 public:
  EpilogueTiled(std::string name, const char* model, const Format& out) : name_(std::move(name)), model_(model) {
    traits_ = make_cpu_model(model)->traits();
    traits_.out = &out;
    traits_.order += " (one thread per element, k ascending; shared-memory tiles of 16); then the epilogue in fp32, one "
                     "rounding per operation: RN(alpha' acc), + RN(beta c), + bias, the activation, RN(scale_d y), the "
                     "output rounding (kernels/gemm/cuda/epilogue.cu)";
    traits_.layouts = kLayoutsAll;
    traits_.alpha_beta = true;  // D = RN_out(RN(RN(alpha acc) + RN(beta c))): KernelTraits::alpha_beta's declared form
    traits_.batched = true;
    EpilogueTraits& e = traits_.epilogue;
    e.bias = static_cast<std::uint8_t>(bit(BiasKind::PerRow) | bit(BiasKind::PerColumn));
    e.bias_format = nullptr;  // the output format
    e.activations = static_cast<std::uint8_t>(bit(Activation::Relu) | bit(Activation::GeluErf) | bit(Activation::GeluTanh) |
                                              bit(Activation::Silu));
    e.func_rel_err = std::ldexp(1.0, -22);
    e.func_note = kEpiFuncNote;
    e.fp8_scaling = true;
    e.amax = true;
  }
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return std::string("tiled SIMT GEMM, same accumulation as ") + model_ +
           ", every layout, strided batches, fused epilogue (bias per row or column, ReLU, GELU erf and tanh forms, SiLU, "
           "FP8 scale factors, amax)";
  }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const KernelTraits& traits() const override { return traits_; }

  void run(const GemmOperands& ops) override {
    if (ops.m == 0 || ops.n == 0) return;
    const auto stream = static_cast<cudaStream_t>(ops.stream);
    EpiArgs<In, Out> p{};
    p.m = ops.m, p.n = ops.n, p.k = ops.k;
    p.a = static_cast<const In*>(ops.a), p.lda = ops.lda, p.a_col = ops.a_layout == Layout::ColMajor;
    p.b = static_cast<const In*>(ops.b), p.ldb = ops.ldb, p.b_col = ops.b_layout == Layout::ColMajor;
    p.c = static_cast<Out*>(ops.c), p.ldc = ops.ldc, p.c_col = ops.c_layout == Layout::ColMajor;
    p.c_in = static_cast<const Out*>(ops.c_in);
    // alpha' = RN(RN(alpha scale_a) scale_b) in fp32 (host float arithmetic is IEEE binary32, round to nearest).
    const float alpha = static_cast<float>(ops.alpha) * static_cast<float>(ops.scale_a);
    p.alpha = alpha * static_cast<float>(ops.scale_b);
    p.beta = static_cast<float>(ops.beta);
    if (p.beta != 0.0f && !p.c_in) throw std::invalid_argument(name_ + ": beta != 0 without C");
    p.scale_d = static_cast<float>(ops.scale_d);
    p.batch = std::max<std::int64_t>(1, ops.batch), p.stride_a = ops.stride_a, p.stride_b = ops.stride_b, p.stride_c = ops.stride_c;
    p.bias = ops.bias_kind == BiasKind::None ? nullptr : static_cast<const Out*>(ops.bias);
    if (ops.bias_kind != BiasKind::None && !p.bias) throw std::invalid_argument(name_ + ": a bias kind without a bias vector");
    p.bias_kind = static_cast<int>(ops.bias_kind);
    p.act = static_cast<int>(ops.activation);
    p.amax = static_cast<unsigned int*>(ops.amax);
    if (p.amax) FPCERT_CUDA_CHECK(cudaMemsetAsync(p.amax, 0, sizeof(float), stream));  // +0: atomicMax's start
    const std::int64_t tiles_m = (ops.m + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>((ops.n + kTile - 1) / kTile), static_cast<unsigned>(std::min<std::int64_t>(tiles_m, 65535)),
                    static_cast<unsigned>(std::min<std::int64_t>(p.batch, 65535)));
    epilogue_gemm<In, Out><<<grid, dim3(kTile, kTile), 0, stream>>>(p);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  std::string name_;
  const char* model_;
  KernelTraits traits_;
};

std::unique_ptr<GemmKernel> make_simt_f32_epilogue() {
  return std::make_unique<EpilogueTiled<float, float>>("simt_f32_epilogue_cuda", "model_gemm_f32", f32);
}
std::unique_ptr<GemmKernel> make_simt_bf16_epilogue() {
  return std::make_unique<EpilogueTiled<__nv_bfloat16, __nv_bfloat16>>("simt_bf16_epilogue_cuda", "model_gemm_bf16_f32acc", bf16);
}

__global__ void bias_act_pass(__nv_bfloat16* d, std::int64_t m, std::int64_t n, std::int64_t ldd, const __nv_bfloat16* bias, int act) {
  for (std::int64_t i = blockIdx.y; i < m; i += gridDim.y)
    for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      float z = __bfloat162float(d[i * ldd + j]);
      if (bias) z = __fadd_rn(z, __bfloat162float(bias[j]));
      d[i * ldd + j] = __float2bfloat16_rn(activate(z, act));
    }
}

}  // namespace

void bias_act_bf16_pass_cuda(void* d, std::int64_t m, std::int64_t n, std::int64_t ldd, const void* bias, Activation act, void* stream) {
  if (m == 0 || n == 0) return;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 1024)), static_cast<unsigned>(std::min<std::int64_t>(m, 65535)));
  bias_act_pass<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<__nv_bfloat16*>(d), m, n, ldd,
                                                                      static_cast<const __nv_bfloat16*>(bias), static_cast<int>(act));
  FPCERT_CUDA_LAUNCH_CHECK("bias_act_pass");
}

void register_epilogue_cuda_kernels() {
  register_kernel("simt_f32_epilogue_cuda", Backend::Cuda, false, &make_simt_f32_epilogue);
  register_kernel("simt_bf16_epilogue_cuda", Backend::Cuda, false, &make_simt_bf16_epilogue);
}

}  // namespace fpcert
