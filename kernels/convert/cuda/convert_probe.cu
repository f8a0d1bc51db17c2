// kernels/convert/cuda/convert_probe.cu — which compiled code runs on this device: the probe kernel reports
// __CUDA_ARCH__ and __CUDA_ARCH_FAMILY_SPECIFIC__ of the variant the driver picked (sm_90a machine
// code on an H100/H200, the compute_80 PTX compiled at load time elsewhere), since that, not the
// compute capability alone, decides which conversions the headers route to a hardware cvt.
#include <cuda_runtime.h>

#include "kernels/convert/cuda/convert_launch.hpp"

namespace fpcert::cuda_convert {
namespace {

__global__ void arch_probe(int* out) {
#if defined(__CUDA_ARCH__)
  out[0] = __CUDA_ARCH__;
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
  out[1] = __CUDA_ARCH_FAMILY_SPECIFIC__;
#else
  out[1] = 0;
#endif
#endif
}

}  // namespace

bool probe_arch(int* arch, int* family_specific, void* stream) {
  int* d = nullptr;
  if (cudaMalloc(&d, 2 * sizeof(int)) != cudaSuccess) return false;
  int h[2] = {0, 0};
  bool ok = cudaMemsetAsync(d, 0, 2 * sizeof(int), static_cast<cudaStream_t>(stream)) == cudaSuccess;
  if (ok) {
    arch_probe<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(d);
    ok = cudaGetLastError() == cudaSuccess &&
         cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)) == cudaSuccess &&
         cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) == cudaSuccess;
  }
  cudaFree(d);
  *arch = h[0];
  *family_specific = h[1];
  return ok && h[0] > 0;
}

}  // namespace fpcert::cuda_convert
