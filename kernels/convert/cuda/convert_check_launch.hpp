// kernels/convert/cuda/convert_check_launch.hpp — how the device check's host side (convert_check_device.cu)
// reaches the check kernels (convert_check_kernel.cuh, instantiated per op in convert_*.cu) without
// CUDA types: the arguments and the counts the kernel leaves in device memory.
#pragma once

#include <cstdint>

#include "kernels/convert/cuda/convert_launch.hpp"
#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_model.hpp"

namespace fpcert::cuda_convert {

/// What a check kernel counts over its codes (device memory, zeroed before each launch).
struct CheckCounts {
  unsigned long long keys[kOutcomeKeys];  ///< the model's outcome keys over every code
  unsigned long long differences;         ///< codes that are not NaN inputs whose result differs from the model
};

struct CheckLaunchArgs {
  std::uint64_t first = 0;        ///< first source code
  std::uint32_t n = 0;            ///< codes
  std::uint32_t blocks = 0;       ///< grid size (a grid-stride loop covers n)
  ConvertModel model{};           ///< fpcert's model; its decode table (if any) in device memory
  std::uint32_t shift = 0;        ///< result's code = (raw >> shift) & code_mask (tf32: 13)
  std::uint32_t code_mask = 0;
  std::uint32_t valid_mask = 0;   ///< bits a raw result may have (stray-bit check, as the sweep kernel)
  std::uint64_t nan_lo[2] = {0, 0}, nan_hi[2] = {0, 0};  ///< NaN source codes in this chunk: [lo, hi) twice
  void* nan_out = nullptr;        ///< raw results of those codes, interval 0 then interval 1 (launcher's Out each)
  CheckCounts* counts = nullptr;
  std::uint32_t* diff_src = nullptr;  ///< the first max_listed differences: source codes ...
  std::uint32_t* diff_got = nullptr;  ///< ... and their results (dst codes)
  std::uint32_t max_listed = 0;
  void* side = nullptr;           ///< SideResults, zeroed
  void* stream = nullptr;         ///< cudaStream_t
};

/// Lane differences and stray results of a chunk's SideResults (host copy) into pc.
void read_side_results(const SideResults& s, ProducedChunk& pc);

}  // namespace fpcert::cuda_convert
