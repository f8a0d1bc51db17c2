// suites/run/guarded_buffer.cpp — see guarded_buffer.hpp.
#include "suites/run/guarded_buffer.hpp"

#include "base/codes.hpp"
#include "base/error.hpp"

namespace fpcert {

GuardedBuffer::GuardedBuffer(DeviceApi& api, std::size_t capacity_bytes, std::size_t guard)
    : api_(api), capacity_(capacity_bytes), guard_(guard) {
  p_ = api_.alloc(guard_ + capacity_ + guard_);
}

GuardedBuffer::~GuardedBuffer() {
  if (kept_) api_.free(kept_);
  api_.free(p_);
}

void GuardedBuffer::keep() {
  if (kept_ && kept_bytes_ != image_.size()) {
    api_.free(kept_);
    kept_ = nullptr;
  }
  try {
    if (!kept_) kept_ = api_.alloc(image_.size());
  } catch (const DeviceError&) {  // no room for a copy: every later run is downloaded and compared on the host
    kept_ = nullptr;
    kept_bytes_ = 0;
    return;
  }
  api_.copy(kept_, p_, image_.size());
  kept_bytes_ = image_.size();
}

bool GuardedBuffer::unchanged_since_kept() { return kept_ && kept_bytes_ == image_.size() && api_.equal(p_, kept_, kept_bytes_); }

void GuardedBuffer::prefill(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes, std::uint64_t fill) {
  rows_ = rows, cols_ = cols, ld_ = ld, eb_ = elem_bytes;
  if (element_bytes() > capacity_) throw std::logic_error("GuardedBuffer: layout larger than the allocation");
  image_.assign(guard_ + element_bytes() + guard_, kGuardByte);
  std::uint8_t* c = image_.data() + guard_;
  for (std::int64_t i = 0; i < rows_; ++i)
    for (std::int64_t j = 0; j < cols_; ++j) store_code(c, i * ld_ + j, eb_, fill);
  api_.to_device(p_, image_.data(), image_.size());
}

void GuardedBuffer::prefill(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes, const std::vector<std::uint64_t>& codes) {
  rows_ = rows, cols_ = cols, ld_ = ld, eb_ = elem_bytes;
  if (element_bytes() > capacity_) throw std::logic_error("GuardedBuffer: layout larger than the allocation");
  if (codes.size() != static_cast<std::size_t>(rows * cols)) throw std::logic_error("GuardedBuffer: codes do not match the layout");
  image_.assign(guard_ + element_bytes() + guard_, kGuardByte);
  std::uint8_t* c = image_.data() + guard_;
  for (std::int64_t i = 0; i < rows_; ++i)
    for (std::int64_t j = 0; j < cols_; ++j) store_code(c, i * ld_ + j, eb_, codes[static_cast<std::size_t>(i * cols + j)]);
  api_.to_device(p_, image_.data(), image_.size());
}

void* GuardedBuffer::elements() const { return static_cast<std::uint8_t*>(p_) + guard_; }

GuardReport GuardedBuffer::download_and_check() {
  api_.to_host(image_.data(), p_, image_.size());
  GuardReport g;
  auto first = [&](GuardReport::Where w) {
    ++g.changed;
    if (g.where != GuardReport::Where::None) return false;
    g.where = w;
    return true;
  };
  for (std::size_t b = 0; b < guard_; ++b)
    if (image_[b] != kGuardByte && first(GuardReport::Where::Before)) g.offset = guard_ - b;
  const std::size_t end = guard_ + element_bytes();
  for (std::size_t b = end; b < image_.size(); ++b)
    if (image_[b] != kGuardByte && first(GuardReport::Where::After)) g.offset = b - end;
  for (std::int64_t i = 0; i < rows_; ++i)
    for (std::int64_t j = cols_; j < ld_; ++j)
      for (int q = 0; q < eb_; ++q)
        if (image_[guard_ + static_cast<std::size_t>((i * ld_ + j) * eb_ + q)] != kGuardByte && first(GuardReport::Where::Padding)) {
          g.row = i;
          g.col = j;
        }
  return g;
}

std::uint64_t GuardedBuffer::code(std::int64_t i, std::int64_t j) const { return load_code(host_elements(), i * ld_ + j, eb_); }

}  // namespace fpcert
