// tests/oracle/norm/norm_ref_test.cpp — the LayerNorm / RMSNorm reference (oracle/norm/norm_ref.hpp): 10^6 elements of
// random rows (uniform, mean >> spread, near-constant, tiny and huge values; LayerNorm and RMSNorm; with and without
// gamma and beta; f32, f16 and bf16 results) equal the textbook formula evaluated with MPFR at 200 bits and rounded once
// (norm_mpfr_row, which shares no code with the reference but MPFR), code for code; special values and exact cases by
// hand. The seed is printed and read back from FPCERT_TEST_SEED to reproduce.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/norm/norm_ref.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t seed_from_env() {
  const char* s = std::getenv("FPCERT_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261204;
}

using test::mix;
using test::unit;

/// Row r: fp32 values of one of five kinds.
std::vector<double> random_row(std::uint64_t seed, std::uint64_t r, std::size_t n) {
  std::vector<double> x(n);
  const std::uint64_t kind = r % 5;
  for (std::size_t j = 0; j < n; ++j) {
    const double u = unit(seed, r * 100003 + j);
    double v = 2 * u - 0.5;                          // uniform
    if (kind == 1) v = 1e4 + 4 * (u - 0.5);          // mean >> spread
    if (kind == 2) v = j % 7 == 0 ? 3 + 1e-6 * u : 3; // nearly constant: var << eps
    if (kind == 3) v = 1e-30 * (u - 0.5);            // tiny
    if (kind == 4) v = 1e17 * (u - 0.5);             // large
    x[j] = static_cast<float>(v);
  }
  return x;
}

}  // namespace

TEST_CASE("norm reference: 10^6 elements equal MPFR at 200 bits rounded once") {
  const std::uint64_t seed = seed_from_env();
  std::printf("norm_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  const Format* outs[] = {&f32, &f16, &bf16};
  const std::size_t lengths[] = {1, 2, 7, 33, 256, 1000, 4097};
  const std::uint64_t rows = 1400;  // about 1.07 10^6 elements
  std::atomic<std::int64_t> elements{0}, differ{0}, mpfr{0};
  parallel_for(rows, 4, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    for (std::uint64_t r = b; r < e; ++r) {
      const std::size_t n = lengths[r % 7];
      const NormKind kind = (r / 7) % 2 ? NormKind::RmsNorm : NormKind::LayerNorm;
      const Format& out = *outs[(r / 14) % 3];
      const int affine = static_cast<int>((r / 42) % 3);  // 0 none, 1 gamma, 2 both
      const double eps = (r / 126) % 2 ? 1e-5f : 0x1p-20;
      const std::vector<double> x = random_row(seed, r, n);
      std::vector<double> g(n), bt(n);
      for (std::size_t j = 0; j < n; ++j) {
        g[j] = static_cast<float>(0.5 + unit(seed, r * 31 + j * 7 + 1));
        bt[j] = static_cast<float>(2 * unit(seed, r * 37 + j * 11 + 2) - 1);
      }
      std::vector<std::uint64_t> got(n), want(n);
      NormRefStats st;
      norm_reference_row(kind, x.data(), n, affine ? g.data() : nullptr, affine == 2 ? bt.data() : nullptr, eps, out, got.data(), nullptr, &st);
      norm_mpfr_row(kind, x.data(), n, affine ? g.data() : nullptr, affine == 2 ? bt.data() : nullptr, eps, out, 200, want.data());
      std::int64_t d = 0;
      for (std::size_t j = 0; j < n; ++j) d += got[j] != want[j];
      if (d) std::printf("row %llu (n %zu, %s, out %s): %lld difference(s)\n", static_cast<unsigned long long>(r), n,
                         std::string(to_string(kind)).c_str(), std::string(out.tag).c_str(), static_cast<long long>(d));
      differ += d;
      elements += static_cast<std::int64_t>(n);
      mpfr += st.mpfr;
      CHECK(st.unsettled == 0);
    }
  });
  std::printf("norm_ref_test: %lld elements, %lld differences, %lld through Ziv's MPFR loop\n", static_cast<long long>(elements.load()),
              static_cast<long long>(differ.load()), static_cast<long long>(mpfr.load()));
  CHECK(elements.load() >= 1000000);
  CHECK(differ.load() == 0);
}

