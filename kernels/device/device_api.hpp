// kernels/device/device_api.hpp — memory, synchronisation and timing for the runner, without CUDA headers.
//
// The runner (suites/) owns every buffer a kernel touches. For host kernels it uses HostApi; for
// device kernels kernels/device/cuda_api.cu provides a CUDA implementation through cuda_api() (nullptr when the
// build has no CUDA or the machine has no device), so suites/ never includes a CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace fpcert {

/// Environment facts of a device, for the environment stamp.
struct DeviceInfo {
  std::string name;                 ///< e.g. "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;   ///< compute capability
  int sm_count = 0;
  int clock_mhz = 0, mem_clock_mhz = 0;
  std::size_t memory_bytes = 0;
  std::string driver, runtime, cublas;  ///< versions as text
  std::string arch_flags;               ///< archs this binary carries (e.g. "sm_90a, compute_80")
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  virtual bool is_device() const = 0;
  virtual void* alloc(std::size_t bytes) = 0;           ///< throws DeviceError on failure
  virtual void free(void* p) = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// Store count codes of `bytes` bytes (1, 2, 4 or 8) at element offsets idx[i] of dst, a buffer from
  /// alloc(): a few scattered entries of a large matrix without copying it (the revelation's probes
  /// move a few large values between launches). The default copies entry by entry.
  virtual void scatter(void* dst, int bytes, const std::int64_t* idx, const std::uint64_t* codes, std::size_t count);
  /// Copy `bytes` between two buffers from alloc() (the default: through host memory, by to_host and to_device).
  virtual void copy(void* dst, const void* src, std::size_t bytes);
  /// Whether two buffers from alloc() hold the same `bytes` bytes, compared where they live: a device compares on
  /// the device and moves one flag back (a run's output checked against a kept copy without downloading it). The
  /// default downloads both and compares them on the host. Finishes before it returns.
  virtual bool equal(const void* a, const void* b, std::size_t bytes);
  virtual void* stream() = 0;                           ///< cudaStream_t, or nullptr
  /// Wait for everything queued; throws DeviceError on a sticky or asynchronous error, or when the
  /// device does not finish within timeout_ms (a hung kernel).
  virtual void synchronize(double timeout_ms) = 0;
  /// Start / stop a timer around queued work; elapsed in ms (CUDA events on a device, steady_clock on the host).
  virtual void timer_start() = 0;
  virtual double timer_stop_ms() = 0;
  virtual DeviceInfo info() const = 0;
};

/// The host implementation (plain memory, steady_clock).
std::unique_ptr<DeviceApi> make_host_api();
/// The CUDA implementation for device 0, or nullptr (no CUDA in this build, or no device). Sets
/// `why` to the reason when it returns nullptr.
std::unique_ptr<DeviceApi> make_cuda_api(std::string* why = nullptr);
/// Whether this build has CUDA kernels compiled in.
bool built_with_cuda();

}  // namespace fpcert
