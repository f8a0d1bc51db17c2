// tests/support/ozaki2_data.hpp — data that stresses the Ozaki-II emulation (docs/fp64.md): non-integer 53-bit values with
// exponents spread within every row and column, and cancelling rows; Philox-drawn, reproducible from the seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/philox.hpp"

namespace fpcert::test {

/// Uniform [0, 1) with 53 random bits from Philox (seed, stream).
struct Draw {
  std::uint64_t seed, ctr = 0;
  double operator()() {
    const auto w = philox_4x32(seed, 7, ctr++);
    return static_cast<double>((std::uint64_t{w[0]} << 21) ^ w[1]) * 0x1p-53;
  }
};

/// Non-integer 53-bit values 2^e (1 + f), e uniform in [-span/2, span/2] within every row and column, random signs;
/// every fourth row of A cancels: its second half is minus its first half plus 2^-30 relative noise, so those elements
/// are far smaller than sum |a b| (condition numbers ~1e9).
inline void wide_cancelling(std::int64_t m, std::int64_t n, std::int64_t k, int span, std::uint64_t seed, std::vector<double>& a,
                     std::vector<double>& b) {
  Draw d{seed};
  auto val = [&] {
    const int e = static_cast<int>(std::floor(d() * (span + 1))) - span / 2;
    const double v = std::ldexp(1 + d(), e);
    return d() < 0.5 ? -v : v;
  };
  a.resize(static_cast<std::size_t>(m * k));
  b.resize(static_cast<std::size_t>(k * n));
  for (double& v : a) v = val();
  for (double& v : b) v = val();
  for (std::int64_t i = 0; i < m; i += 4)
    for (std::int64_t q = k / 2; q < k; ++q) {
      const double src = a[static_cast<std::size_t>(i * k + q - k / 2)];
      a[static_cast<std::size_t>(i * k + q)] = -src * (1 + 0x1p-30 * (d() - 0.5));
      b[static_cast<std::size_t>(q * n)] = b[static_cast<std::size_t>((q - k / 2) * n)];  // column 0 pairs them up
    }
}

/// K = 2^17 + 1 operands whose every residue modulo 256 is -128 under 20 moduli (alpha = floor((155 - 1 - 18) / 2) = 68):
/// each line's first entry is +-1 (scaled to +-2^67), the others +-(2^-10 + 2^-60), scaled to +-(2^57 + 2^7) exactly,
/// which is 128 = -128 (mod 256) either sign. K - 1 products of +16,384 sum to 2^31, past int32: one accumulator
/// would wrap, K blocks below 2^17 do not. The operands scale exactly, so the result must be RN of the exact product.
inline constexpr std::int64_t kHeadroomK = (std::int64_t{1} << 17) + 1;
inline void headroom_operands(std::int64_t m, std::int64_t n, std::uint64_t seed, std::vector<double>& a, std::vector<double>& b) {
  Draw d{seed};
  auto entry = [&](std::int64_t q) { return (d() < 0.5 ? -1.0 : 1.0) * (q == 0 ? 1.0 : 0x1p-10 + 0x1p-60); };
  a.resize(static_cast<std::size_t>(m * kHeadroomK));
  b.resize(static_cast<std::size_t>(kHeadroomK * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < kHeadroomK; ++q) a[static_cast<std::size_t>(i * kHeadroomK + q)] = entry(q);
  for (std::int64_t q = 0; q < kHeadroomK; ++q)
    for (std::int64_t j = 0; j < n; ++j) b[static_cast<std::size_t>(q * n + j)] = entry(q);
}

}  // namespace fpcert::test
