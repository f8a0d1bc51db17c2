// kernels/block/device_block_quant.hpp — the CUDA block quantizer (kernels/block/cuda/block_quant.cu) behind an interface
// without CUDA headers, for tests, benchmarks and the CLI: fp32 arrays into MX / NVFP4 codes and scales on
// device 0, element- and scale-exact with the model of oracle/block/block_format.hpp (nearest-even elements).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/block/block_format.hpp"

namespace fpcert {

struct DeviceQuantized {
  std::vector<std::uint8_t> codes;   ///< rows x cols, as BlockTensor::codes
  std::vector<std::uint8_t> scales;  ///< as BlockTensor::scales
  std::int64_t scale_rows = 0, scale_cols = 0;
  double tensor_scale = 1;           ///< NVFP4's s_t (the device's amax reduction, then nvfp4_tensor_scale)
  double kernel_ms = 0;              ///< median over `timed` runs of the quantizing kernels alone (CUDA events)
};

/// Whether the CUDA quantizer can take these options: nearest-even elements, blocks of 16 or 32 (the
/// warp-level reduction), any rule the format takes. The reason when not.
bool device_quantizer_supports(const BlockFormat& f, const BlockQuantOptions& o, std::string* why = nullptr);

/// Quantize a rows x cols row-major fp32 array on device 0 with the CUDA quantizer. timed > 0: also time
/// that many further runs (after one warm-up). Throws DeviceError without a usable device (or a CUDA-less
/// build) and std::invalid_argument for options device_quantizer_supports refuses.
DeviceQuantized quantize_on_device(const BlockFormat& f, const BlockQuantOptions& o, const float* x, std::int64_t rows,
                                   std::int64_t cols, int timed = 0);

/// Device-to-device copy bandwidth of `bytes` bytes on device 0 (GB/s, median of `runs`): the memory
/// bandwidth the quantizer is compared with, measured side by side in the same run.
double device_copy_bandwidth_gbs(std::size_t bytes, int runs = 10);

}  // namespace fpcert
