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

}  // namespace fpcert::test
