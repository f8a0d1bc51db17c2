// tests/generators/rng_test.cpp — the variates' exact constructions and their distributions (Philox
// itself: tests/base/philox_test.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "generators/rng.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

TEST_CASE("draw_words: stream id and attempt sit in the counter's high half") {
  const Stream s{0x0123456789abcdefULL, 0x2A1};
  const auto a = draw_words(s, 77, 3);
  const auto b = philox_4x32(0x0123456789abcdefULL, (std::uint64_t{0x2A1} << 32) | 3, 77);
  CHECK(a == b);
}

TEST_CASE("u53: exact multiples of 2^-53 in 0..1") {
  CHECK(u53(0, 0) == 0.0);
  CHECK(u53(0xffffffffu, 0xffffffffu) == 1.0 - 0x1p-53);
  CHECK(u53(0, 0x80000000u) == 0.5);
  CHECK(u53(0x800u, 0) == 0x1p-53);  // bit 11 is the lowest bit kept
  CHECK(u53(0x7ffu, 0) == 0.0);      // bits 0-10 are dropped
}

TEST_CASE("uniform_below: range and rough uniformity (chi-square)") {
  const Stream s{test::seed(), 5};
  const std::uint64_t n = 10, N = 100000;
  std::vector<double> count(n, 0);
  for (std::uint64_t i = 0; i < N; ++i) {
    const auto v = uniform_below(s, i, n);
    REQUIRE(v < n);
    count[v] += 1;
  }
  double chi2 = 0;
  for (double c : count) chi2 += (c - N / 10.0) * (c - N / 10.0) / (N / 10.0);
  // 9 degrees of freedom: P(chi2 > 33.7) = 1e-4.
  CHECK(chi2 < 33.7);
}

TEST_CASE("normal: Marsaglia polar variates have mean 0 - variance 1 - and normal tail fractions") {
  const Stream s{test::seed(), 9};
  const std::uint64_t N = 200000;
  double sum = 0, sum2 = 0, within1 = 0, beyond3 = 0;
  for (std::uint64_t i = 0; i < N; ++i) {
    const double z = normal(s, i);
    REQUIRE(std::isfinite(z));
    sum += z;
    sum2 += z * z;
    within1 += std::fabs(z) < 1;
    beyond3 += std::fabs(z) > 3;
  }
  const double mean = sum / N, var = sum2 / N - mean * mean;
  // 5-sigma tolerances: sd(mean) = 1/sqrt(N), sd(var) = sqrt(2/N), sd(fraction) = sqrt(p(1-p)/N).
  CHECK(std::fabs(mean) < 5 / std::sqrt(double(N)));
  CHECK(std::fabs(var - 1) < 5 * std::sqrt(2.0 / N));
  const double p1 = 0.6826894921370859, p3 = 0.0026997960632601866;  // P(|Z| < 1), P(|Z| > 3)
  CHECK(std::fabs(within1 / N - p1) < 5 * std::sqrt(p1 * (1 - p1) / N));
  CHECK(std::fabs(beyond3 / N - p3) < 5 * std::sqrt(p3 * (1 - p3) / N));
}

TEST_CASE("normal: each element reads only its own counter (order and threading cannot matter)") {
  const Stream s{test::seed(), 11};
  std::vector<double> fwd(1000), bwd(1000);
  for (std::uint64_t i = 0; i < 1000; ++i) fwd[i] = normal(s, i);
  for (std::uint64_t i = 1000; i-- > 0;) bwd[i] = normal(s, i);
  CHECK(fwd == bwd);
  // The value is u sqrt(-2 ln q / q) of the first accepted attempt: recompute element 0 by hand.
  for (std::uint32_t a = 0;; ++a) {
    const auto w = philox_4x32(s.key, (std::uint64_t{11} << 32) | a, 0);
    const double u = 2 * u53(w[0], w[1]) - 1, v = 2 * u53(w[2], w[3]) - 1, q = u * u + v * v;
    if (q > 0 && q < 1) {
      CHECK(fwd[0] == u * std::sqrt(-2.0 * det_log(q) / q));
      break;
    }
  }
}
