// kernels/device/residue_gemms.cuh — the bitwise tier's Ozaki-II residue GEMMs on the GPU (oracle/gemm_engine.hpp,
// ResidueGemms; docs/fp64.md, "The bitwise tier on the device"): exact integer arithmetic, one thread per residue.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "oracle/gemm_engine.hpp"

namespace fpcert {

/// Computes the job on the current device in `stream` into out (host memory, count m n residues); false (nothing
/// computed) when the job is outside what the kernel takes (no modulus, a modulus outside 2..256, a K block outside
/// 1..2^17 - 1, more than 65535 moduli or 2^20 rows) or the device has not the memory for it. Every other CUDA
/// error throws DeviceError; the stream is synchronised before it returns.
bool cuda_residue_gemms(const ResidueGemms& job, std::uint8_t* out, cudaStream_t stream);

}  // namespace fpcert
