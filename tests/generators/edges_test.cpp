// tests/generators/edges_test.cpp — the edge table: exact bit patterns for fp16 in fp32 (typed from
// IEEE 754's definitions), and what each entry means, checked with MPFR's rounding for every target.
#include <doctest/doctest.h>

#include <mpfr.h>

#include <cmath>
#include <set>
#include <string>

#include "generators/edges.hpp"
#include "generators/generate.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

// fp16 (1/5/10): smallest subnormal s = 2^-24, smallest normal N = 2^-14, largest finite L = 65504
// with top-binade ulp 32, ulp of 1 is 2^-10. Midpoints are halfway between neighbours; "-"/"+"
// are the fp32 neighbours of a midpoint (fp32 bit pattern minus/plus one). Bits computed by hand
// from those definitions (Python struct, not this code), as documented in docs/generators.md.
TEST_CASE("edge_table f16 in f32: the documented bit patterns") {
  struct Row {
    const char* label;
    std::uint32_t bits;
  };
  const Row want[] = {
      {"min_subnormal_mid_below-", 0x32ffffff},  // 2^-25 (1 - 2^-24): below the 0|s tie, rounds to 0
      {"min_subnormal_mid_below", 0x33000000},   // s/2 = 2^-25: tie, rounds to even (0)
      {"min_subnormal_mid_below+", 0x33000001},  // 2^-25 (1 + 2^-23): rounds to s
      {"min_subnormal", 0x33800000},             // s = 2^-24
      {"min_subnormal_mid_above-", 0x33bfffff},  // just below 1.5 s: rounds to s
      {"min_subnormal_mid_above", 0x33c00000},   // 1.5 s: tie between s (odd) and 2s (even): 2s
      {"min_subnormal_mid_above+", 0x33c00001},  // just above 1.5 s: 2s
      {"min_subnormal_next", 0x34000000},        // 2s = 2^-23
      {"min_normal_prev", 0x387fc000},           // N - s = 1023 * 2^-24, the largest subnormal
      {"min_normal_mid_below-", 0x387fdfff},     // below N - s/2
      {"min_normal_mid_below", 0x387fe000},      // N - s/2: tie, rounds to even (N)
      {"min_normal_mid_below+", 0x387fe001},     // above N - s/2: N
      {"min_normal", 0x38800000},                // N = 2^-14
      {"min_normal_mid_above-", 0x38800fff},     // below N + s/2
      {"min_normal_mid_above", 0x38801000},      // N + s/2: tie, rounds to N (even)
      {"min_normal_mid_above+", 0x38801001},     // above N + s/2: N + s
      {"min_normal_next", 0x38802000},           // N + s
      {"one_prev", 0x3f7fe000},                  // 1 - 2^-11
      {"one_mid_below-", 0x3f7fefff},            // below 1 - 2^-12
      {"one_mid_below", 0x3f7ff000},             // 1 - 2^-12: tie, rounds to 1 (even)
      {"one_mid_below+", 0x3f7ff001},            // above it: 1
      {"one", 0x3f800000},                       // 1
      {"one_mid_above-", 0x3f800fff},            // below 1 + 2^-11: 1
      {"one_mid_above", 0x3f801000},             // 1 + 2^-11: tie, rounds to 1 (even)
      {"one_mid_above+", 0x3f801001},            // above: 1 + 2^-10
      {"one_next", 0x3f802000},                  // 1 + 2^-10
      {"max_finite_prev", 0x477fc000},           // 65472
      {"max_finite_mid_below-", 0x477fcfff},     // 65487.99609375
      {"max_finite_mid_below", 0x477fd000},      // 65488: tie, rounds to 65472 (even)
      {"max_finite_mid_below+", 0x477fd001},     // 65488.00390625: 65504
      {"max_finite", 0x477fe000},                // 65504
      {"max_finite_mid_above-", 0x477fefff},     // 65519.99609375: rounds to 65504
      {"max_finite_mid_above", 0x477ff000},      // 65520: tie, rounds to even = 2^16: overflow to Inf
      {"max_finite_mid_above+", 0x477ff001},     // 65520.00390625: overflow
      {"max_finite_next", 0x47800000},           // 65536 = 2^16: overflow
  };
  const std::vector<EdgeValue> got = edge_table(f16, f32);
  REQUIRE(got.size() == sizeof want / sizeof want[0]);
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].label == want[i].label);
    CHECK(round_double(f32, got[i].value, Rounder::nearest(f32)).code == want[i].bits);
  }
}

