// kernels/cuda/emu_host.cuh — host-side helpers of the emulation kernels (emu_split.cu, emu_bf16.cu): a
// grow-only device workspace carved into aligned pieces, stage timing with CUDA events, and the
// availability checks every mma.sync kernel makes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/bf16_on_fp16.hpp"
#include "kernels/cuda/cuda_check.cuh"

namespace fpcert::emu_host {

/// A device allocation that only grows (freed with the kernel object). Pieces are carved from it
/// in a fixed order per call, each 256-byte aligned, so their offsets depend on the shape only.
class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (base_) cudaFree(base_);
  }
  /// Start a layout: reserve(bytes) calls return offsets, then commit() allocates and returns the base.
  void begin() { size_ = 0; }
  std::size_t reserve(std::size_t bytes) {
    const std::size_t off = size_;
    size_ += (bytes + 255) / 256 * 256;
    return off;
  }
  std::uint8_t* commit() {
    if (size_ > capacity_) {
      if (base_) FPCERT_CUDA_CHECK(cudaFree(base_));
      base_ = nullptr;
      capacity_ = 0;
      FPCERT_CUDA_CHECK(cudaMalloc(&base_, std::max<std::size_t>(size_, 256)));
      capacity_ = std::max<std::size_t>(size_, 256);
    }
    return static_cast<std::uint8_t*>(base_);
  }

 private:
  void* base_ = nullptr;
  std::size_t capacity_ = 0, size_ = 0;
};

/// Compute capability of the current device (0 and a reason when there is none).
inline int device_sm(std::string& why) {
  int dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorName(e);
    cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}

/// The checks of kernels/cuda/mma.cu for a kernel whose instructions need sm_80: shape limits, a
/// device of compute capability 8.0 or more, and a loaded image (any: compute_80 PTX suffices).
template <typename F>
Support sm80_support(std::int64_t m, std::int64_t n, std::int64_t k, F* any_kernel) {
  if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
  if ((m + 127) / 128 > 65535) return Support::no("m > 65535 * 128 (grid y limit)");
  std::string why;
  const int sm = device_sm(why);
  if (sm == 0) return Support::no(why);
  if (sm < 80) return Support::no("needs sm_80+ tensor-core instructions; this device is sm_" + std::to_string(sm));
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, any_kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Support::no(std::string("no kernel image for this device: ") + cudaGetErrorName(e));
  }
  return Support::yes();
}

/// Times named stages of a pipeline: record(i) after stage i; medians over runs.
class StageClock {
 public:
  StageClock(cudaStream_t s, int stages) : stream_(s), ev_(static_cast<std::size_t>(stages) + 1), ms_(static_cast<std::size_t>(stages)) {
    for (auto& e : ev_) FPCERT_CUDA_CHECK(cudaEventCreate(&e));
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;
  ~StageClock() {
    for (auto& e : ev_) cudaEventDestroy(e);
  }
  void start() { FPCERT_CUDA_CHECK(cudaEventRecord(ev_[0], stream_)); }
  void mark(int stage) { FPCERT_CUDA_CHECK(cudaEventRecord(ev_[static_cast<std::size_t>(stage) + 1], stream_)); }
  /// After the last mark: collect this run's stage times.
  void collect() {
    FPCERT_CUDA_CHECK(cudaEventSynchronize(ev_.back()));
    for (std::size_t i = 0; i < ms_.size(); ++i) {
      float ms = 0;
      FPCERT_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_[i], ev_[i + 1]));
      ms_[i].push_back(ms);
    }
  }
  double median(int stage) const {
    std::vector<double> v = ms_[static_cast<std::size_t>(stage)];
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> ev_;
  std::vector<std::vector<double>> ms_;
};

}  // namespace fpcert::emu_host
