// kernels/emu/cuda/emu_host.cuh — host-side helpers of the emulation kernels (emu_split.cu, emu_bf16.cu): a
// grow-only device workspace carved into aligned pieces and stage timing with CUDA events (their
// availability check is kernels/gemm/cuda/mma_host.cuh's).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device/cuda_check.cuh"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/gemm/cuda/mma_host.cuh"

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

/// The split-product kernels' stage timing (emu_split.cu, emu_split_wgmma.cu): the pre-pass, the GEMM and a whole run,
/// each timed on its own (medians after the warm-ups).
template <class Split, class Gemm, class Run>
std::vector<StageTime> time_split_stages(cudaStream_t stream, int warmups, int timed, Split split, Gemm gemm, Run run) {
  StageClock clock(stream, 3);
  for (int r = 0; r < warmups + timed; ++r) {
    clock.start();
    split();
    clock.mark(0);
    gemm();
    clock.mark(1);
    run();
    clock.mark(2);
    if (r >= warmups) clock.collect();
    else FPCERT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return {{"split pre-pass (T_overhead)", clock.median(0)}, {"MMA GEMM", clock.median(1)}, {"end to end", clock.median(2)}};
}

}  // namespace fpcert::emu_host
