// tests/support/problems.hpp — small hand-made problems for tests that must not depend on the
// generators (Philox uniform values rounded to a source format).
#pragma once

#include <cstdint>

#include "base/philox.hpp"
#include "generators/problem.hpp"
#include "oracle/round.hpp"

namespace fpcert::test {

/// m x k and k x n uniform [-1, 1) inputs rounded to `source` (fp32 values force fp16/bf16 rounding).
inline Problem uniform_problem(std::int64_t m, std::int64_t n, std::int64_t k, const Format& source, std::uint64_t seed) {
  Problem p;
  p.spec = "test-uniform";
  p.source = &source;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = Matrix(m, k);
  p.b = Matrix(k, n);
  std::uint64_t ctr = 0;
  auto next = [&] {
    const auto w = philox_4x32(seed, 0, ctr++);
    const double u = static_cast<double>((std::uint64_t{w[0]} << 21) ^ w[1]) * 0x1p-53;  // [0, 1)
    return quantize(source, 2 * u - 1);
  };
  for (auto& v : p.a.data) v = next();
  for (auto& v : p.b.data) v = next();
  return p;
}

}  // namespace fpcert::test
