// kernels/reduce/cuda/reduce_cuda.cu — CUDA reduction built-ins (docs/reductions.md, "Kernels"):
//  - reduce_{sum,dot}_*_warp32: one warp per vector; lane l sums elements l, l + 32, ... from +0 (fmaf for a dot),
//    then the __shfl_xor_sync butterfly with offsets 16, 8, 4, 2, 1 (v = v + v^off): ReduceOrder::warp_tree(32),
//    emulated bit for bit by the bitwise tier;
//  - reduce_sum_f32_atomic: each warp sums a chunk of 1024 elements by the same tree and adds it into the result
//    with an atomic compare-and-swap of __fadd_rn (atomicAdd's atom.add.f32 flushes subnormal results: PTX ISA,
//    "atom"); the chunks arrive in any order: RunToRun, order unknown, graded by the envelope run by run;
//  - cub_segmented_sum_f32: CUB's cub::DeviceSegmentedReduce::Sum over the rows (the CUDA Toolkit's library subject;
//    its tree is not documented: order unknown; CUB documents its reductions as run-to-run deterministic on one
//    device, which the runner checks on every case).
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device/cuda_check.cuh"
#include "kernels/reduce/reduce_kernel.hpp"
#include "kernels/register.hpp"

namespace fpcert {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;  // warps per block

template <typename T>
__device__ float load_f(const T* p, std::int64_t i);
template <>
__device__ float load_f<float>(const float* p, std::int64_t i) { return p[i]; }
template <>
__device__ float load_f<__nv_bfloat16>(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }

__device__ std::int64_t at(bool rows, std::int64_t v, std::int64_t i, std::int64_t ld) { return rows ? v * ld + i : i * ld + v; }

__device__ float butterfly(float s) {
  for (int off = 16; off >= 1; off /= 2) s = __fadd_rn(s, __shfl_xor_sync(kFull, s, off));
  return s;
}

template <typename T, bool kDot>
__global__ void warp_reduce(std::int64_t count, std::int64_t len, bool rows, const T* x, std::int64_t ldx, const T* y, std::int64_t ldy,
                            float* out) {
  const int lane = threadIdx.x % 32;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; v < count;
       v += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    float s = 0.0f;
    for (std::int64_t i = lane; i < len; i += 32) {
      const float xi = load_f(x, at(rows, v, i, ldx));
      s = kDot ? __fmaf_rn(xi, load_f(y, at(rows, v, i, ldy)), s) : __fadd_rn(s, xi);
    }
    s = butterfly(s);
    if (lane == 0) out[v] = s;
  }
}

__global__ void zero_out(std::int64_t count, float* out) {
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < count; v += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[v] = 0.0f;
}

__device__ void atomic_add_rn(float* p, float v) {
  unsigned int* word = reinterpret_cast<unsigned int*>(p);
  unsigned int seen = *word, assumed;
  do {
    assumed = seen;
    seen = atomicCAS(word, assumed, __float_as_uint(__fadd_rn(__uint_as_float(assumed), v)));
  } while (seen != assumed);
}

constexpr std::int64_t kChunk = 1024;

/// Warp w of the grid takes (vector, chunk) pairs; each chunk's tree sum is added into out[vector] atomically.
__global__ void atomic_chunks(std::int64_t count, std::int64_t len, bool rows, const float* x, std::int64_t ldx, float* out) {
  const int lane = threadIdx.x % 32;
  const std::int64_t chunks = (len + kChunk - 1) / kChunk;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; w < count * chunks;
       w += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    const std::int64_t v = w / chunks, c = w % chunks;
    const std::int64_t end = std::min(len, (c + 1) * kChunk);
    float s = 0.0f;
    for (std::int64_t i = c * kChunk + lane; i < end; i += 32) s = __fadd_rn(s, x[at(rows, v, i, ldx)]);
    s = butterfly(s);
    if (lane == 0) atomic_add_rn(&out[v], s);
  }
}

unsigned blocks_for(std::int64_t work) { return static_cast<unsigned>(std::clamp<std::int64_t>((work + kWarps - 1) / kWarps, 1, 65535)); }

enum class Flavour { Warp, Atomic, Cub };

