// kernels/gemm/cuda/mma_host.cuh — the availability check every mma.sync kernel makes (kernels/gemm/cuda/mma.cu
// and the emulation kernels): shape limits of the 128 x 128 block grid, the device's compute
// capability, and an image of the kernel whose code carries the instructions.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/kernel.hpp"

namespace fpcert::cuda {

/// Compute capability of the current device as one number (90 for sm_90); 0 and a reason when none.
inline int device_sm(std::string& why) {
  int dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess) {
    why = std::string("no usable CUDA device: ") + cudaGetErrorName(e);
    cudaGetLastError();  // not sticky; clear it
    return 0;
  }
  return major * 10 + minor;
}

/// Can `kernel` (a __global__ function of a 128 x 128-tile mma.sync GEMM) run an m x n x k GEMM here?
/// The device needs compute capability need_arch, and the binary code for it: on a device this build
/// has no machine code for, the driver JIT-compiles the compute_80 PTX, in which instructions of a
/// later architecture were compiled out.
template <typename F>
Support mma_support(std::int64_t m, std::int64_t n, std::int64_t k, int need_arch, F* kernel) {
  if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
  if ((m + 127) / 128 > 65535) return Support::no("m > 65535 * 128 (grid y limit)");
  if ((n + 127) / 128 > 0x7FFFFFFF) return Support::no("n too large for the grid");
  std::string why;
  const int sm = device_sm(why);
  if (sm == 0) return Support::no(why);
  if (sm < need_arch)
    return Support::no("needs sm_" + std::to_string(need_arch) + "+ tensor-core instructions; this device is sm_" + std::to_string(sm));
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Support::no(std::string("no kernel image for this device: ") + cudaGetErrorName(e));
  }
  if (attr.ptxVersion < need_arch)
    return Support::no("this binary runs the kernel from compute_" + std::to_string(attr.ptxVersion) + " code, which lacks the sm_" +
                       std::to_string(need_arch) + " instructions (add the device's architecture to FPCERT_CUDA_ARCHS)");
  return Support::yes();
}

}  // namespace fpcert::cuda
