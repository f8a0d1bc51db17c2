// tests/support/problems.hpp — small hand-made problems for tests that must not depend on the
// generators (Philox uniform values rounded to a source format).
#pragma once

#include <cstdint>
#include <vector>

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

/// m x k and k x n nonzero integers in [-4, 4] (exact in every input format, e5m2 included; products in [-16, 16]).
/// With K <= 256 every partial sum is an integer of magnitude <= 2^12, exact in fp32 and in a 13-fraction-bit
/// accumulator, and no alignment inside an MMA can drop a bit of it: any summation order gives the exact integer
/// GEMM bit for bit, so a misplaced element, a wrong fragment map or a stale stage shows as a wrong integer. Nonzero,
/// so that a 1 x 1 x 1 product is never 0 and the test can fail.
inline Problem integer_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
  Problem p;
  p.spec = "test-nonzero-integers[-4,4]";
  p.source = &f32;
  p.m = m, p.n = n, p.k = k;
  p.a = Matrix(m, k);
  p.b = Matrix(k, n);
  std::uint64_t ctr = 0;
  for (auto* v : {&p.a.data, &p.b.data})
    for (double& x : *v) {
      const int r = static_cast<int>(philox_4x32(seed, 7, ctr++)[0] % 8);  // 0..7
      x = static_cast<double>(r < 4 ? r - 4 : r - 3);                    // -4..-1, 1..4
    }
  return p;
}

/// C = X I (x_left) or I X for the n x n matrix X (row-major values): every output is one exact product, so C shows
/// the operand as the tensor core read it (a kernel's operand conversion, checked against the oracle's rounding).
inline Problem identity_product_problem(const std::vector<double>& x, std::int64_t n, bool x_left, const char* spec) {
  Problem p;
  p.spec = spec;
  p.source = &f32;
  p.m = p.n = p.k = n;
  p.a = Matrix(n, n);
  p.b = Matrix(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      (x_left ? p.a : p.b)(i, j) = x[static_cast<std::size_t>(i * n + j)];
      (x_left ? p.b : p.a)(i, j) = i == j ? 1.0 : 0.0;
    }
  return p;
}

}  // namespace fpcert::test
