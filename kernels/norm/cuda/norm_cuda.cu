// kernels/norm/cuda/norm_cuda.cu — CUDA LayerNorm / RMSNorm built-ins (docs/normalization.md, "Kernels"), one warp per
// row, f32 arithmetic with explicit IEEE intrinsics (__fadd_rn, __fmul_rn, __fdiv_rn: no contraction):
//  - layernorm_*_warp_cuda: two passes over the row in global memory: lane l sums x_j for j = l, l + 32, ... from +0,
//    a __shfl_xor_sync butterfly adds the lanes (an order the bound covers: any order), mean = sum / n; the same for
//    (x_j - mean)^2, var = sum / n; r = rsqrtf(var + eps) (2 ulp: CUDA C Programming Guide, Mathematical Functions);
//    y_j = ((x_j - mean) r) g_j + b_j;
//  - layernorm_*_welford_cuda: one pass: lane l runs Welford over x_j, j = l, l + 32, ..., a __shfl_xor_sync butterfly
//    combines the lanes' (count, mean, M2) pairwise (Chan, Golub and LeVeque), var = M2 / n; the rest as above;
//  - rmsnorm_*_warp_cuda: the mean of squares the same way, mean 0.
// Every fault of NormBug is a runtime switch of the same kernels (with_bug), so a mutant is the kernel with its own
// arithmetic changed, not a model of it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/device/row_io.cuh"
#include "kernels/norm/norm_kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;  // warps (rows in flight) per block

using row_io::Io;
using row_io::io_of;
using row_io::load_x;
using row_io::store_y;


struct Args {
  std::int64_t rows, cols;
  const void* x;
  std::int64_t ldx;
  const void* gamma;
  const void* beta;
  float eps;
  void* out;
  std::int64_t ldo;
  Io io;
  bool rms;
  bool welford;  // Welford per lane, lanes combined pairwise (layernorm_*_welford_cuda)
  NormBug bug;
};

__device__ float add(const Args& a, float s, float e) {
  const float t = __fadd_rn(s, e);
  return a.bug == NormBug::F16RowSum ? __half2float(__float2half_rn(t)) : t;
}
__device__ float warp_sum(const Args& a, float s) {
  for (int o = 16; o > 0; o /= 2) s = add(a, s, __shfl_xor_sync(kFull, s, o));
  return s;
}

// Welford's (count, mean, M2) of one lane's entries and Chan, Golub and LeVeque's combination of two lanes' (the CPU
// model model_layernorm_f32_welford_w32 runs the same operations: kernels/norm/cpu/norm_models.cpp). The count is exact.
struct Part {
  float n, m, q;
};
__device__ void welford_step(const Args& a, Part& p, float x) {
  p.n = __fadd_rn(p.n, 1.0f);
  const float d1 = __fsub_rn(x, p.m);
  p.m = add(a, p.m, __fdiv_rn(d1, p.n));
  p.q = add(a, p.q, __fmul_rn(d1, __fsub_rn(x, p.m)));
}
__device__ Part combine(const Args& a, const Part& x, const Part& y) {
  if (y.n == 0.0f) return x;
  if (x.n == 0.0f) return y;
  const float n = __fadd_rn(x.n, y.n), d = __fsub_rn(y.m, x.m), w = __fdiv_rn(y.n, n);
  return {n, add(a, x.m, __fmul_rn(d, w)), add(a, add(a, x.q, y.q), __fmul_rn(__fmul_rn(d, d), __fmul_rn(x.n, w)))};
}
// The butterfly: at offset o both lanes of a pair combine (lower lane, upper lane), in that order, so every lane ends with
// the same bits (those of lane 0 of a tree reduction: the CPU model's order).
__device__ Part warp_welford(const Args& a, Part p, int lane) {
  for (int o = 16; o > 0; o /= 2) {
    const Part q{__shfl_xor_sync(kFull, p.n, o), __shfl_xor_sync(kFull, p.m, o), __shfl_xor_sync(kFull, p.q, o)};
    p = (lane & o) ? combine(a, q, p) : combine(a, p, q);
  }
  return p;
}

