// kernels/device/exact_gemm_fused.cuh — the whole exact GEMM reference on the GPU for binary32 inputs (docs/oracle.md,
// "On the GPU"): the scan, the slicing, the slice DGEMMs, the integer combination and the per-element corrections on
// the device, the same finishing code as the CPU oracle (oracle/exact_combine.hpp). Used by the cuBLAS engine
// (exact_gemm_cuda.cu) through ExactGemmEngine::whole_reference.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/device/exact_gemm_cuda.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {

/// Wall seconds since t0 (the engines' ExactGemmTimes parts, each measured after a synchronisation).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Device and pinned buffers of the fused path, kept (and grown) across calls.
struct FusedBuffers;
struct FusedBuffersDeleter {
  void operator()(FusedBuffers* p) const;
};
using FusedBuffersPtr = std::unique_ptr<FusedBuffers, FusedBuffersDeleter>;
FusedBuffersPtr make_fused_buffers();

/// The reference of C = A B on the device when every entry of A and B is a binary32 value (finite or not), M, N, K
/// fit cuBLAS's 32-bit sizes, the split has at most two slices (every binary32 problem but rows spanning beyond the
/// window) and the device has the memory: fills r and returns true. Otherwise returns false and leaves r as it was
/// (the oracle's path runs). C is made in row bands of about band_elements elements (CudaExactGemmEngine::
/// set_band_elements), each band's results downloaded while the next is computed. Adds its phases to *times. Every
/// CUDA and cuBLAS call is checked (DeviceError).
bool fused_gemm_reference(FusedBuffers& buf, cudaStream_t stream, cublasHandle_t handle, const MatrixView& a,
                          const MatrixView& b, unsigned threads, std::int64_t band_elements, GemmRef& r,
                          ExactGemmTimes& times);

}  // namespace fpcert
