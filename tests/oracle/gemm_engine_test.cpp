// tests/oracle/gemm_engine_test.cpp — the slice-GEMM engine hook of the fast exact GEMM (oracle/gemm_engine.hpp), proved
// on the CPU: an engine that sums every element in its own order (permuted k, FMA or not at random, random chunking;
// per tile and per panel) gives references bit-identical to the built-in Eigen engine and to MPFR (hi, lo, tail,
// status), abs_sum inside its documented bound; an engine that rounds partial sums to float is caught, by the
// comparison and by the oracle's own sample check. The certify suite's inputs: tests/suites/exact_gemm_engine_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "oracle/format.hpp"
#include "oracle/gemm_engine.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/adversarial_gemm_engine.hpp"
#include "tests/support/same_reference.hpp"
#include "tests/support/splitmix.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// What the entries of a random problem are.
enum class Values { F32Uniform, F32Wide, F64Wide, Bf16, F16, E4m3, Specials, Count };
const char* kValueNames[] = {"f32 uniform", "f32 exponents in [-60, 60] (fallbacks)", "f64 exponents in [-300, 300]",
                             "bf16 codes", "f16 codes", "e4m3 codes", "f32 with NaN, Inf, signed zeros"};

double value(Values v, std::uint64_t seed, std::uint64_t i) {
  const double u = 2 * test::unit(seed, 2 * i) - 1, w = test::unit(seed, 2 * i + 1);
  switch (v) {
    case Values::F32Uniform: return static_cast<float>(u);
    case Values::F32Wide: return static_cast<float>(std::ldexp(u, static_cast<int>(w * 121) - 60));
    case Values::F64Wide: return std::ldexp(u, static_cast<int>(w * 601) - 300);
    case Values::Bf16: return quantize(bf16, std::ldexp(u, static_cast<int>(w * 40) - 20));
    case Values::F16: return quantize(f16, std::ldexp(u, static_cast<int>(w * 20) - 10));
    case Values::E4m3: return quantize(e4m3, std::ldexp(u, static_cast<int>(w * 8) - 4));
    default: {  // 1 in 3000 NaN, 1 in 1500 +-Inf, 1 in 8 a signed zero, else fp32 uniform
      const auto r = static_cast<std::uint64_t>(w * 3000);
      if (r == 0) return std::numeric_limits<double>::quiet_NaN();
      if (r <= 2) return u < 0 ? -INFINITY : INFINITY;
      if (r % 8 == 3) return u < 0 ? -0.0 : 0.0;
      return static_cast<float>(u);
    }
  }
}

struct Case {
  std::int64_t m, n, k;
  Values v;
  std::vector<double> a, b;  // a row-major m x k, b column-major k x n
  MatrixView av() const { return MatrixView::row_major(a.data(), m, k); }
  MatrixView bv() const { return MatrixView::col_major(b.data(), k, n); }
};

Case make_case(std::uint64_t seed, std::int64_t m, std::int64_t n, std::int64_t k, Values v) {
  Case c{m, n, k, v, std::vector<double>(static_cast<std::size_t>(m * k)), std::vector<double>(static_cast<std::size_t>(k * n))};
  for (std::size_t i = 0; i < c.a.size(); ++i) c.a[i] = value(v, seed, i);
  for (std::size_t i = 0; i < c.b.size(); ++i) c.b[i] = value(v, seed ^ 0x5bd1e995ULL, i);
  return c;
}

/// What a case exercised: the paths of the built-in engine, and whether the adversarial engine's abs_sum (the one
/// GEMM that rounds) came out different, which shows its order really differs.
struct Seen {
  std::int64_t fallbacks = 0, exact_elements = 0, kblock = 0, abs_differs = 0;
};

/// The case through the built-in engine, the adversarial one per tile and per panel of a few rows, and MPFR.
Seen check_engines(const Case& c, std::uint64_t seed) {
  Seen seen;
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  INFO(kValueNames[static_cast<int>(c.v)], " (FPCERT_TEST_SEED=", test::seed(), ")");
  const GemmRef def = gemm_reference(c.av(), c.bv());
  CHECK(std::string(def.info.engine) == "cpu-eigen");
  CHECK(def.info.sample_checked == 0);
  const GemmRef truth = gemm_reference_mpfr(c.av(), c.bv());
  const test::RefDiff d0 = test::diff_values(def, truth, true);
  INFO("built-in vs MPFR: ", d0.first);
  CHECK(d0.count == 0);
  for (const bool per_tile : {true, false}) {
    // Per panel: results of (G + 1) x 3 rows x N doubles at most, so most problems take several panels.
    const std::size_t panel = static_cast<std::size_t>(def.info.gemms) * 3 * static_cast<std::size_t>(c.n) * 8;
    test::AdversarialGemmEngine adv(seed, per_tile, panel);
    GemmRefOptions o;
    o.engine = &adv;
    const GemmRef x = gemm_reference(c.av(), c.bv(), o);
    CAPTURE(per_tile);
    CHECK(std::string(x.info.engine) == "test-adversarial");
    CHECK(x.info.sample_checked == static_cast<std::int64_t>(sample_elements(c.m, c.n, c.k).size()));
    const test::RefDiff d1 = test::diff_values(x, def, false);
    INFO("adversarial vs built-in: ", d1.first);
    CHECK(d1.count == 0);
    const test::RefDiff d2 = test::diff_values(x, truth, true);
    INFO("adversarial vs MPFR: ", d2.first);
    CHECK(d2.count == 0);
    const test::RefDiff d3 = test::diff_abs_sum(x, truth, c.av(), c.bv());
    INFO("abs_sum: ", d3.first);
    CHECK(d3.count == 0);
    CHECK(x.fallbacks == def.fallbacks);
    for (std::size_t e = 0; e < x.abs_sum.size(); ++e) seen.abs_differs += !test::same_double(x.abs_sum[e], def.abs_sum[e]);
  }
  seen.fallbacks = def.fallbacks;
  seen.exact_elements = def.info.exact_elements;
  seen.kblock = def.info.kblock;
  return seen;
}

}  // namespace

