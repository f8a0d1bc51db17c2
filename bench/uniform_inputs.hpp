// bench/uniform_inputs.hpp — the oracle benchmarks' inputs (bench/oracle_gemm*.cpp): fp32 values uniform in [-1, 1)
// or standard normal, as doubles, from Philox (the same bits on every machine).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/philox.hpp"

namespace fpcert::bench {

inline std::vector<double> uniform_f32(std::int64_t n, std::uint64_t stream) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto w = philox_4x32(2024, stream, static_cast<std::uint64_t>(i));
    v[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(static_cast<std::int32_t>(w[0])) * 0x1p-31);
  }
  return v;
}

/// Standard normal values rounded to fp32 (Box-Muller): entries near zero carry bits far below their row's largest,
/// outside the exact GEMM's slice window (docs/oracle.md, "Where the fast path falls back").
inline std::vector<double> normal_f32(std::int64_t n, std::uint64_t stream) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto w = philox_4x32(2025, stream, static_cast<std::uint64_t>(i));
    const double u1 = (static_cast<double>(w[0]) + 1) * 0x1p-32, u2 = static_cast<double>(w[1]) * 0x1p-32;
    v[static_cast<std::size_t>(i)] = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  return v;
}

}  // namespace fpcert::bench
