// kernels/softmax/cuda/softmax_bwd_cuda.cu — CUDA softmax and log-softmax backward built-ins (docs/backward.md, "Softmax
// and log-softmax backward"), one warp per row (rows in a grid-stride loop):
//   softmax:      lane l sums fl(dy_j y_j) over j = l, l + 32, ... from +0, the __shfl_xor_sync butterfly adds the lanes
//                 (ReduceOrder::warp_tree(32); every lane ends with D), then dx_j = fl(s fl(y_j fl(dy_j - D)));
//   log-softmax:  G the same way over dy_j (masked entries, y_j = -Inf, left out), then
//                 dx_j = fl(s fl(dy_j - fl(expf(y_j) G))), CUDA's expf (2 ulp); a masked entry gives +0.
// Every operation is an explicitly rounded intrinsic (__fmul_rn, __fadd_rn, __fsub_rn: no contraction into FMA), so the
// declared arithmetic is the one run; s = 1 skips the product. Every fault of SoftmaxBwdBug is a runtime switch of the
// same kernel (with_bug), so a mutant is the kernel with its own arithmetic changed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

namespace fpcert {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;  // warps (rows in flight) per block

enum class Io : int { F32, F16, Bf16 };

__device__ float load(Io io, const void* p, std::int64_t i) {
  switch (io) {
    case Io::F16: return __half2float(static_cast<const __half*>(p)[i]);
    case Io::Bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}
__device__ void store(Io io, void* p, std::int64_t i, float v) {
  switch (io) {
    case Io::F16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case Io::Bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

struct Args {
  std::int64_t rows, cols;
  const void* y;
  std::int64_t ldy;
  const void* dy;
  std::int64_t lddy;
  float scale;
  void* dx;
  std::int64_t lddx;
  Io io;
  bool log;
  SoftmaxBwdBug bug;
};

/// One addition of D's (G's) sum: fp32, or rounded to fp16 (the DotF16 fault).
__device__ float dot_add(const Args& a, float acc, float t) {
  const float s = __fadd_rn(acc, t);
  return a.bug == SoftmaxBwdBug::DotF16 ? __half2float(__float2half_rn(s)) : s;
}

__global__ void softmax_bwd_warp(Args a) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarps;
  const float s = a.bug == SoftmaxBwdBug::ScaleMissing ? 1.0f : a.bug == SoftmaxBwdBug::ScaleTwice ? __fmul_rn(a.scale, a.scale) : a.scale;
  for (std::int64_t r = warp; r < a.rows; r += stride) {
    float d = 0.0f;
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float yj = load(a.io, a.y, r * a.ldy + j), dyj = load(a.io, a.dy, r * a.lddy + j);
      if (a.log && yj == -INFINITY) continue;
      d = dot_add(a, d, a.log ? dyj : __fmul_rn(dyj, yj));
    }
    for (int off = 16; off >= 1; off /= 2) d = dot_add(a, d, __shfl_xor_sync(kFull, d, off));
    if (a.bug == SoftmaxBwdBug::NoDotSubtract) d = 0.0f;
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float yj = load(a.io, a.y, r * a.ldy + j), dyj = load(a.io, a.dy, r * a.lddy + j);
      float v;
      if (!a.log) {
        v = __fmul_rn(yj, __fsub_rn(dyj, d));
      } else if (yj == -INFINITY) {
        v = 0.0f;  // masked: the logit's gradient is zero
      } else {
        const float e = a.bug == SoftmaxBwdBug::LogNoExp ? yj : expf(yj);
        v = __fsub_rn(dyj, __fmul_rn(e, d));
      }
      if (s != 1.0f) v = __fmul_rn(s, v);
      if (a.bug == SoftmaxBwdBug::Zeros) v = 0.0f;
      store(a.io, a.dx, r * a.lddx + j, v);
    }
  }
}

Io io_of(const Format& f) { return f == f16 ? Io::F16 : f == bf16 ? Io::Bf16 : Io::F32; }

struct Spec {
  std::string name;
  SoftmaxFn fn;
  const Format* io;
  std::string note;
};

class CudaSoftmaxBwd final : public SoftmaxBwdKernel {
 public:
  CudaSoftmaxBwd(Spec s, SoftmaxBwdBug bug) : s_(std::move(s)), bug_(bug) {
    t_.fn = s_.fn;
    t_.y_input = s_.io;
    t_.dy_input = s_.io;
    t_.compute = &f32;
    t_.dot_acc = &f32;
    t_.dot_order = ReduceOrder::warp_tree(32);
    t_.fma = false;
    t_.exp = exp_error_cuda_expf();
    t_.out = s_.io;
    t_.note = s_.note;
    name_ = bug_ == SoftmaxBwdBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_softmax_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != SoftmaxBwdBug::None; }
  const SoftmaxBwdTraits& softmax_bwd_traits() const override { return t_; }
  std::unique_ptr<SoftmaxBwdKernel> with_bug(SoftmaxBwdBug bug) const override {
    if (bug == SoftmaxBwdBug::LogNoExp && s_.fn != SoftmaxFn::LogSoftmax) return nullptr;
    return std::make_unique<CudaSoftmaxBwd>(s_, bug);
  }
  void run(const SoftmaxBwdOperands& o) override {
    if (o.rows == 0 || o.cols == 0) return;
    Args a{o.rows, o.cols, o.y, o.ldy, o.dy, o.lddy, o.scale, o.dx, o.lddx, io_of(*s_.io), s_.fn == SoftmaxFn::LogSoftmax, bug_};
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((o.rows + kWarps - 1) / kWarps, 1, 65535));
    softmax_bwd_warp<<<blocks, 32 * kWarps, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
  }

 private:
  Spec s_;
  SoftmaxBwdBug bug_;
  SoftmaxBwdTraits t_;
  std::string name_;
};

}  // namespace

void register_softmax_bwd_cuda_kernels() {
  const Spec specs[] = {
      {"softmax_bwd_f32_cuda", SoftmaxFn::Softmax, &f32, "one warp per row, D by a warp tree, y_j (dy_j - D) in fp32"},
      {"softmax_bwd_f16_cuda", SoftmaxFn::Softmax, &f16, "f16 y, dy and dx, one warp per row, fp32 arithmetic"},
      {"softmax_bwd_bf16_cuda", SoftmaxFn::Softmax, &bf16, "bf16 y, dy and dx, one warp per row, fp32 arithmetic"},
      {"log_softmax_bwd_f16_cuda", SoftmaxFn::LogSoftmax, &f16, "f16 log-softmax backward, one warp per row, dy_j - expf(y_j) G"},
      {"log_softmax_bwd_bf16_cuda", SoftmaxFn::LogSoftmax, &bf16, "bf16 log-softmax backward, one warp per row, dy_j - expf(y_j) G"},
  };
  for (const Spec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaSoftmaxBwd>(s, SoftmaxBwdBug::None); },
                    Operation::SoftmaxBackward);
}

}  // namespace fpcert
