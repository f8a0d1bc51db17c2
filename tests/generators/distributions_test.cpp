// tests/generators/distributions_test.cpp — uniform, normal, Ozaki's phi family, scaled integers,
// accumulator probes, and what generate() measures for every problem.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "base/philox.hpp"
#include "generators/family.hpp"
#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {
std::string seed_field() { return ",seed=" + std::to_string(test::seed()); }
}  // namespace

TEST_CASE("uniform: values in lo..hi - mean near the middle") {
  const Problem p = generate("uniform:m=64,n=64,k=64,lo=-3,hi=5" + seed_field());
  double sum = 0;
  for (double v : p.a.data) {
    REQUIRE(v >= -3);
    REQUIRE(v <= 5);
    sum += v;
  }
  // mean 1, sd of the mean (8 / sqrt(12)) / sqrt(4096) = 0.036; 5 sigma
  CHECK(std::fabs(sum / 4096 - 1) < 0.18);
}

TEST_CASE("normal: mean and std of the entries") {
  const Problem p = generate("normal:m=128,n=128,k=128,mean=2,std=3" + seed_field());
  double s = 0, s2 = 0;
  for (double v : p.a.data) s += v, s2 += v * v;
  const double N = static_cast<double>(p.a.data.size()), mean = s / N, sd = std::sqrt(s2 / N - mean * mean);
  CHECK(std::fabs(mean - 2) < 5 * 3 / std::sqrt(N));
  CHECK(std::fabs(sd - 3) < 5 * 3 / std::sqrt(2 * N));
}

TEST_CASE("ozaki: phi = 0 is uniform -0.5..0.5 - larger phi spreads the exponents") {
  const Problem p0 = generate("ozaki:m=64,n=64,k=64,phi=0" + seed_field());
  for (double v : p0.a.data) {
    REQUIRE(v >= -0.5);
    REQUIRE(v < 0.5);
  }
  double prev = 0;
  for (const char* phi : {"0.5", "1", "2", "4"}) {
    const Problem p = generate(std::string("ozaki:m=64,n=64,k=64,phi=") + phi + seed_field());
    // the spread of log2|a|: the exponent's standard deviation grows with phi (phi / ln 2 for
    // the exp(phi N) factor alone)
    double s = 0, s2 = 0;
    for (double v : p.a.data) {
      const double l = std::log2(std::fabs(v));
      s += l;
      s2 += l * l;
    }
    const double sd = std::sqrt(s2 / 4096 - (s / 4096) * (s / 4096));
    CHECK(sd > prev);
    prev = sd;
  }
  CHECK(prev > 4 / std::log(2.0) * 0.9);  // phi = 4: sd of log2 >= 0.9 * 5.77
}

TEST_CASE("scaled_int: every entry is RN(j c) for a nonzero integer |j| <= imax - conversions round") {
  const Problem p = generate("scaled_int:m=32,n=32,k=32,imax=16" + seed_field());
  for (int op = 0; op < 2; ++op) {
    const double c = op == 0 ? 0.013 : 0.017;
    for (double v : (op == 0 ? p.a : p.b).data) {
      const double j = std::nearbyint(v / c);
      REQUIRE(j != 0);
      REQUIRE(std::fabs(j) <= 16);
      REQUIRE(v == static_cast<double>(static_cast<float>(j * c)));  // one double rounding, then RN to f32
    }
  }
  // 0.013 j and 0.017 j are not dyadic: no entry is exactly an f16, bf16 or fp8 value
  for (const char* f : {"f16", "bf16", "e4m3", "e5m2", "tf32"}) CHECK(p.not_representable.at(f) == 1.0);
}

TEST_CASE("probe: all ones sum to k - an fp16 running sum stalls at 2048") {
  const Problem p = generate("probe:m=2,n=3,k=4096,kind=ones");
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data) REQUIRE(v == 1.0);
  // the exact C is k; recursive summation in fp16 (each partial sum rounded to nearest even)
  const DotRef d = exact_dot(p.a.data.data(), p.b.data.data(), 4096, 1, 3);
  CHECK(d.value.hi == 4096);
  double s = 0;
  for (int l = 0; l < 4096; ++l) s = quantize(f16, s + p.a(0, l) * p.b(l, 0));
  CHECK(s == 2048);  // 2048 + 1 = 2049 is a tie between 2048 and 2050: even is 2048
  CHECK(p.not_representable.at("f16") == 0);  // ones are exact everywhere: the stall is the accumulator's
}

