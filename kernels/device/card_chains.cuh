// kernels/device/card_chains.cuh — the bitwise tier's tensor-core card chains on the GPU (oracle/card_chains.hpp;
// docs/tensor_cores.md, "The card emulation on the GPU"): one thread per output element, the fast path's blocks by the
// host's own source (oracle/fused_dot_fast.hpp), elements the fast path does not decide marked for the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "oracle/card_chains.hpp"

namespace fpcert {

/// Computes the job on the current device in `stream`: d (m x n fp32 codes) and general (1 where the host must compute
/// the element), both host memory; false (nothing computed) when the job is outside what the kernel takes (a step
/// above kCardChainMaxStep, more slices or terms than its arrays, more than 2^20 rows) or the device has not the memory
/// for it. Every other CUDA error throws DeviceError; the stream is synchronised before it returns.
bool cuda_card_chains(const CardChains& job, std::uint32_t* d, std::uint8_t* general, cudaStream_t stream);

}  // namespace fpcert
