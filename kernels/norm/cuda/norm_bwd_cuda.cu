// kernels/norm/cuda/norm_bwd_cuda.cu — CUDA LayerNorm / RMSNorm backward built-ins (docs/backward.md, "LayerNorm and
// RMSNorm backward", "Kernels"), f32 arithmetic with explicit IEEE intrinsics (__fadd_rn, __fmul_rn: no contraction):
//  - dx: one warp per row; lane l takes j = l, l + 32, ...: xh_j = (x_j - mean) rstd, g_j = dy_j gamma_j, the lane sums of
//    g and g xh from +0, a __shfl_xor_sync butterfly (any order: the bound's), a = A (1/n), b = B (1/n), dx_j = rstd ((g_j -
//    a) - xh_j b) rounded into the input format;
//  - dgamma / dbeta: column sums over the rows. Stage 1: block c sums rows [32c, 32c + 32) of each column j sequentially
//    from +0 (one thread per column). layernorm_bwd_*_cuda: each partial added atomically (a compare-and-swap loop of
//    __fadd_rn: atom.add.f32 would flush subnormals) into dgamma/dbeta (cleared first):
//    the order of the atomics changes from run to run (declared run_to_run, f32 atomics); *_det_cuda and
//    rmsnorm_bwd_bf16_cuda: the partials into a workspace, stage 2 adds them per column in chunk order (deterministic).
// Every fault of NormBwdBug is a runtime switch of the same kernels (with_bug); DGammaF16 rounds every column addition
// (atomics included) to fp16.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/device/cuda_check.cuh"
#include "kernels/device/row_io.cuh"
#include "kernels/norm/norm_backward_kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;         // rows in flight per block of the dx kernel
constexpr int kChunk = 32;        // rows per stage-1 partial of the column sums
constexpr int kColThreads = 128;  // columns per block of the column kernels

using row_io::Io;
using row_io::io_of;

struct Args {
  std::int64_t rows, cols;
  const void* x;
  std::int64_t ldx;
  const void* dy;
  std::int64_t lddy;
  const void* gamma;
  const float* mean;
  const float* rstd;
  void* dx;
  std::int64_t lddx;
  float* dgamma;
  float* dbeta;
  float* work;  // det: 2 x chunks x cols partials
  Io io;
  bool rms;
  NormBwdBug bug;
};

__device__ float rstd_of(const Args& a, std::int64_t r) {
  const float s = a.rstd[r];
  return a.bug == NormBwdBug::RstdSquared ? __fmul_rn(s, s) : s;
}
__device__ float xhat(const Args& a, std::int64_t r, std::int64_t j) {
  const float x = row_io::load_x(a.io, a.x, r * a.ldx + j);
  return __fmul_rn(a.rms ? x : __fsub_rn(x, a.mean[r]), rstd_of(a, r));
}
__device__ float gamma_of(const Args& a, std::int64_t j) {
  return a.gamma && a.bug != NormBwdBug::GammaIgnored ? row_io::load_x(a.io, a.gamma, j) : 1.0f;
}
__device__ float param_add(const Args& a, float s, float e) {
  const float t = __fadd_rn(s, e);
  return a.bug == NormBwdBug::DGammaF16 ? __half2float(__float2half_rn(t)) : t;
}
/// p = RN(p + v) atomically by a compare-and-swap loop: atomicAdd's atom.add.f32 flushes subnormal inputs and results to
/// zero (PTX ISA, atom), which the declared f32 atomics do not (measured on the H200: the tiny_dy case failed with it).
__device__ void param_atomic(const Args& a, float* p, float v) {
  auto* w = reinterpret_cast<unsigned int*>(p);
  unsigned int old = *w, seen;
  do {
    seen = old;
    old = atomicCAS(w, seen, __float_as_uint(param_add(a, __uint_as_float(seen), v)));
  } while (old != seen);
}

