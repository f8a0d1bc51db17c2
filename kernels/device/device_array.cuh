// kernels/device/device_array.cuh — device memory of a verdict job on the GPU (card_chains.cu, residue_gemms.cu): stream-
// ordered, and null rather than an error when the device has not the memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/device/cuda_check.cuh"

namespace fpcert::cuda {

/// Device memory of a verdict job (card_chains.cu, residue_gemms.cu) in `stream`; p stays null when the device has not the
/// memory (the host then does the job: a verdict never waits on the device's free memory). Any other error throws.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  cudaStream_t s;
  DeviceArray(std::size_t count, cudaStream_t stream) : s(stream) {
    const cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&p), count * sizeof(T), s);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it
      p = nullptr;
      return;
    }
    FPCERT_CUDA_CHECK(e);
  }
  ~DeviceArray() {
    if (p) cudaFreeAsync(p, s);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

}  // namespace fpcert::cuda
