// tests/generators/specials_test.cpp — the `specials` family (docs/generators.md, "Special values"): the
// kinds each target holds, the overflow elements' arithmetic (IEEE facts recomputed here in float, not
// read from the generator), the references they imply, and reproducibility.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>

#include "generators/generate.hpp"
#include "oracle/gemm_ref.hpp"

using namespace fpcert;

namespace {

struct Census {
  int inf = 0, nan = 0, max = 0;
};
Census census(const Problem& p, double max_finite) {
  Census c;
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data) {
      c.inf += std::isinf(v);
      c.nan += std::isnan(v);
      c.max += std::fabs(v) == max_finite;
    }
  return c;
}

}  // namespace

TEST_CASE("specials: the kinds a target holds, every finite value exact in the source, the same bits from the same spec") {
  const Problem p = generate("specials:m=32,n=32,k=64,target=f32,seed=3");
  const Census c = census(p, FLT_MAX);
  // Kinds cycle +Inf, -Inf, NaN, +max, -max, +Inf with -Inf: rows of A take the first four, columns of B the
  // four from -Inf (a zero partner may, rarely, land on another special: at least, not exactly).
  CHECK(c.inf >= 3);
  CHECK(c.nan >= 2);
  CHECK(c.max >= 3);
  const Problem six = generate("specials:m=32,n=32,k=64,target=f32,rows=6,cols=0,seed=3");
  CHECK(census(six, FLT_MAX).inf >= 4);  // +Inf, -Inf, and the pair +Inf with -Inf in one row
  CHECK(p.achieved.at("special_inf_inputs") == c.inf);
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data)
      if (std::isfinite(v)) REQUIRE((round_double(f32, v, Rounder::nearest(f32)).flags & (kInexact | kOverflow)) == 0);
  CHECK(problem_hash(generate(p.spec)) == problem_hash(p));
  CHECK(problem_hash(generate("specials:m=32,n=32,k=64,target=f32,seed=4")) != problem_hash(p));
  // The per-operand statistics leave Inf and NaN out.
  CHECK(p.achieved.at("max_abs_a") <= FLT_MAX);

  // e4m3 (fn) has NaN and no Inf; its largest finite value is 448. e2m1 has neither: +-6 only.
  const Problem e4 = generate("specials:target=e4m3,acc=f32,seed=1");
  const Census c4 = census(e4, 448);
  CHECK(c4.inf == 0);
  CHECK(c4.nan >= 1);
  CHECK(c4.max >= 2);
  CHECK(e4.achieved.at("overflow_elements") == 0);  // 1.5 2^63 is far beyond e4m3
  const Problem e2 = generate("specials:target=e2m1,seed=1");
  const Census c2 = census(e2, 6);
  CHECK(c2.inf + c2.nan == 0);
  CHECK(c2.max >= 2);
}

TEST_CASE("specials: the references are IEEE's: NaN, both infinities, and finite sums whose fp32 partial sums overflow") {
  const Problem p = generate("specials:m=32,n=32,k=64,target=f32,acc=f32,seed=7");
  const GemmRef r = gemm_reference(p.a.view(), p.b.view());
  int nan = 0, pinf = 0, ninf = 0;
  for (const RefValue& v : r.c) {
    nan += std::isnan(v.hi);
    pinf += v.hi == INFINITY;
    ninf += v.hi == -INFINITY;
  }
  CHECK(nan > 0);
  CHECK(pinf > 0);
  CHECK(ninf > 0);
  // Overflow elements: a finite exact sum in fp32's range, and a sequential fp32 FMA sum that overflows.
  CHECK(p.achieved.at("overflow_elements") == 2);
  int overflowing = 0;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const RefValue& v = r.at(i, j);
      if (!std::isfinite(v.hi)) continue;
      float acc = 0;
      for (std::int64_t q = 0; q < p.k; ++q) acc = std::fma(static_cast<float>(p.a(i, q)), static_cast<float>(p.b(q, j)), acc);
      if (std::isinf(acc) && std::fabs(v.hi) < FLT_MAX) {  // exact sum in range, a partial sum beyond it
        ++overflowing;
        CHECK(acc > 0);  // +P three times first: +Inf, and +Inf - P stays +Inf (only two -P: never -Inf)
      }
    }
  CHECK(overflowing >= 2);
}

TEST_CASE("specials: an fp16 accumulator's overflow elements fit fp16 storage (P = 1.5 2^14 = 24576)") {
  const Problem p = generate("specials:m=16,n=16,k=32,target=f16,acc=f16,seed=2,rows=0,cols=0");
  CHECK(p.achieved.at("overflow_elements") == 2);
  int a = 0, b = 0;
  for (double v : p.a.data) a += v == 192;  // 1.5 2^7
  for (double v : p.b.data) b += std::fabs(v) == 128;  // 2^7
  CHECK(a >= 10);
  CHECK(b >= 10);
  // 2 P = 49152 <= 65504 < 3 P = 73728
  CHECK(2 * 192.0 * 128 <= 65504);
  CHECK(3 * 192.0 * 128 > 65504);
  // Without room for five products there is none.
  CHECK(generate("specials:k=4,seed=1").achieved.at("overflow_elements") == 0);
}