__global__ void dx_kernel(Args a) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warp = blockIdx.x * kWarps + static_cast<std::int64_t>(threadIdx.x) / 32;
  const float inv_n = __fdiv_rn(1.0f, static_cast<float>(a.cols));
  for (std::int64_t r = warp; r < a.rows; r += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    float sa = 0.0f, sb = 0.0f;
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float g = __fmul_rn(row_io::load_x(a.io, a.dy, r * a.lddy + j), gamma_of(a, j));
      sa = __fadd_rn(sa, g);
      sb = __fadd_rn(sb, __fmul_rn(g, xhat(a, r, j)));
    }
    for (int o = 16; o > 0; o /= 2) {
      sa = __fadd_rn(sa, __shfl_xor_sync(kFull, sa, o));
      sb = __fadd_rn(sb, __shfl_xor_sync(kFull, sb, o));
    }
    const float ma = a.rms || a.bug == NormBwdBug::NoMeanTerm ? 0.0f : __fmul_rn(sa, inv_n);
    const float mb = a.bug == NormBwdBug::NoProjTerm ? 0.0f : __fmul_rn(sb, inv_n);
    const float rs = rstd_of(a, r);
    for (std::int64_t j = lane; j < a.cols; j += 32) {
      const float g = __fmul_rn(row_io::load_x(a.io, a.dy, r * a.lddy + j), gamma_of(a, j));
      const float d = __fmul_rn(rs, __fsub_rn(__fsub_rn(g, ma), __fmul_rn(xhat(a, r, j), mb)));
      row_io::store_y(a.io, a.dx, r * a.lddx + j, a.bug == NormBwdBug::Zeros ? 0.0f : d);
    }
  }
}

// Stage 1: block (bx, c) sums rows [32c, 32c + 32) of columns bx * 128 + t sequentially from +0.
__global__ void column_partials(Args a, bool atomics) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kColThreads + threadIdx.x;
  const std::int64_t c = blockIdx.y, chunks = gridDim.y;
  if (j >= a.cols) return;
  float sg = 0.0f, sb = 0.0f;
  const std::int64_t end = (c + 1) * kChunk < a.rows ? (c + 1) * kChunk : a.rows;
  for (std::int64_t r = c * kChunk; r < end; ++r) {
    const float dy = row_io::load_x(a.io, a.dy, r * a.lddy + j);
    sg = param_add(a, sg, a.bug == NormBwdBug::DGammaNoXhat ? dy : __fmul_rn(dy, xhat(a, r, j)));
    sb = param_add(a, sb, dy);
  }
  if (a.bug == NormBwdBug::Zeros) sg = sb = 0.0f;
  if (atomics) {
    if (a.dgamma) param_atomic(a, a.dgamma + j, sg);
    if (a.dbeta) param_atomic(a, a.dbeta + j, sb);
    return;
  }
  a.work[c * a.cols + j] = sg;
  a.work[(chunks + c) * a.cols + j] = sb;
}

// Stage 2 (deterministic): column j's partials added in chunk order, from the first.
__global__ void column_finish(Args a, std::int64_t chunks) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kColThreads + threadIdx.x;
  if (j >= a.cols) return;
  float sg = a.work[j], sb = a.work[chunks * a.cols + j];
  for (std::int64_t c = 1; c < chunks; ++c) {
    sg = param_add(a, sg, a.work[c * a.cols + j]);
    sb = param_add(a, sb, a.work[(chunks + c) * a.cols + j]);
  }
  if (a.dgamma) a.dgamma[j] = sg;
  if (a.dbeta) a.dbeta[j] = sb;
}

struct Spec {
  std::string name;
  NormKind kind;
  const Format* io;
  bool atomics;
  std::string note;
};

