// tests/generators/exponents_test.cpp — exponent sweeps, exponent-span tiles (exact spans) and outliers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "generators/generate.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

int ex(double v) { return std::ilogb(v); }  // floor(log2 |v|), exact
std::string seed_field() { return ",seed=" + std::to_string(test::seed()); }

}  // namespace

TEST_CASE("exp_uniform: every exponent in emin..emax - all of them used - random significands") {
  const Problem p = generate("exp_uniform:m=64,n=64,k=64,emin=-110,emax=110" + seed_field());
  std::set<int> seen;
  std::set<double> mantissas;
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data) {
      REQUIRE(v != 0);
      REQUIRE(ex(v) >= -110);
      REQUIRE(ex(v) <= 110);
      seen.insert(ex(v));
      mantissas.insert(std::ldexp(std::fabs(v), -ex(v)));
    }
  CHECK(seen.size() == 221u);         // 8192 draws over 221 exponents: every one appears (P(miss) < 1e-14)
  CHECK(mantissas.size() > 8000u);    // 23 random fraction bits: almost no repeats
  CHECK(p.achieved.at("exp_span_a") == 220);
}

TEST_CASE("exp_uniform: exponents below the normal range become subnormals - rounded once") {
  const Problem p = generate("exp_uniform:m=16,n=16,k=16,emin=-149,emax=-120" + seed_field());
  int sub = 0;
  for (double v : p.a.data) sub += std::fabs(v) < 0x1p-126;
  CHECK(sub > 0);
}

TEST_CASE("exp_gauss: exponents spread like round(N(0 std)) - clamped to the source's range") {
  const Problem p = generate("exp_gauss:m=64,n=64,k=64,std=8" + seed_field());
  double s2 = 0;
  for (double v : p.a.data) s2 += static_cast<double>(ex(v)) * ex(v);
  const double sd = std::sqrt(s2 / static_cast<double>(p.a.data.size()));
  // rounding adds variance 1/12: sd = sqrt(64 + 1/12) = 8.005; 4096 samples: sd of sd ~ 8/sqrt(8192) = 0.09
  CHECK(sd == doctest::Approx(8.005).epsilon(0.06));
  const Problem q = generate("exp_gauss:m=32,n=32,k=32,std=200,source=bf16" + seed_field());
  for (double v : q.a.data) {
    CHECK(ex(v) >= bf16.emin() - bf16.frac_bits);
    CHECK(ex(v) <= bf16.emax());
  }
}

TEST_CASE("exp_sweep: entry i is +-mantissa 2^(lo + i mod count) over the target's whole range") {
  for (const char* tgt : {"f16", "e4m3", "bf16"}) {
    const Format& t = *find_format(tgt);
    const Problem p = generate(std::string("exp_sweep:m=9,n=9,k=40,mantissa=1.25,b=ones,target=") + tgt + seed_field());
    const int lo = t.emin() - t.frac_bits, count = t.emax() - lo + 1;
    for (std::size_t i = 0; i < p.a.data.size(); ++i) {
      const double want = to_double(f32, round_double(f32, std::ldexp(1.25, lo + static_cast<int>(i % count)), Rounder::nearest(f32)).code);
      REQUIRE(std::fabs(p.a.data[i]) == want);
    }
    for (double v : p.b.data) CHECK(v == 1.0);
    // the sweep covers the target from its smallest subnormal to its largest binade
    CHECK(p.achieved.at("exp_min_a") == lo);
    CHECK(p.achieved.at("exp_max_a") == t.emax());
  }
  const Problem q = generate("exp_sweep:m=4,n=4,k=4,b=identity" + seed_field());
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 4; ++j) CHECK(q.b(i, j) == (i == j ? 1.0 : 0.0));
}

TEST_CASE("span: every tile spans exactly s binades (s = 29 30 31 40) - whole rows or K-blocks") {
  for (int s : {29, 30, 31, 40}) {
    for (int block : {0, 16}) {
      for (int shift : {0, 5}) {
        const std::string spec = "span:m=6,n=5,k=64,s=" + std::to_string(s) + ",block=" + std::to_string(block) +
                                 ",shift=" + std::to_string(shift) + seed_field();
        CAPTURE(spec);
        const Problem p = generate(spec);
        CHECK(*p.source == bf16);
        const std::int64_t len = block == 0 ? 64 : block;
        int tiles = 0;
        // A: rows; B: columns
        for (int op = 0; op < 2; ++op) {
          const Matrix& m = op == 0 ? p.a : p.b;
          const std::int64_t lines = op == 0 ? p.m : p.n;
          for (std::int64_t line = 0; line < lines; ++line)
            for (std::int64_t t = 0; t < 64 / len; ++t) {
              int lo = 1 << 20, hi = -(1 << 20);
              for (std::int64_t r = 0; r < len; ++r) {
                const double v = op == 0 ? m(line, t * len + r) : m(t * len + r, line);
                REQUIRE(v != 0);
                REQUIRE(std::fabs(v) >= bf16.min_normal());  // normal bf16 numbers
                lo = std::min(lo, ex(v));
                hi = std::max(hi, ex(v));
              }
              REQUIRE(hi - lo == s);
              if (shift == 0) REQUIRE(lo == -s / 2);  // center 0: tiles start at -floor(s/2)
              ++tiles;
            }
        }
        CHECK(tiles == (6 + 5) * (64 / len));
        CHECK(p.achieved.at("tile_span_min") == s);
        CHECK(p.achieved.at("tile_span_max") == s);
        if (shift == 0) CHECK(p.achieved.at("exp_span_a") == s);
        else CHECK(p.achieved.at("exp_span_a") >= s);
      }
    }
  }
}

TEST_CASE("span: a span beyond fp16's range is what the BF16-on-FP16 experiments need") {
  // s = 40 cannot fit fp16 (2^-24 .. 2^15 is 39 binades with subnormals): some entry of every
  // row must fall outside fp16 whatever power-of-two scale a row gets.
  const Problem p = generate("span:m=8,n=8,k=32,s=40" + seed_field());
  CHECK(p.not_representable.at("f16") > 0);
  const Problem q = generate("span:m=8,n=8,k=32,s=29" + seed_field());
  CHECK(q.not_representable.at("f32") == 0);  // bf16 values are f32 values
}

TEST_CASE("outlier: outliers are the base values times 2^e exactly - with frequency p") {
  const std::string base = "outlier:m=64,n=64,k=64,e=10" + seed_field();
  const Problem none = generate(base + ",p=0");
  const Problem some = generate(base + ",p=0.05");
  std::int64_t count = 0, total = 0;
  for (int op = 0; op < 2; ++op) {
    const Matrix& a = op == 0 ? none.a : none.b;
    const Matrix& b = op == 0 ? some.a : some.b;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
      ++total;
      if (b.data[i] == a.data[i]) continue;
      REQUIRE(b.data[i] == std::ldexp(a.data[i], 10));
      ++count;
    }
  }
  const double f = static_cast<double>(count) / static_cast<double>(total), sd = std::sqrt(0.05 * 0.95 / static_cast<double>(total));
  CHECK(std::fabs(f - 0.05) < 5 * sd);
  CHECK(some.achieved.at("outlier_fraction_a") > 0);
  const Problem only_a = generate(base + ",p=0.05,operands=a");
  CHECK(only_a.b.data == none.b.data);
  CHECK(only_a.achieved.count("outlier_fraction_b") == 0);
}