TEST_CASE("exact GEMM engines: any summation order gives the built-in engine's and MPFR's reference bit for bit") {
  const std::uint64_t seed = test::seed() + 39;
  // Hand-picked: several K blocks (K = 4500 > 2048), one element, K = 1, and every kind of value.
  const Seen blocks = check_engines(make_case(seed, 13, 11, 4500, Values::F32Uniform), seed);
  CHECK(blocks.kblock < 4500 / 2);  // three K blocks or more
  CHECK(blocks.abs_differs > 0);    // the adversarial order rounded |A||B| differently: the orders differ
  const Seen wide = check_engines(make_case(seed + 1, 9, 7, 4500, Values::F32Wide), seed);
  CHECK(wide.fallbacks > 0);  // entries outside the slice window: per-element corrections
  check_engines(make_case(seed + 2, 1, 1, 1, Values::F32Uniform), seed);
  check_engines(make_case(seed + 3, 33, 2, 1, Values::Specials), seed);
  for (int v = 0; v < static_cast<int>(Values::Count); ++v) {
    const Seen s = check_engines(make_case(seed + 10 + static_cast<std::uint64_t>(v), 21, 19, 700, static_cast<Values>(v)), seed);
    if (static_cast<Values>(v) == Values::F64Wide) CHECK(s.exact_elements > 0);  // three slices or more: ExactSum
  }
  // Random shapes: M, N in 1..300, K in 1..5000, M and N cut until M N K <= 2^21 (MPFR's time).
  for (std::uint64_t r = 0; r < 8; ++r) {
    const std::uint64_t h = test::mix(seed ^ (r + 1) * 0x9e37ULL);
    std::int64_t m = 1 + static_cast<std::int64_t>(h % 300), n = 1 + static_cast<std::int64_t>((h >> 16) % 300);
    const std::int64_t k = 1 + static_cast<std::int64_t>((h >> 32) % 5000);
    while (m * n * k > (std::int64_t{1} << 21)) (m >= n ? m : n) = std::max<std::int64_t>(1, (m >= n ? m : n) / 2);
    check_engines(make_case(seed + 100 + r, m, n, k, static_cast<Values>(r % static_cast<std::uint64_t>(Values::Count))), seed);
  }
}

TEST_CASE("exact GEMM engines: partial sums rounded to float are caught by the comparison and by the sample check") {
  // Entries uniform in [-1, 1) fp32: two slices of 20 bits, slice products near 2^40, so a float sum rounds at once.
  const Case c = make_case(test::seed() + 40, 20, 24, 300, Values::F32Uniform);
  const GemmRef def = gemm_reference(c.av(), c.bv());
  test::FloatGemmEngine unchecked(false);
  GemmRefOptions o;
  o.engine = &unchecked;
  const GemmRef bad = gemm_reference(c.av(), c.bv(), o);
  CHECK(bad.info.sample_checked == 0);
  const test::RefDiff d = test::diff_values(bad, def, false);
  CHECK(d.count > c.m * c.n / 2);  // nearly every element differs (the comparison can fail)
  test::FloatGemmEngine checked(true);
  o.engine = &checked;
  CHECK_THROWS_AS(gemm_reference(c.av(), c.bv(), o), DeviceError);
  try {
    gemm_reference(c.av(), c.bv(), o);
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("test-float") != std::string::npos);
    CHECK(what.find("exact_dot") != std::string::npos);
  }
}

TEST_CASE("exact GEMM engines: the process default, and the sample a check compares") {
  const Case c = make_case(test::seed() + 41, 7, 5, 90, Values::F32Uniform);
  auto adv = std::make_shared<test::AdversarialGemmEngine>(test::seed(), false);
  set_default_gemm_engine(adv);
  const GemmRef x = gemm_reference(c.av(), c.bv());
  set_default_gemm_engine(nullptr);
  const GemmRef y = gemm_reference(c.av(), c.bv());
  CHECK(std::string(x.info.engine) == "test-adversarial");
  CHECK(x.info.sample_checked == 35);  // 7 x 5 x 90 products <= 2^22: every element
  CHECK(std::string(y.info.engine) == "cpu-eigen");
  CHECK(test::diff_values(x, y, false).count == 0);
  // A large product: 64 elements, the four corners among them, the same for the same shape.
  const auto s = sample_elements(4096, 4096, 4096);
  CHECK(s.size() == 64);
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
  for (std::int64_t corner : {std::int64_t{0}, std::int64_t{4095}, std::int64_t{4095} * 4096, std::int64_t{4096} * 4096 - 1})
    CHECK(std::find(s.begin(), s.end(), corner) != s.end());
  CHECK(s == sample_elements(4096, 4096, 4096));
  CHECK(sample_elements(3, 1, 1 << 30).size() == 3);
}
