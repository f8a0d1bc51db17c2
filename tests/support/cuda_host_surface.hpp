// tests/support/cuda_host_surface.hpp — the CUDA surface the mma.sync kernels use
// (kernels/gemm/cuda/mma_kernel.cuh and the emulation kernels built on it), defined for the host so that the device
// code compiles as C++ and runs with one std::thread per CUDA thread. The test supplies the
// emulated MMA. Include before the kernel header, with FPCERT_MMA_EMULATION semantics.
#pragma once

#include <barrier>

#ifndef FPCERT_MMA_EMULATION
#define FPCERT_MMA_EMULATION 1
#endif
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

namespace fpcert::mma_emulated {
struct EmuDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local EmuDim3 threadIdx, blockIdx, blockDim, gridDim;
inline thread_local std::barrier<>* tl_block_barrier = nullptr;
inline void __syncthreads() { tl_block_barrier->arrive_and_wait(); }
}  // namespace fpcert::mma_emulated
