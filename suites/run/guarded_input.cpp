// suites/run/guarded_input.cpp — guarded, padded input operands and their comparison after each run.
#include "suites/run/guarded_input.hpp"

#include <fmt/format.h>

#include "base/codes.hpp"

#include <algorithm>
#include <cstring>

namespace fpcert {
namespace {
constexpr std::uint8_t kInputGuardByte = 0x5A;  // differs from C's 0xA5, so the report says whose guard changed
}

std::int64_t padded_ld(std::int64_t cols, int elem_bytes) {
  const std::int64_t unit = std::max<std::int64_t>(1, 16 / elem_bytes);  // elements per 16 bytes
  return cols + std::max<std::int64_t>(8, unit);
}

GuardedInput::GuardedInput(DeviceApi& api, const std::vector<std::uint8_t>& packed, std::int64_t rows, std::int64_t cols,
                           std::int64_t ld, int elem_bytes, std::size_t guard, bool misalign, std::optional<std::uint64_t> poison)
    : api_(api), rows_(rows), cols_(cols), ld_(ld), eb_(elem_bytes), front_(guard + (misalign ? static_cast<std::size_t>(elem_bytes) : 0)) {
  const std::size_t body = static_cast<std::size_t>(rows * ld * eb_);
  image_.assign(front_ + body + guard, kInputGuardByte);
  if (poison) {  // element by element, in step with the elements (the bytes before front_ count back from it)
    std::vector<std::uint8_t> one(static_cast<std::size_t>(eb_));
    store_code(one.data(), 0, eb_, *poison);
    const std::size_t e = static_cast<std::size_t>(eb_), shift = (e - front_ % e) % e;
    for (std::size_t b = 0; b < image_.size(); ++b) image_[b] = one[(b + shift) % e];
  }
  const std::size_t row_bytes = static_cast<std::size_t>(cols * eb_);
  for (std::int64_t i = 0; i < rows; ++i)
    std::memcpy(image_.data() + front_ + static_cast<std::size_t>(i * ld * eb_), packed.data() + static_cast<std::size_t>(i) * row_bytes,
                row_bytes);
  p_ = api_.alloc(image_.size());
  api_.to_device(p_, image_.data(), image_.size());
  back_.resize(image_.size());
}

GuardedInput::~GuardedInput() { api_.free(p_); }

const void* GuardedInput::elements() const { return static_cast<const std::uint8_t*>(p_) + front_; }

InputReport GuardedInput::check() {
  api_.to_host(back_.data(), p_, back_.size());
  InputReport r;
  const std::size_t end = front_ + static_cast<std::size_t>(rows_ * ld_ * eb_);
  constexpr std::size_t kBlock = 1 << 16;  // equal blocks are skipped with memcmp (operands of 2^31 elements, every run)
  for (std::size_t b = 0; b < back_.size(); ++b) {
    if (b % kBlock == 0) {
      const std::size_t len = std::min(kBlock, back_.size() - b);
      if (std::memcmp(back_.data() + b, image_.data() + b, len) == 0) {
        b += len - 1;
        continue;
      }
    }
    if (back_[b] == image_[b]) continue;
    if (b < front_ || b >= end) {
      if (!r.guard_changed)
        r.first_guard = b < front_ ? fmt::format("{} byte(s) before the first element", front_ - b)
                                   : fmt::format("{} byte(s) past the last row's padding", b - end + 1);
      ++r.guard_changed;
      continue;
    }
    const std::int64_t off = static_cast<std::int64_t>(b - front_) / eb_;
    const std::int64_t row = off / ld_, col = off % ld_;
    if (col >= cols_) {
      if (!r.guard_changed) r.first_guard = fmt::format("padding of row {} (column {}, ld {})", row, col, ld_);
      ++r.guard_changed;
      continue;
    }
    if (r.first_modified < 0) r.first_modified = row * cols_ + col;
    ++r.modified;
    b = front_ + static_cast<std::size_t>((row * ld_ + col + 1) * eb_) - 1;  // the rest of this element counts once
  }
  return r;
}

std::uint64_t poison_code(const Format& f) {
  const int cb = f.container_bits / 8;
  switch (f.specials) {
    case Specials::IEEE: {
      const std::uint64_t quiet = std::uint64_t{1} << (f.frac_bits - 1);
      return to_container(f, f.inf_code() | quiet | (0x2D2D2D2D2D2D2D2DULL & (f.frac_mask() >> 1)));
    }
    case Specials::FiniteNaN:
    case Specials::ScaleOnly: return to_container(f, f.canonical_nan_code());
    case Specials::FiniteOnly: return cb >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * cb)) - 1;
  }
  return 0;
}

}  // namespace fpcert
