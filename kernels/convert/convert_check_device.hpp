// kernels/convert/convert_check_device.hpp — the conversion check run on the device: each table entry's kernel
// converts every code and compares it in the same pass with fpcert's model compiled for the GPU
// (oracle/convert/convert_model.hpp), and sends back only the outcome-key counts, the codes whose result
// differs from the model (a bounded list and its exact count), the raw results of NaN inputs, and
// the lane and stray-bit findings. MPFR then runs on the host on every difference and on the sample
// (check_conversion_differences). No CUDA header here: kernels/convert/cuda/convert_check_device.cu makes it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_check.hpp"
#include "oracle/convert/convert_model.hpp"

namespace fpcert {

/// One chunk's findings, readable on the host once DeviceChecker::wait returns.
struct DeviceCheckChunk {
  std::uint64_t first = 0, count = 0;                 ///< the source codes checked
  std::array<std::uint64_t, kOutcomeKeys> keys{};     ///< the model's outcome keys over every code
  std::uint64_t differences = 0;                      ///< codes, NaN inputs aside, whose result differs from the model
  std::vector<ModelDifference> listed;                ///< those codes, ascending: all of them unless `overflow`
  bool overflow = false;                              ///< more differences than the list holds
  /// Raw results (container layout, result_bytes() each) of the chunk's NaN source codes, by interval.
  struct NanPart {
    std::uint64_t first = 0, count = 0;
    const void* data = nullptr;
  };
  std::vector<NanPart> nan;
  ProducedChunk side;  ///< lanes, strays, kernel and copy times (its data is null)
};

/// Runs the device check of table entries on a device, in two slots like ConversionProducer.
class DeviceChecker {
 public:
  virtual ~DeviceChecker() = default;
  /// Whether an entry can be checked on the device: an ordinary conversion the model covers, with a
  /// kernel in this build. (The scaled round trip and entries outside the model stay on the host.)
  virtual bool supports(const DeviceConversion& e) const = 0;
  virtual std::uint64_t max_chunk() const = 0;       ///< codes per chunk
  virtual std::size_t max_listed() const = 0;        ///< differences listed per chunk
  virtual void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) = 0;
  virtual DeviceCheckChunk wait(int slot) = 0;       ///< DeviceError on a fault or a hang
  /// Peak memory bandwidth in bytes/s: 2 x memory clock x bus width (cudaDevAttrMemoryClockRate,
  /// cudaDeviceProp::memoryBusWidth; double data rate).
  virtual double memory_bandwidth() const = 0;
};

/// The CUDA device check on device 0 (nullptr without CUDA or a device; `why` says which).
std::unique_ptr<DeviceChecker> make_cuda_device_checker(std::string* why = nullptr,
                                                       std::uint64_t max_chunk = std::uint64_t{1} << 28,
                                                       std::size_t max_listed = std::size_t{1} << 16);

}  // namespace fpcert