TEST_CASE("norm reference: exact cases and special values by hand") {
  // x = 1, 2, 3, 4, eps = 0: mean 5/2, var 5/4, y_0 = -3/2 / sqrt(5/4) = -3/sqrt(5) = -1.3416407864998738...; the double
  // evaluation below is within 2^-52 relative, and -3/sqrt(5) is 0x1.5775...p0 in f32, far from a rounding boundary
  // (checked: the f32 neighbours differ in the 24th bit, the double value's bits 25..52 are not 1000...0).
  const double x[] = {1, 2, 3, 4};
  std::uint64_t c[4];
  double v[4];
  norm_reference_row(NormKind::LayerNorm, x, 4, nullptr, nullptr, 0.0, f32, c, v);
  CHECK(to_double(f32, c[0]) == static_cast<double>(static_cast<float>(-3 / std::sqrt(5.0))));
  CHECK(to_double(f32, c[3]) == static_cast<double>(static_cast<float>(3 / std::sqrt(5.0))));
  // y_1 = -1/2 / sqrt(5/4) = -1/sqrt(5).
  CHECK(to_double(f32, c[1]) == static_cast<double>(static_cast<float>(-1 / std::sqrt(5.0))));
  // RMSNorm of 3, 4 (Q/n = 25/2), eps = 0: y = 3 / sqrt(12.5) = 3 sqrt(2) / 5.
  const double r2[] = {3, 4};
  norm_reference_row(NormKind::RmsNorm, r2, 2, nullptr, nullptr, 0.0, f32, c, v);
  CHECK(to_double(f32, c[0]) == static_cast<double>(static_cast<float>(3 * std::sqrt(2.0) / 5)));
  // A constant row: N = 0, y = beta exactly whatever eps > 0; with eps = 0: 0/0, NaN.
  const double k[] = {3, 3, 3};
  const double b[] = {0.25, -1, 0.1f};
  norm_reference_row(NormKind::LayerNorm, k, 3, nullptr, b, 1e-5, f32, c, v);
  for (int j = 0; j < 3; ++j) CHECK(to_double(f32, c[j]) == b[j]);
  norm_reference_row(NormKind::LayerNorm, k, 3, nullptr, b, 0.0, f32, c, v);
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(to_double(f32, c[j])));
  // An Inf: LayerNorm row NaN (Inf - Inf in the variance); RMSNorm: beta where x is finite, NaN at the Inf.
  const double w[] = {1, kInf, 2};
  norm_reference_row(NormKind::LayerNorm, w, 3, nullptr, b, 1e-5, f32, c, v);
  for (int j = 0; j < 3; ++j) CHECK(std::isnan(to_double(f32, c[j])));
  norm_reference_row(NormKind::RmsNorm, w, 3, nullptr, b, 1e-5, f32, c, v);
  CHECK(to_double(f32, c[0]) == b[0]);
  CHECK(std::isnan(to_double(f32, c[1])));
  CHECK(to_double(f32, c[2]) == b[2]);
  // x = 0, 2 and eps = 0: S = 2, Q = 4, N_0 = 2*0 - 2 = -2, D = 2*4 - 2^2 = 4, y = -2/sqrt(4) = -1 and +1 exactly.
  const double e2[] = {0, 2};
  norm_reference_row(NormKind::LayerNorm, e2, 2, nullptr, nullptr, 0.0, f16, c, v);
  CHECK(to_double(f16, c[0]) == -1.0);
  CHECK(to_double(f16, c[1]) == 1.0);
}

}  // namespace fpcert