class CudaNormBwd final : public NormBwdKernel {
 public:
  CudaNormBwd(Spec s, NormBwdBug bug) : s_(std::move(s)), bug_(bug) {
    t_.kind = s_.kind;
    t_.input = s_.io;
    t_.compute = &f32;
    t_.acc = &f32;
    t_.dx_out = s_.io;
    t_.param_acc = &f32;
    t_.param_order = s_.atomics ? ReduceOrder::unknown() : ReduceOrder::blocked(kChunk, ChainStart::Zero);
    t_.param_determinism = s_.atomics ? Determinism::RunToRun : Determinism::Deterministic;
    t_.param_out = &f32;
    t_.note = s_.note;
    name_ = bug_ == NormBwdBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_norm_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  bool is_mutant() const override { return bug_ != NormBwdBug::None; }
  const NormBwdTraits& norm_bwd_traits() const override { return t_; }
  std::unique_ptr<NormBwdKernel> with_bug(NormBwdBug bug) const override { return std::make_unique<CudaNormBwd>(s_, bug); }
  Support can_implement(std::int64_t rows, std::int64_t cols) const override {
    (void)cols;
    if (rows > 65535LL * kChunk) return Support::no("more than 65535 x 32 rows (the column kernels' grid)");
    return Support::yes();
  }
  void run(const NormBwdOperands& o) override {
    if (o.rows == 0 || o.cols == 0) return;
    const bool rms = s_.kind == NormKind::RmsNorm;
    Args a{o.rows, o.cols, o.x, o.ldx, o.dy, o.lddy, o.gamma, static_cast<const float*>(o.mean), static_cast<const float*>(o.rstd), o.dx,
           o.lddx, static_cast<float*>(o.dgamma), rms ? nullptr : static_cast<float*>(o.dbeta), nullptr, io_of(*s_.io), rms, bug_};
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((o.rows + kWarps - 1) / kWarps, 1, 65535));
    dx_kernel<<<blocks, 32 * kWarps, 0, stream>>>(a);
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
    if (!a.dgamma && !a.dbeta) return;
    const std::int64_t chunks = (o.rows + kChunk - 1) / kChunk;
    const dim3 grid(static_cast<unsigned>((o.cols + kColThreads - 1) / kColThreads), static_cast<unsigned>(chunks));
    const auto bytes = static_cast<std::size_t>(o.cols) * sizeof(float);
    if (s_.atomics) {  // cleared first (the contract), then every chunk's partial added atomically
      if (a.dgamma) FPCERT_CUDA_CHECK(cudaMemsetAsync(a.dgamma, 0, bytes, stream));
      if (a.dbeta) FPCERT_CUDA_CHECK(cudaMemsetAsync(a.dbeta, 0, bytes, stream));
      column_partials<<<grid, kColThreads, 0, stream>>>(a, true);
      FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
      return;
    }
    void* work = nullptr;
    FPCERT_CUDA_CHECK(cudaMallocAsync(&work, 2 * static_cast<std::size_t>(chunks) * bytes, stream));
    a.work = static_cast<float*>(work);
    column_partials<<<grid, kColThreads, 0, stream>>>(a, false);
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
    column_finish<<<grid.x, kColThreads, 0, stream>>>(a, chunks);
    FPCERT_CUDA_LAUNCH_CHECK(s_.name.c_str());
    FPCERT_CUDA_CHECK(cudaFreeAsync(work, stream));
  }

 private:
  Spec s_;
  NormBwdBug bug_;
  NormBwdTraits t_;
  std::string name_;
};

}  // namespace

void register_norm_bwd_cuda_kernels() {
  const Spec specs[] = {
      {"layernorm_bwd_f16_cuda", NormKind::LayerNorm, &f16, true,
       "f16 LayerNorm backward: a warp per row for dx; dgamma/dbeta by 32-row partials added with f32 atomics (run to run)"},
      {"layernorm_bwd_bf16_cuda", NormKind::LayerNorm, &bf16, true,
       "bf16 LayerNorm backward: a warp per row for dx; dgamma/dbeta by 32-row partials added with f32 atomics (run to run)"},
      {"layernorm_bwd_f16_det_cuda", NormKind::LayerNorm, &f16, false,
       "f16 LayerNorm backward: a warp per row for dx; dgamma/dbeta by 32-row partials, then a fixed-order pass (deterministic)"},
      {"layernorm_bwd_bf16_det_cuda", NormKind::LayerNorm, &bf16, false,
       "bf16 LayerNorm backward: a warp per row for dx; dgamma/dbeta by 32-row partials, then a fixed-order pass (deterministic)"},
      {"rmsnorm_bwd_bf16_cuda", NormKind::RmsNorm, &bf16, false,
       "bf16 RMSNorm backward: a warp per row for dx; dgamma by 32-row partials, then a fixed-order pass (deterministic)"},
  };
  for (const Spec& s : specs)
    register_kernel(s.name, Backend::Cuda, false, [s] { return std::make_unique<CudaNormBwd>(s, NormBwdBug::None); },
                    Operation::NormBackward);
}

}  // namespace fpcert