class CudaReduce final : public ReduceKernel {
 public:
  CudaReduce(std::string name, ReduceKind kind, const Format* in, Flavour f, std::string note) : name_(std::move(name)), f_(f) {
    t_.kind = kind;
    t_.x_input = t_.y_input = in;
    t_.arith.acc = &f32;
    t_.arith.rounder = Rounder::nearest(f32);
    t_.arith.products = ProductRounding::Exact;
    t_.out = &f32;
    t_.order = f == Flavour::Warp ? ReduceOrder::warp_tree(32) : ReduceOrder::unknown();
    if (f == Flavour::Atomic) {
      t_.determinism = Determinism::RunToRun;
      t_.determinism_note = "chunks of 1024 added into the result with atomicCAS as they finish";
    }
    t_.note = std::move(note);
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return t_.note + " (" + describe_reduce_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cuda; }
  MemorySpace memory() const override { return MemorySpace::Device; }
  const ReduceTraits& reduce_traits() const override { return t_; }
  Support can_implement(std::int64_t count, std::int64_t length, ReduceAxis axis) const override {
    (void)count, (void)length;
    if (f_ == Flavour::Cub && axis != ReduceAxis::Rows) return Support::no("CUB's segmented reduction takes contiguous segments (rows)");
    return Support::yes();
  }
  void run(const ReduceOperands& o) override {
    if (o.count == 0) return;
    const auto stream = static_cast<cudaStream_t>(o.stream);
    const bool rows = o.axis == ReduceAxis::Rows;
    float* out = static_cast<float*>(o.out);
    switch (f_) {
      case Flavour::Warp:
        if (t_.x_input == &bf16)
          warp_reduce<__nv_bfloat16, false><<<blocks_for(o.count), 32 * kWarps, 0, stream>>>(
              o.count, o.length, rows, static_cast<const __nv_bfloat16*>(o.x), o.ldx, nullptr, 0, out);
        else if (t_.kind == ReduceKind::Dot)
          warp_reduce<float, true><<<blocks_for(o.count), 32 * kWarps, 0, stream>>>(o.count, o.length, rows, static_cast<const float*>(o.x), o.ldx,
                                                                                     static_cast<const float*>(o.y), o.ldy, out);
        else
          warp_reduce<float, false><<<blocks_for(o.count), 32 * kWarps, 0, stream>>>(o.count, o.length, rows, static_cast<const float*>(o.x), o.ldx,
                                                                                      nullptr, 0, out);
        FPCERT_CUDA_LAUNCH_CHECK(name_.c_str());
        return;
      case Flavour::Atomic: {
        zero_out<<<static_cast<unsigned>(std::min<std::int64_t>((o.count + 255) / 256, 65535)), 256, 0, stream>>>(o.count, out);
        FPCERT_CUDA_LAUNCH_CHECK("reduce_sum_f32_atomic: zero");
        const std::int64_t chunks = (o.length + kChunk - 1) / kChunk;
        if (chunks == 0) return;
        atomic_chunks<<<blocks_for(o.count * chunks), 32 * kWarps, 0, stream>>>(o.count, o.length, rows, static_cast<const float*>(o.x), o.ldx, out);
        FPCERT_CUDA_LAUNCH_CHECK("reduce_sum_f32_atomic: chunks");
        return;
      }
      case Flavour::Cub: run_cub(o, stream, out); return;
    }
  }

 private:
  void run_cub(const ReduceOperands& o, cudaStream_t stream, float* out) {
    // Segment v: x[v ldx, v ldx + length). Offsets as int64 (ld x count may pass 2^31).
    std::vector<std::int64_t> begin(static_cast<std::size_t>(o.count)), end(begin.size());
    for (std::int64_t v = 0; v < o.count; ++v) begin[static_cast<std::size_t>(v)] = v * o.ldx, end[static_cast<std::size_t>(v)] = v * o.ldx + o.length;
    std::int64_t* d_off = nullptr;
    const std::size_t off_bytes = 2 * begin.size() * sizeof(std::int64_t);
    FPCERT_CUDA_CHECK(cudaMallocAsync(&d_off, off_bytes, stream));
    std::unique_ptr<std::int64_t, void (*)(std::int64_t*)> guard(d_off, [](std::int64_t* p) { cudaFree(p); });
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(d_off, begin.data(), begin.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice, stream));
    FPCERT_CUDA_CHECK(cudaMemcpyAsync(d_off + begin.size(), end.data(), end.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice, stream));
    const float* x = static_cast<const float*>(o.x);
    std::size_t temp_bytes = 0;
    FPCERT_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x, out, static_cast<int>(o.count), d_off, d_off + o.count, stream));
    void* temp = nullptr;
    FPCERT_CUDA_CHECK(cudaMallocAsync(&temp, std::max<std::size_t>(temp_bytes, 1), stream));
    std::unique_ptr<void, void (*)(void*)> tguard(temp, [](void* p) { cudaFree(p); });
    FPCERT_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, static_cast<int>(o.count), d_off, d_off + o.count, stream));
    FPCERT_CUDA_LAUNCH_CHECK("cub_segmented_sum_f32");
    FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host offsets and the frees must outlive the reduction
  }

  std::string name_;
  Flavour f_;
  ReduceTraits t_;
};

}  // namespace

void register_reduce_cuda_kernels() {
  struct Entry {
    const char* name;
    ReduceKind kind;
    const Format* in;
    Flavour f;
    const char* note;
  };
  const Entry entries[] = {
      {"reduce_sum_f32_warp32", ReduceKind::Sum, &f32, Flavour::Warp, "one warp per vector, __shfl_xor_sync butterfly"},
      {"reduce_sum_bf16_warp32", ReduceKind::Sum, &bf16, Flavour::Warp, "bf16 inputs, one warp per vector, f32 butterfly"},
      {"reduce_dot_f32_warp32", ReduceKind::Dot, &f32, Flavour::Warp, "fmaf lanes, one warp per vector, butterfly"},
      {"reduce_sum_f32_atomic", ReduceKind::Sum, &f32, Flavour::Atomic, "warp sums of 1024-element chunks added with atomicCAS"},
      {"cub_segmented_sum_f32", ReduceKind::Sum, &f32, Flavour::Cub, "CUB cub::DeviceSegmentedReduce::Sum over the rows"},
  };
  for (const Entry& e : entries) {
    const Entry c = e;
    register_kernel(c.name, Backend::Cuda, false, [c] { return std::make_unique<CudaReduce>(c.name, c.kind, c.in, c.f, c.note); },
                    Operation::Reduction);
  }
}

}  // namespace fpcert
