// suites/mutation/row_blocks.hpp — buffers a fault made around a closed kernel hands it in place of the runner's (docs/mutation.md,
// "Faults made around a closed kernel"): tensors stored as blocks of rows with a padded row stride (attention's
// [batch][heads][len][dim]), copied with rows added in front or behind or dropped, outputs copied back, codes rescaled, on
// the wrapped kernel's memory (a DeviceApi: the host's, or a CUDA device's). Used by the attention and attention backward
// injectors (a causal mask off by one made by one padded query and key, the last key block dropped, a wrong saved O or LSE).
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/format.hpp"
#include "kernels/device/device_api.hpp"

namespace fpcert {

/// Where a tensor's codes lie: `blocks` blocks of `rows` rows, row r of block b at element (b rows + r) ld; `cols` codes a
/// row are read; `bytes` a code.
struct RowBlocks {
  std::int64_t blocks = 1, rows = 0, ld = 0, cols = 0;
  int bytes = 4;
  std::int64_t elements() const { return blocks * rows > 0 ? (blocks * rows - 1) * ld + cols : 0; }  ///< the span read
};

/// Buffers on `api` owned until the Scratch is destroyed (the wrapped call's duration).
class Scratch {
 public:
  explicit Scratch(DeviceApi& api) : api_(api) {}
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /// A buffer holding `host`'s bytes.
  void* upload(const std::vector<std::uint8_t>& host);
  /// The codes of `src` (layout `from`) as bytes on the host, `from.elements()` codes.
  std::vector<std::uint8_t> download(const void* src, const RowBlocks& from);
  /// A copy of `src` (layout `from`) re-laid as blocks of `rows` rows of `cols` codes (ld = cols): row r of a source block
  /// at row r + front of its block, columns c < min(from.cols, cols) copied; every other code 0 (+0 in the formats used).
  void* relaid(const void* src, const RowBlocks& from, std::int64_t rows, std::int64_t front, std::int64_t cols);
  /// Rows front .. front + to.rows - 1 of each block of `src` (blocks of `rows` rows, ld to.cols) into `dst` (layout `to`),
  /// the codes between the rows of `dst` left as they are.
  void copy_back(void* dst, const RowBlocks& to, const void* src, std::int64_t rows, std::int64_t front);
  /// An additive fp32 mask of rows x cols (ld = cols): `mask` (fp32 codes, ld `ldm`; null: 0) plus -Inf where column j >
  /// row i + offset (a causal mask with its diagonal moved by `offset`), read over rows x cols.
  void* causal_mask(const void* mask, std::int64_t ldm, std::int64_t rows, std::int64_t cols, std::int64_t offset);
  /// Every code of `p` (layout `at`, format `f`) multiplied by `factor` and rounded to nearest into `f` (factor 0: +0).
  void scale(void* p, const RowBlocks& at, const Format& f, double factor);

 private:
  DeviceApi& api_;
  std::vector<void*> bufs_;
};

}  // namespace fpcert
