// tests/support/attention_codes.hpp — the inputs of the attention kernels' host emulation and property tests
// (attention_cuda_emulation_test.cpp, attention_bwd_cuda_emulation_test.cpp, attention_bwd_gpu_test.cpp): f16/bf16 codes
// of exact small values, with NaN codes in the row padding, and an additive mask with -Inf entries and a fully masked row.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/philox.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

namespace fpcert::test {

/// `rows` rows of d codes in a row stride ld, the padding 0xFFFF (a NaN in f16 and bf16, so a stray read poisons the
/// result): exact values r / 2^8, |r| <= 512, for f16; r / 2^6, |r| <= 127, for bf16 (products and 16-term block sums
/// exact in double), from Philox stream `stream` at counter ctr (advanced).
inline std::vector<std::uint16_t> attention_test_codes(bool bf, int d, std::int64_t rows, std::int64_t ld, std::uint64_t stream, std::uint64_t& ctr) {
  const Format& f = bf ? bf16 : f16;
  std::vector<std::uint16_t> x(static_cast<std::size_t>(rows * ld), 0xFFFF);
  for (std::int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < d; ++c) {
      const auto w = philox_4x32(seed(), stream, ctr++);
      const double val = bf ? std::ldexp(static_cast<double>(static_cast<std::int64_t>(w[0] % 255) - 127), -6)
                            : std::ldexp(static_cast<double>(static_cast<std::int64_t>(w[0] % 1025) - 512), -8);
      x[static_cast<std::size_t>(r * ld + c)] = static_cast<std::uint16_t>(round_double(f, val, Rounder::nearest(f)).code);
    }
  return x;
}

/// An additive lq x lk mask: values k / 16, |k| <= 32, and -Inf for one entry in 8 and for all of row 3 (a fully masked row).
inline std::vector<float> attention_test_mask(std::int64_t lq, std::int64_t lk, std::uint64_t stream) {
  std::vector<float> m(static_cast<std::size_t>(lq * lk));
  for (std::int64_t e = 0; e < lq * lk; ++e) {
    const auto w = philox_4x32(seed(), stream, static_cast<std::uint64_t>(e));
    m[static_cast<std::size_t>(e)] = e / lk == 3 || w[1] % 8 == 0 ? -INFINITY : static_cast<float>(static_cast<int>(w[0] % 65) - 32) / 16.0f;
  }
  return m;
}

}  // namespace fpcert::test
