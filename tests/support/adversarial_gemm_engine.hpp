// tests/support/adversarial_gemm_engine.hpp — slice-GEMM engines for the oracle's engine tests (oracle/gemm_engine.hpp):
// an adversarial one that sums every element in its own order (docs/oracle.md, "On the GPU": any order must give the
// same integers), and a wrong one that rounds partial sums to float (the negative control: the tests must catch it).
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "oracle/gemm_engine.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert::test {

/// Element (g, i, j) of a K block summed in an order of its own: the k of each element permuted (one of 16 random
/// permutations of the block, chosen per element, read forwards or backwards), in chunks of a random size (1, 3, 64,
/// 251 or the whole block) added into the total, each step an FMA or a multiply then add, at random. Per tile (from the
/// oracle's threads: it is stateless after construction) or per panel of `panel_bytes` (a small budget forces many
/// panels, the path a GPU engine takes).
class AdversarialGemmEngine final : public ExactGemmEngine {
 public:
  AdversarialGemmEngine(std::uint64_t seed, bool per_tile, std::size_t panel_bytes = std::size_t{1} << 31)
      : seed_(seed), per_tile_(per_tile), panel_bytes_(panel_bytes) {}
  const char* name() const override { return "test-adversarial"; }
  bool per_tile() const override { return per_tile_; }
  std::size_t panel_bytes() const override { return panel_bytes_; }
  void begin_block(const SliceBlock& ops) override {
    ++block_;
    perms_.assign(16, std::vector<std::int64_t>(static_cast<std::size_t>(ops.k)));
    for (std::size_t p = 0; p < perms_.size(); ++p) {
      auto& v = perms_[p];
      std::iota(v.begin(), v.end(), std::int64_t{0});
      for (std::size_t t = v.size(); t > 1; --t)  // Fisher-Yates
        std::swap(v[t - 1], v[static_cast<std::size_t>(mix(seed_ ^ mix(block_ * 977 + p * 131 + t)) % t)]);
    }
  }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    static constexpr std::int64_t kChunks[] = {1, 3, 64, 251, 0};
    const std::int64_t K = ops.k;
    for (int g = 0; g < ops.count; ++g)
      for (std::int64_t ii = 0; ii < tm; ++ii)
        for (std::int64_t jj = 0; jj < tn; ++jj) {
          const std::int64_t i = i0 + ii, j = j0 + jj;
          std::uint64_t r = mix(seed_ ^ mix((block_ << 40) ^ (static_cast<std::uint64_t>(g) << 56) ^
                                            (static_cast<std::uint64_t>(i) << 20) ^ static_cast<std::uint64_t>(j)));
          const auto& perm = perms_[r % perms_.size()];
          const bool backwards = (r >> 8) & 1;
          std::int64_t chunk = kChunks[(r >> 9) % 5];
          if (chunk == 0) chunk = K;
          const double* a = ops.a[g] + i * K;
          const double* b = ops.b[g] + j * K;
          double total = 0, part = 0;
          std::uint64_t coin = mix(r);
          for (std::int64_t t = 0; t < K; ++t) {
            const std::int64_t k = perm[static_cast<std::size_t>(backwards ? K - 1 - t : t)];
            if ((t & 63) == 0) coin = mix(coin);
            part = ((coin >> (t & 63)) & 1) ? std::fma(a[k], b[k], part) : part + a[k] * b[k];
            if ((t + 1) % chunk == 0 || t + 1 == K) {
              total += part;
              part = 0;
            }
          }
          out[(g * tm + ii) * tn + jj] = total;
        }
  }

 private:
  std::uint64_t seed_;
  bool per_tile_;
  std::size_t panel_bytes_;
  std::uint64_t block_ = 0;
  std::vector<std::vector<std::int64_t>> perms_;
};

/// The negative control: every slice GEMM summed in float (partial sums above 2^24 round), as an engine with a narrow
/// accumulator would. `checked`: whether the oracle's sample check sees it (false: only the test's own comparison).
class FloatGemmEngine final : public ExactGemmEngine {
 public:
  explicit FloatGemmEngine(bool checked) : checked_(checked) {}
  const char* name() const override { return "test-float"; }
  bool per_tile() const override { return true; }
  bool sample_checked() const override { return checked_; }
  void multiply(const SliceBlock& ops, std::int64_t i0, std::int64_t tm, std::int64_t j0, std::int64_t tn,
                double* out) override {
    for (int g = 0; g < ops.count; ++g)
      for (std::int64_t ii = 0; ii < tm; ++ii)
        for (std::int64_t jj = 0; jj < tn; ++jj) {
          float s = 0;
          for (std::int64_t k = 0; k < ops.k; ++k)
            s += static_cast<float>(ops.a[g][(i0 + ii) * ops.k + k] * ops.b[g][(j0 + jj) * ops.k + k]);
          out[(g * tm + ii) * tn + jj] = s;
        }
  }

 private:
  bool checked_;
};

}  // namespace fpcert::test