TEST_CASE("probe: alternating signs - ascending and descending rows - B all ones") {
  const std::string base = "probe:m=4,n=2,k=100" + seed_field();
  const Problem alt = generate(base + ",kind=alternating");
  const Problem asc = generate(base + ",kind=ascending");
  const Problem des = generate(base + ",kind=descending");
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t l = 0; l < 100; ++l) {
      CHECK((alt.a(i, l) > 0) == (l % 2 == 0));
      CHECK(std::fabs(alt.a(i, l)) <= 1);
      if (l) {
        CHECK(asc.a(i, l) >= asc.a(i, l - 1));
        CHECK(des.a(i, l) <= des.a(i, l - 1));
      }
      CHECK(asc.a(i, l) > 0);
    }
  for (double v : asc.b.data) CHECK(v == 1.0);
  // the sorted rows hold the same multiset of values
  std::vector<double> ra(asc.a.data.begin(), asc.a.data.begin() + 100), rd(des.a.data.begin(), des.a.data.begin() + 100);
  std::reverse(rd.begin(), rd.end());
  CHECK(ra == rd);
}

TEST_CASE("exactly_representable agrees with round_double's flags for every format") {
  std::uint64_t n = 0;
  for (const Format* f : all_formats()) {
    if (*f == ue8m0) continue;
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const auto w = philox_4x32(test::seed(), 0xe7, i);
      // mix: random bit patterns (any binade), values of f itself, and values of f nudged by 1 bit
      double x;
      const std::uint64_t bits = (static_cast<std::uint64_t>(w[1]) << 32) | w[0];
      if (w[2] % 3 == 0) {
        x = std::bit_cast<double>(bits);
        if (!std::isfinite(x)) continue;
      } else {
        const std::uint64_t code = bits & f->code_mask();
        x = to_double(*f, code);
        if (!std::isfinite(x)) continue;
        if (w[2] % 3 == 2) x = std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) ^ 1);
      }
      const Rounded r = round_double(*f, x, Rounder::nearest(*f));
      const bool want = (r.flags & (kInexact | kOverflow)) == 0;
      CAPTURE(f->tag);
      CAPTURE(x);
      REQUIRE(exactly_representable(*f, x) == want);
      ++n;
    }
  }
  CHECK(n > 100000);
}

TEST_CASE("generate: not_representable and the operand statistics recomputed directly") {
  const Problem p = generate("ozaki:m=20,n=20,k=20,phi=2,source=f64" + seed_field());
  for (const Format* f : narrower_formats(f64)) {
    std::int64_t count = 0;
    for (const Matrix* m : {&p.a, &p.b})
      for (double v : m->data) count += (round_double(*f, v, Rounder::nearest(*f)).flags & (kInexact | kOverflow)) != 0;
    CHECK(p.not_representable.at(std::string(f->tag)) == static_cast<double>(count) / 800.0);
  }
  CHECK(p.not_representable.count("f64") == 0);
  CHECK(p.not_representable.count("ue8m0") == 0);
  double mx = 0;
  for (double v : p.a.data) mx = std::max(mx, std::fabs(v));
  CHECK(p.achieved.at("max_abs_a") == mx);
  // kappa statistics with the exact oracle for small problems
  const GemmRef c = gemm_reference_mpfr(p.a.view(), p.b.view());
  double kmax = 0;
  for (std::size_t e = 0; e < c.c.size(); ++e) kmax = std::max(kmax, c.abs_sum[e] / std::fabs(c.c[e].hi));
  CHECK(p.achieved.at("kappa_max") == doctest::Approx(kmax).epsilon(1e-12));
  // above the size limit no kappa is measured (the exact oracle's cost)
  GenerateOptions o;
  o.kappa_products = 100;
  CHECK(generate(p.spec, o).achieved.count("kappa_max") == 0);
}
