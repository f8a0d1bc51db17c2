// suites/mutation/row_blocks.cpp — buffers re-laid for faults made around a closed kernel (row_blocks.hpp).
#include "suites/mutation/row_blocks.hpp"

#include <algorithm>
#include <cstring>

#include "base/codes.hpp"
#include "oracle/round.hpp"

namespace fpcert {

Scratch::~Scratch() {
  for (void* p : bufs_) api_.free(p);
}

void* Scratch::upload(const std::vector<std::uint8_t>& host) {
  void* p = api_.alloc(std::max<std::size_t>(host.size(), 1));
  bufs_.push_back(p);
  if (!host.empty()) api_.to_device(p, host.data(), host.size());
  return p;
}

std::vector<std::uint8_t> Scratch::download(const void* src, const RowBlocks& from) {
  std::vector<std::uint8_t> h(static_cast<std::size_t>(from.elements() * from.bytes));
  if (!h.empty()) api_.to_host(h.data(), src, h.size());
  return h;
}

void* Scratch::relaid(const void* src, const RowBlocks& from, std::int64_t rows, std::int64_t front, std::int64_t cols) {
  const std::vector<std::uint8_t> h = download(src, from);
  const int eb = from.bytes;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(from.blocks * rows * cols * eb), 0);
  const std::int64_t w = std::min(from.cols, cols);
  for (std::int64_t b = 0; b < from.blocks; ++b)
    for (std::int64_t r = 0; r < from.rows; ++r) {
      const std::int64_t t = r + front;
      if (t < 0 || t >= rows) continue;
      std::memcpy(&out[static_cast<std::size_t>(((b * rows + t) * cols) * eb)], &h[static_cast<std::size_t>(((b * from.rows + r) * from.ld) * eb)],
                  static_cast<std::size_t>(w * eb));
    }
  return upload(out);
}

void Scratch::copy_back(void* dst, const RowBlocks& to, const void* src, std::int64_t rows, std::int64_t front) {
  const RowBlocks s{to.blocks, rows, to.cols, to.cols, to.bytes};
  const std::vector<std::uint8_t> h = download(src, s);
  std::vector<std::uint8_t> d = download(dst, to);
  const int eb = to.bytes;
  for (std::int64_t b = 0; b < to.blocks; ++b)
    for (std::int64_t r = 0; r < to.rows; ++r)
      std::memcpy(&d[static_cast<std::size_t>(((b * to.rows + r) * to.ld) * eb)], &h[static_cast<std::size_t>(((b * rows + r + front) * to.cols) * eb)],
                  static_cast<std::size_t>(to.cols * eb));
  if (!d.empty()) api_.to_device(dst, d.data(), d.size());
}

void* Scratch::causal_mask(const void* mask, std::int64_t ldm, std::int64_t rows, std::int64_t cols, std::int64_t offset) {
  std::vector<std::uint8_t> m(static_cast<std::size_t>(rows * cols * 4), 0);
  if (mask) {
    const std::vector<std::uint8_t> h = download(mask, RowBlocks{1, rows, ldm, cols, 4});
    for (std::int64_t i = 0; i < rows; ++i) std::memcpy(&m[static_cast<std::size_t>(i * cols * 4)], &h[static_cast<std::size_t>(i * ldm * 4)], static_cast<std::size_t>(cols * 4));
  }
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = std::max<std::int64_t>(0, i + offset + 1); j < cols; ++j) store_code(m.data(), i * cols + j, 4, 0xff800000u);  // -Inf
  return upload(m);
}

void Scratch::scale(void* p, const RowBlocks& at, const Format& f, double factor) {
  std::vector<std::uint8_t> y = download(p, at);
  for (std::int64_t b = 0; b < at.blocks * at.rows; ++b)
    for (std::int64_t j = 0; j < at.cols; ++j) {
      const std::int64_t i = b * at.ld + j;
      const double x = factor == 0 ? 0.0 : to_double(f, from_container(f, load_code(y.data(), i, at.bytes))) * factor;
      store_code(y.data(), i, at.bytes, to_container(f, round_double(f, x, Rounder::nearest(f)).code));
    }
  if (!y.empty()) api_.to_device(p, y.data(), y.size());
}

}  // namespace fpcert
