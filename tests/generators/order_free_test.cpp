// tests/generators/order_free_test.cpp — the `order_free` family (docs/generators.md, "Order-free values"):
// every value exact in the target; every exact or tiny row's element summed by MPFR at the accumulator's
// precision in three orders and two rounding directions gives the exact product (gemm_reference); every pair
// row's element has two nonzero products whose sum that precision must round, nearest and toward zero apart.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/gemm_call.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// sum of v in the order of idx, every addition rounded to prec bits in direction rnd.
double sum_in(const std::vector<double>& v, const std::vector<std::size_t>& idx, mpfr_prec_t prec, mpfr_rnd_t rnd) {
  double acc = 0;
  for (std::size_t t : idx) acc = test::mpfr_sum(acc, v[t], prec, rnd);
  return acc;
}

struct Pair {
  const char* target;
  const char* acc;
  int prec;
  bool pairs, tiny;  // the row kinds the formats can hold
};

}  // namespace

TEST_CASE("order_free: one value per element in every order, for each storage and accumulator") {
  const std::uint64_t seed = test::seed() % 1000003;
  CAPTURE(seed);
  for (const Pair& c : {Pair{"f32", "f32", 24, true, true}, Pair{"f16", "f32", 24, true, false}, Pair{"bf16", "f32", 24, true, true},
                        Pair{"tf32", "f32", 24, true, true}, Pair{"e4m3", "f32", 24, true, false}, Pair{"e5m2", "f32", 24, true, false},
                        Pair{"f16", "f16", 11, true, true}, Pair{"bf16", "bf16", 8, true, true}, Pair{"e2m1", "f32", 24, false, false}}) {
    const std::string spec = fmt::format("order_free:m=30,n=9,k=300,target={},acc={},seed={}", c.target, c.acc, seed);
    CAPTURE(spec);
    const Problem p = generate(spec);
    const Format& tf = *find_format(c.target);
    for (const Matrix* m : {&p.a, &p.b})
      for (double v : m->data) REQUIRE((round_double(tf, v, Rounder::nearest(tf)).flags & (kInexact | kOverflow)) == 0);
    CHECK((p.achieved.at("rows_pair") > 0) == c.pairs);
    CHECK((p.achieved.at("rows_tiny") > 0) == c.tiny);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    const Format& af = *find_format(c.acc);
    int rounded = 0, rn_rz_apart = 0, tiny = 0;
    for (std::int64_t i = 0; i < p.m; ++i) {
      const bool pair_row = p.a(i, 0) != 0;
      int nonzero_a = 0, upper = 0;
      for (std::int64_t q = 0; q < p.k; ++q)
        if (p.a(i, q) != 0) {
          ++nonzero_a;
          upper += q >= p.k / 2;
        }
      CHECK(nonzero_a == (pair_row ? 2 : 4));
      CHECK(upper >= 1);
      for (std::int64_t j = 0; j < p.n; ++j) {
        std::vector<double> prods;
        for (std::int64_t q = 0; q < p.k; ++q)
          if (p.a(i, q) != 0) prods.push_back(p.a(i, q) * p.b(q, j));  // exact: at most 24 + 2 bits
        std::vector<std::size_t> fwd(prods.size()), bwd, mixed;
        for (std::size_t t = 0; t < prods.size(); ++t) fwd[t] = t;
        bwd.assign(fwd.rbegin(), fwd.rend());
        mixed = fwd;
        std::rotate(mixed.begin(), mixed.begin() + 1, mixed.end());
        std::swap(mixed.front(), mixed.back());
        const double exact = ref.c[static_cast<std::size_t>(i * p.n + j)].hi;
        const double rn = sum_in(prods, fwd, c.prec, MPFR_RNDN);
        if (pair_row) {
          CHECK(prods.size() == 2);
          CHECK(rn != exact);  // the accumulator must round the pair's sum
          rounded += rn != exact;
          rn_rz_apart += rn != sum_in(prods, fwd, c.prec, MPFR_RNDZ);
          CHECK(sum_in(prods, bwd, c.prec, MPFR_RNDN) == rn);
          continue;
        }
        for (const auto* order : {&fwd, &bwd, &mixed})
          for (mpfr_rnd_t r : {MPFR_RNDN, MPFR_RNDZ}) CHECK(sum_in(prods, *order, c.prec, r) == exact);
        if (exact != 0 && std::fabs(exact) < af.min_normal()) {
          ++tiny;
          // A subnormal of the accumulator: a multiple of its smallest subnormal.
          CHECK(std::fmod(exact, af.min_subnormal()) == 0);
        }
      }
    }
    if (c.pairs) CHECK(rn_rz_apart > 0);
    if (c.tiny) CHECK(tiny > 0);
    CHECK(generate(spec).a.data == p.a.data);  // reproducible
    (void)rounded;
  }
}

TEST_CASE("order_free: bad fields are refused") {
  CHECK_THROWS(generate("order_free:m=4,n=4,k=8,target=f64"));
  CHECK_THROWS(generate("order_free:m=4,n=4,k=8,acc=e4m3"));
  CHECK_THROWS(generate("order_free:m=4,n=4,k=8,nnz=0"));
  CHECK_THROWS_WITH(generate("order_free:m=4,n=4,k=8,target=f32,source=f16"), doctest::Contains("at least as wide as the target"));
  CHECK_NOTHROW(generate("order_free:m=4,n=4,k=8,target=f16,source=f16"));
}