__global__ void warp_norm(Args a) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  const float nf = static_cast<float>(a.cols);
  const float div = a.bug == NormBug::Bessel && a.cols > 1 ? nf - 1 : nf;
  const bool rms = a.rms || a.bug == NormBug::NoMeanSubtract;
  for (std::int64_t r = warp; r < a.rows; r += warps) {
    const std::int64_t at = r * a.ldx;
    float mean = 0, var = 0;
    if (rms) {
      float q = 0;
      for (std::int64_t j = lane; j < a.cols; j += 32) {
        const float x = load_x(a.io, a.x, at + j);
        q = add(a, q, __fmul_rn(x, x));
      }
      var = __fdiv_rn(warp_sum(a, q), div);
    } else if (a.bug == NormBug::OnePassVariance) {
      float s = 0, q = 0;
      for (std::int64_t j = lane; j < a.cols; j += 32) {
        const float x = load_x(a.io, a.x, at + j);
        s = add(a, s, x);
        q = add(a, q, __fmul_rn(x, x));
      }
      mean = __fdiv_rn(warp_sum(a, s), nf);
      var = __fsub_rn(__fdiv_rn(warp_sum(a, q), nf), __fmul_rn(mean, mean));
    } else if (a.welford) {
      Part p{0.0f, 0.0f, 0.0f};
      for (std::int64_t j = lane; j < a.cols; j += 32) welford_step(a, p, load_x(a.io, a.x, at + j));
      p = warp_welford(a, p, lane);
      mean = p.m;
      var = __fdiv_rn(p.q, div);
    } else {
      float s = 0;
      for (std::int64_t j = lane; j < a.cols; j += 32) s = add(a, s, load_x(a.io, a.x, at + j));
      mean = __fdiv_rn(warp_sum(a, s), nf);
      float q = 0;
      for (std::int64_t j = lane; j < a.cols; j += 32) {
        const float c = __fsub_rn(load_x(a.io, a.x, at + j), mean);
        q = add(a, q, __fmul_rn(c, c));
      }
      var = __fdiv_rn(warp_sum(a, q), div);
    }
    const float rs = a.bug == NormBug::EpsOutsideSqrt ? __frcp_rn(__fadd_rn(__fsqrt_rn(var), a.eps)) : rsqrtf(__fadd_rn(var, a.eps));
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float g = a.gamma ? load_x(a.io, a.gamma, j) : 1.0f, b = a.beta ? load_x(a.io, a.beta, j) : 0.0f;
      float y = __fmul_rn(__fsub_rn(load_x(a.io, a.x, at + j), mean), rs);
      if (a.bug == NormBug::AffineSwapped) y = __fadd_rn(__fmul_rn(y, b), g);
      else if (a.bug != NormBug::AffineIgnored) {
        if (a.gamma) y = __fmul_rn(y, g);
        if (a.beta) y = __fadd_rn(y, b);
      }
      store_y(a.io, a.out, r * a.ldo + j, a.bug == NormBug::Zeros ? 0.0f : y);
    }
  }
}

struct Spec {
  std::string name;
  NormKind kind;
  NormVariance variance;
  const Format* io;
  std::string note;
};

class CudaNorm final : public NormKernel {
 public:
  CudaNorm(Spec s, NormBug bug) : s_(std::move(s)), bug_(bug) {
    NormArith& a = t_.arith;
    a.kind = s_.kind;
    a.variance = s_.variance;
    a.welford = {WelfordShape{32, 1}};  // WelfordCombined: a warp's lanes, entries j = l, l + 32, ...
    a.compute = &f32;
    a.acc = &f32;
    a.rsqrt_ulps = 2;
    a.rsqrt_source = "CUDA rsqrtf: 2 ulp (CUDA C Programming Guide, Mathematical Functions, single precision)";
    a.out = s_.io;
    t_.x_input = s_.io;
    t_.note = s_.note;
    name_ = bug_ == NormBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_norm_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != NormBug::None; }
  const NormTraits& norm_traits() const override { return t_; }
  std::unique_ptr<NormKernel> with_bug(NormBug bug) const override { return std::make_unique<CudaNorm>(s_, bug); }
  void run(const NormOperands& o) override {
    if (o.rows == 0 || o.cols == 0) return;
    Args a{o.rows, o.cols, o.x, o.ldx, o.gamma, o.beta, o.eps, o.out, o.ldo, io_of(*s_.io), s_.kind == NormKind::RmsNorm,
           s_.variance == NormVariance::WelfordCombined, bug_};
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((o.rows + kWarps - 1) / kWarps, 1, 65535));
    warp_norm<<<blocks, 32 * kWarps, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
  }

 private:
  Spec s_;
  NormBug bug_;
  NormTraits t_;
  std::string name_;
};

}  // namespace

void register_norm_cuda_kernels() {
  const Spec specs[] = {
      {"layernorm_f32_warp_cuda", NormKind::LayerNorm, NormVariance::TwoPass, &f32, "one warp per row, two-pass LayerNorm, rsqrtf"},
      {"layernorm_f16_warp_cuda", NormKind::LayerNorm, NormVariance::TwoPass, &f16, "f16 rows, one warp per row, two-pass, f32 arithmetic"},
      {"layernorm_bf16_warp_cuda", NormKind::LayerNorm, NormVariance::TwoPass, &bf16, "bf16 rows, one warp per row, two-pass, f32 arithmetic"},
      {"layernorm_f32_welford_cuda", NormKind::LayerNorm, NormVariance::WelfordCombined, &f32,
       "one warp per row, Welford per lane, lanes combined by a butterfly (Chan, Golub and LeVeque), rsqrtf"},
      {"layernorm_f16_welford_cuda", NormKind::LayerNorm, NormVariance::WelfordCombined, &f16,
       "f16 rows, one warp per row, Welford per lane combined by a butterfly, f32 arithmetic"},
      {"layernorm_bf16_welford_cuda", NormKind::LayerNorm, NormVariance::WelfordCombined, &bf16,
       "bf16 rows, one warp per row, Welford per lane combined by a butterfly, f32 arithmetic"},
      {"rmsnorm_f32_warp_cuda", NormKind::RmsNorm, NormVariance::TwoPass, &f32, "one warp per row, RMSNorm, rsqrtf"},
      {"rmsnorm_f16_warp_cuda", NormKind::RmsNorm, NormVariance::TwoPass, &f16, "f16 rows, one warp per row, RMSNorm, f32 arithmetic"},
      {"rmsnorm_bf16_warp_cuda", NormKind::RmsNorm, NormVariance::TwoPass, &bf16, "bf16 rows, one warp per row, RMSNorm, f32 arithmetic"},
  };
  for (const Spec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaNorm>(s, NormBug::None); }, Operation::Norm);
}

}  // namespace fpcert
