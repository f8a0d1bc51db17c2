// kernels/device/cuda_check.cuh — every CUDA call checked; failures become DeviceError (exit 3). (cuBLAS calls:
// FPCERT_CUBLAS_CHECK in kernels/gemm/cublas/cublas_loader.cuh.)
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/error.hpp"

namespace fpcert::cuda {

[[noreturn]] inline void fail(cudaError_t e, const char* what, const char* file, int line) {
  throw DeviceError(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " + file + ":" +
                    std::to_string(line));
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) fail(e, what, file, line);
}

/// After a launch: the launch itself (configuration errors) — execution errors surface at the
/// runner's synchronize().
inline void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fail(e, (std::string("launch of ") + kernel).c_str(), file, line);
}

}  // namespace fpcert::cuda

#define FPCERT_CUDA_CHECK(call) ::fpcert::cuda::check((call), #call, __FILE__, __LINE__)
#define FPCERT_CUDA_LAUNCH_CHECK(name) ::fpcert::cuda::check_launch(name, __FILE__, __LINE__)
