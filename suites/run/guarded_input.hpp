// suites/run/guarded_input.hpp — a kernel's input operand (A or B) as the runner hands it over: rows x cols
// codes with a leading dimension larger than cols, guard bytes before the first element, after the
// last, and in the padding of every row, optionally with the first element one element off the
// allocation's alignment. The guards and the padding may hold a poison code instead of the byte 0x5A: the
// storage format's NaN (poison_code), so that a kernel reading past the end of a row gets a NaN that shows in
// its result even where it multiplies it by zero. After each run the whole image is downloaded and compared with what was
// uploaded: a changed element is an input the kernel modified, a changed guard or padding byte a
// write outside the operand (docs/suites.md, "The runner").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "oracle/format.hpp"

namespace fpcert {

/// What one comparison of an input's image found.
struct InputReport {
  std::int64_t modified = 0;        ///< elements that differ from what was uploaded
  std::int64_t first_modified = -1; ///< row-major element index (row * cols + col) of the first
  std::int64_t guard_changed = 0;   ///< guard and padding bytes that changed
  std::string first_guard;          ///< where the first changed guard byte lies, in words
};

class GuardedInput {
 public:
  /// `packed`: rows x cols codes of elem_bytes each, row-major without padding. ld >= cols;
  /// misalign: the first element starts elem_bytes past the guard (which ends 256-byte aligned).
  /// poison: a container code of elem_bytes that fills the guards and the padding, element by element in step
  /// with the operand's own elements (poison_code); none: every such byte is 0x5A.
  GuardedInput(DeviceApi& api, const std::vector<std::uint8_t>& packed, std::int64_t rows, std::int64_t cols, std::int64_t ld,
               int elem_bytes, std::size_t guard, bool misalign, std::optional<std::uint64_t> poison = std::nullopt);
  ~GuardedInput();
  GuardedInput(const GuardedInput&) = delete;
  GuardedInput& operator=(const GuardedInput&) = delete;

  const void* elements() const;
  std::int64_t ld() const { return ld_; }
  /// Download the image and compare it with the upload.
  InputReport check();

 private:
  DeviceApi& api_;
  void* p_ = nullptr;
  std::int64_t rows_, cols_, ld_;
  int eb_;
  std::size_t front_;  ///< bytes before the first element (guard + misalignment)
  std::vector<std::uint8_t> image_, back_;
};

/// The leading dimension the runner gives an operand of `cols` columns: cols plus a padding of at
/// least 8 elements and a whole number of 16-byte units, so that rows stay as aligned as cols
/// leaves them (vectorised loads are not penalised) while lda = k can never be assumed.
std::int64_t padded_ld(std::int64_t cols, int elem_bytes);

/// What a kernel must never read, as a container code of `f`: a quiet NaN with the payload 0x2D2D... (not the
/// canonical NaN a kernel computes, nor the outputs' pre-fill, so a write of either into a guard still shows);
/// formats with a NaN but no payload room: their NaN; finite-only formats (no NaN, no Inf): a container code with
/// every bit set, beyond the format's codes (an invalid code). A read past the end of a row then turns the
/// result into NaN even when multiplied by zero (docs/suites.md, "layout.poisoned_padding").
std::uint64_t poison_code(const Format& f);

}  // namespace fpcert
