// suites/run/guarded_buffer.hpp — the one guarded output buffer of the runner, for every kernel kind: an
// allocation in the kernel's memory space (through DeviceApi) holding `guard` bytes, a rows x cols
// block of elements with leading dimension ld (the padding columns ld - cols are guarded too), and
// `guard` bytes more. Guards and padding hold kGuardByte; the elements hold a pre-fill code (the GEMM
// runner's NaN pattern, so unwritten outputs are told apart; the conversion runner's guard pattern).
// After the kernel ran, the image is downloaded and every guard and padding byte compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"

namespace fpcert {

inline constexpr std::uint8_t kGuardByte = 0xA5;

/// Where the first changed byte outside the elements lies.
struct GuardReport {
  std::int64_t changed = 0;  ///< bytes outside the elements that no longer hold kGuardByte
  enum class Where { None, Before, After, Padding } where = Where::None;  ///< the first one found
  std::size_t offset = 0;    ///< Before: bytes before the elements (1 = the last guard byte); After: bytes after the end
  std::int64_t row = 0, col = 0;  ///< Padding: its element coordinates (col >= cols)
};

class GuardedBuffer {
 public:
  /// Room for up to `capacity_bytes` of elements between two guards of `guard` bytes each.
  GuardedBuffer(DeviceApi& api, std::size_t capacity_bytes, std::size_t guard);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  /// Lay out rows x cols elements of elem_bytes each, leading dimension ld (>= cols), pre-filled with
  /// `fill` (a container code), guards and padding with kGuardByte, and upload the image.
  void prefill(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes, std::uint64_t fill);
  /// The same, each element its own code: codes row-major rows x cols (an in-place GEMM's C, "epilogue.alpha_beta").
  void prefill(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes, const std::vector<std::uint64_t>& codes);
  /// The first element, in the kernel's memory space.
  void* elements() const;
  /// Download the image and compare every guard and padding byte.
  GuardReport download_and_check();
  /// Keep a copy of the image as it is now (guards, elements, padding), in the buffer's memory space, for
  /// unchanged_since_kept: the runner keeps the checked run's. Without room for the copy nothing is kept.
  void keep();
  /// Whether the image holds exactly the kept bytes, compared where the buffer lives (on a device, without
  /// downloading it): a later run that left the checked run's bytes, guards and padding included. False when
  /// nothing was kept or the layout changed since. The downloaded image is left as it was.
  bool unchanged_since_kept();
  /// Element (i, j) of the downloaded image, a container code.
  std::uint64_t code(std::int64_t i, std::int64_t j) const;
  /// The downloaded elements (row-major with ld), host memory.
  const std::uint8_t* host_elements() const { return image_.data() + guard_; }
  std::size_t element_bytes() const { return static_cast<std::size_t>(rows_ * ld_ * eb_); }

 private:
  DeviceApi& api_;
  void* p_ = nullptr;
  std::size_t capacity_, guard_;
  std::int64_t rows_ = 0, cols_ = 0, ld_ = 0;
  int eb_ = 1;
  std::vector<std::uint8_t> image_;
  void* kept_ = nullptr;  // keep()'s copy (kept_bytes_ of them), in the api's memory
  std::size_t kept_bytes_ = 0;
};

/// A plain allocation in a DeviceApi's memory, freed on scope exit (kernel inputs).
class ApiBuffer {
 public:
  ApiBuffer(DeviceApi& api, std::size_t bytes) : api_(api), p_(api.alloc(bytes)) {}
  ~ApiBuffer() { api_.free(p_); }
  ApiBuffer(const ApiBuffer&) = delete;
  ApiBuffer& operator=(const ApiBuffer&) = delete;
  void* get() const { return p_; }

 private:
  DeviceApi& api_;
  void* p_;
};

}  // namespace fpcert