// For every target: anchors and neighbours are target values; each midpoint is the exact average
// of its two neighbours, MPFR rounds it to the even one of them; "-" rounds to the lower, "+" to
// the upper (or overflows). Entries exist only when exactly representable in the source.
TEST_CASE("edge_table: every entry means what its label says (MPFR rounding) - every target") {
  const Format* targets[] = {&f32, &tf32, &f16, &bf16, &e4m3, &e5m2, &e2m3, &e3m2, &e2m1};
  for (const Format* t : targets) {
    const Format& src = *t == f32 ? f64 : f32;
    CAPTURE(t->tag);
    const std::vector<EdgeValue> table = edge_table(*t, src);
    REQUIRE(table.size() >= 20);
    std::set<std::string> labels;
    mpfr_ref::Mpfr x(64);
    const Rounder rn = Rounder::nearest(*t);
    for (std::size_t i = 0; i < table.size(); ++i) {
      const EdgeValue& e = table[i];
      CAPTURE(e.label);
      labels.insert(e.label);
      if (i) CHECK(e.value > table[i - 1].value);  // ascending, no duplicates
      const Rounded in_src = round_double(src, e.value, Rounder::nearest(src));
      CHECK((in_src.flags & (kInexact | kOverflow)) == 0);
      mpfr_set_d(x, e.value, MPFR_RNDN);
      const Rounded r = mpfr_ref::round(*t, x, rn);
      const std::string& l = e.label;
      const char last = l.back();
      if (l.find("_mid_") == std::string::npos) {
        // anchors and neighbours are target values, except max_finite_next (the first beyond range)
        if (l == "max_finite_next") CHECK((r.flags & kOverflow) != 0);
        else CHECK(r.flags == 0);
      } else {
        CHECK((r.flags & kInexact) != 0);
        const std::string stem = l.substr(0, l.find("_mid_"));
        const bool above = l.find("_mid_above") != std::string::npos;
        // the neighbours of this midpoint in the target
        const double anchor = stem == "min_subnormal" ? t->min_subnormal() : stem == "min_normal" ? t->min_normal()
                              : stem == "one" ? 1.0 : t->max_finite();
        const std::uint64_t ac = round_double(*t, anchor, rn).code;
        const double lower = above ? anchor : (ac > 0 ? to_double(*t, ac - 1) : 0.0);
        const bool beyond = above && stem == "max_finite";
        const double upper = above ? (beyond ? anchor + std::ldexp(1.0, t->emax() - t->frac_bits) : to_double(*t, ac + 1)) : anchor;
        const std::uint64_t lc = round_double(*t, lower, rn).code;
        if (last == '-') {
          CHECK(to_double(*t, r.code) == lower);
        } else if (last == '+') {
          if (beyond) CHECK(((r.flags & kOverflow) != 0 || to_double(*t, r.code) == upper));
          else CHECK(to_double(*t, r.code) == upper);
        } else {
          CHECK(e.value == (lower + upper) / 2);
          // tie: to the even code of the two (lower's code is even iff lc is even)
          if ((lc & 1) == 0) CHECK(to_double(*t, r.code) == lower);
          else if (beyond) CHECK(((r.flags & kOverflow) != 0 || to_double(*t, r.code) == upper));
          else CHECK(to_double(*t, r.code) == upper);
        }
      }
    }
    for (const char* must : {"min_subnormal", "min_normal", "max_finite", "max_finite_mid_above", "min_subnormal_mid_below"})
      CHECK(labels.count(must));
    CHECK(labels.count("one") == (t->min_normal() == 1.0 ? 0u : 1u));  // e2m1, e2m3: 1 is the smallest normal
  }
  // target == source: midpoints are not source values, so they are left out
  for (const EdgeValue& e : edge_table(f32, f32)) CHECK(e.label.find("_mid_") == std::string::npos);
}

TEST_CASE("edges: entries are +-table values - B can be edges - ones or the identity") {
  const Problem p = generate("edges:m=20,n=20,k=30,target=e4m3,seed=" + std::to_string(test::seed()));
  std::set<double> table;
  for (const EdgeValue& e : edge_table(e4m3, f32)) table.insert(e.value);
  std::set<double> used;
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data) {
      REQUIRE(table.count(std::fabs(v)));
      used.insert(std::fabs(v));
    }
  CHECK(used.size() == table.size());  // 1000 draws cover a table of ~35 entries
  const Problem q = generate("edges:m=5,n=7,k=6,b=identity,seed=2");
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 7; ++j) CHECK(q.b(i, j) == (i == j ? 1.0 : 0.0));
  const Problem o = generate("edges:m=5,n=7,k=6,b=ones,seed=2");
  for (double v : o.b.data) CHECK(v == 1.0);
  // e4m3's edges: 448 is its largest finite value; 464 the tie with the (NaN) code above, which
  // rounds to the even code 448 (no overflow in a finite-with-NaN format under RNE).
  bool has448 = false, has464 = false;
  for (const EdgeValue& e : edge_table(e4m3, f32)) {
    has448 |= e.label == "max_finite" && e.value == 448;
    has464 |= e.label == "max_finite_mid_above" && e.value == 464;
  }
  CHECK(has448);
  CHECK(has464);
}
