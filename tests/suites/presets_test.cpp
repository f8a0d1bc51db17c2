// tests/suites/presets_test.cpp — the presets' methods on small hand-checked inputs (docs/experiments.md):
// metric definitions (median and P99 over nonzero finite errors, linear interpolation, both infinity
// norms, the course's gate, the fitted exponent), slice values and term orders of the panorama split
// schemes, the panorama operands, the fp16 running sum, the course's integer pattern. Every expected
// value is derived in its comment.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "generators/generate.hpp"
#include "kernels/kernel.hpp"
#include "base/error.hpp"
#include "base/philox.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/experiments/preset_gemm.hpp"
#include "suites/experiments/presets.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

const SplitScheme& panorama(const std::string& name) {
  for (const auto& s : panorama_split_schemes())
    if (s.name == name) return s;
  FAIL("no panorama scheme " << name);
  return panorama_split_schemes().front();
}
}  // namespace

TEST_CASE("quantile_linear: numpy's linear interpolation between closest ranks") {
  const std::vector<double> v = {1, 2, 3, 4};
  // h = q (n - 1): q = 0.5 -> h = 1.5 -> 2 + 0.5 (3 - 2) = 2.5 (the usual median of an even count)
  CHECK(quantile_linear(v, 0.5) == 2.5);
  // q = 0.99 -> h = 2.97 -> 3 + 0.97 (4 - 3) = 3.97 (a floor-rank rule would give 3)
  CHECK(quantile_linear(v, 0.99) == doctest::Approx(3.97).epsilon(1e-15));
  CHECK(quantile_linear(v, 0.0) == 1);  // h = 0
  CHECK(quantile_linear(v, 1.0) == 4);  // h = 3, the last rank
  // 101 values 0, 10, ..., 1000: q = 0.99 -> h = 99 exactly -> x[99] = 990
  std::vector<double> w;
  for (int i = 0; i <= 100; ++i) w.push_back(10.0 * i);
  CHECK(quantile_linear(w, 0.99) == 990);
  CHECK(quantile_linear({7}, 0.99) == 7);
  CHECK(std::isnan(quantile_linear({}, 0.5)));
}

TEST_CASE("summarize_nonzero_finite: statistics over nonzero finite errors only") {
  // kept: {3, 1, 2, 4} -> sorted {1, 2, 3, 4}; left out: two zeros, one Inf, one NaN
  const ErrorSummary s = summarize_nonzero_finite({0, 3, kInf, 1, 0, kNaN, 2, 4});
  CHECK(s.samples == 8);
  CHECK(s.counted == 4);
  CHECK(s.exact == 2);
  CHECK(s.nonfinite == 2);
  CHECK(s.median == 2.5);                                    // (2 + 3) / 2, as above
  CHECK(s.p99 == doctest::Approx(3.97).epsilon(1e-15));      // 3 + 0.97 (4 - 3)
  CHECK(s.max == 4);
  // Over every element (zeros included) the median of {0, 0, 1, 2, 3, 4} would be 1.5: the
  // definition moves the number, which is why the preset states it.
  const ErrorSummary z = summarize_nonzero_finite({0, 0, 0});
  CHECK(z.counted == 0);
  CHECK(z.exact == 3);
  CHECK(std::isnan(z.median));
  CHECK(std::isnan(z.max));
}

TEST_CASE("fit_power_law: the exponent of y = c x^e in log-log least squares") {
  // y = 3 x^0.5 at x = 4, 16, 64: log2 x = 2, 4, 6 and log2 y = log2 3 + 1, + 2, + 3 -> slope 0.5, c = 3
  const PowerFit f = fit_power_law({4, 16, 64}, {6, 12, 24});
  CHECK(f.points == 3);
  CHECK(f.exponent == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(f.coefficient == doctest::Approx(3).epsilon(1e-14));
  // Points with y = 0 or NaN are left out: (4, 6) and (64, 24) alone give the same line.
  const PowerFit g = fit_power_law({4, 16, 64}, {6, 0, 24});
  CHECK(g.points == 2);
  CHECK(g.exponent == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(std::isnan(fit_power_law({4, 16}, {6, kNaN}).exponent));  // one point: no fit
}

TEST_CASE("panorama term orders: triangular levels upwards, 9xBF16 from level 4 down, by increasing first index") {
  using P = std::vector<std::pair<int, int>>;
  // level l holds (i, l - i); upwards, i increasing within a level
  CHECK(triangular_terms(1) == P{{0, 0}});
  CHECK(triangular_terms(2) == P{{0, 0}, {0, 1}, {1, 0}});
  CHECK(triangular_terms(3) == P{{0, 0}, {0, 1}, {1, 0}, {0, 2}, {1, 1}, {2, 0}});
  // 3 slices: levels 4, 3, 2, 1, 0 with i < 3 and l - i < 3
  CHECK(all_terms_descending(3) == P{{2, 2}, {1, 2}, {2, 1}, {0, 2}, {1, 1}, {2, 0}, {0, 1}, {1, 0}, {0, 0}});
  // the schemes: 1, 3, 6 triangular products, 9 descending; p = 11 (tf32) and 8 (bf16), nearest-even
  CHECK(panorama("1xtf32").terms.size() == 1);
  CHECK(panorama("3xtf32").terms == triangular_terms(2));
  CHECK(panorama("3xbf16").terms == triangular_terms(2));
  CHECK(panorama("6xbf16").terms == triangular_terms(3));
  CHECK(panorama("9xbf16").terms == all_terms_descending(3));
  CHECK(panorama("3xtf32").slice->precision() == 11);
  CHECK(panorama("9xbf16").slice->precision() == 8);
  for (const auto& s : panorama_split_schemes()) CHECK(s.rounding == Rounding::NearestEven);
}

TEST_CASE("panorama slices: round-to-nearest-even to p bits, residual in fp32") {
  float s[3];
  // x = 1 + 2^-8 + 2^-9 + 2^-20. bf16 spacing at 1 is 2^-7; x - 1 = 0.75 * 2^-7 + 2^-20 rounds up:
  // x0 = 1 + 2^-7. r1 = x - x0 = -(2^-9 - 2^-20): in [2^-10, 2^-9) bf16 spacing is 2^-17 and r1 is
  // 2^-20 < 2^-18 from -2^-9: x1 = -2^-9. r2 = 2^-20 = x2 (one bit).
  split_value(panorama("9xbf16"), 1.0f + 0x1p-8f + 0x1p-9f + 0x1p-20f, s);
  CHECK(s[0] == 1.0f + 0x1p-7f);
  CHECK(s[1] == -0x1p-9f);
  CHECK(s[2] == 0x1p-20f);
  // A tie rounds to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (bf16) -> 1, residual 2^-8.
  split_value(panorama("3xbf16"), 1.0f + 0x1p-8f, s);
  CHECK(s[0] == 1.0f);
  CHECK(s[1] == 0x1p-8f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (tf32): nearest-even gives 1 (fpcert's default
  // 1xTF32 row, cvt.rna, gives 1 + 2^-10). The 1xTF32 product of it with 1 is therefore 1.
  split_value(panorama("3xtf32"), 1.0f + 0x1p-11f, s);
  CHECK(s[0] == 1.0f);
  CHECK(s[1] == 0x1p-11f);
  CHECK(split_product(panorama("1xtf32"), 1.0f + 0x1p-11f, 1.0f) == 1.0f);
}

TEST_CASE("panorama term order changes the product: a = 1 + 23 2^-18, b = 1 - 769 2^-18") {
  const float a = 1.0f + 0x17p-18f;   // bf16 slices: 1, 23 2^-18 (23 << half the spacing 2^-8 at 1), 0
  const float b = 1.0f - 0x301p-18f;  // 1 - 769 2^-18 -> slices 255/256 = 1 - 2^-8, 255 2^-18, 0
  float s[3];
  split_value(panorama("9xbf16"), b, s);
  CHECK(s[0] == 1.0f - 0x1p-8f);
  CHECK(s[1] == 0xffp-18f);
  CHECK(s[2] == 0.0f);
  // Products (exact in fp32): p00 = 1 - 2^-8, p01 = 255 2^-18, p10 = 23 255 2^-26 = 5865 2^-26,
  // p11 = 5865 2^-36; exact ab = 1 - 746 2^-18 - 17687 2^-36. In [1/2, 1) the spacing is u = 2^-24.
  //
  // Triangular (3x: p00, p01, p10): 1 - 2^-8 + 255 2^-18 = 1 - 769 2^-18 exactly; + p10 = 1 - 190999 2^-26
  // = 1 - 47749.75 u, rounded to 1 - 47750 u.
  CHECK(split_product(panorama("3xbf16"), a, b) == 1.0f - 47750 * 0x1p-24f);
  // 6x goes on: + p02 (= 0), + p11 = 1.432 u: 1 - 47748.568 u rounds to 1 - 47749 u; + p20 (= 0).
  CHECK(split_product(panorama("6xbf16"), a, b) == 1.0f - 47749 * 0x1p-24f);
  // 9x, level 4 down: p11 first (the level 3, 4 and other level 2 terms are 0); + p01 = 255 2^-18 in
  // [2^-11, 2^-10) with spacing 2^-34: p11 = 1466.25 2^-34 rounds to 1466 2^-34; + p10: 9107293 2^-33,
  // exact; + p00 = 1 - 65536 u + 17787.68 u = 1 - 47748.32 u, rounded to 1 - 47748 u, which is also
  // RN(ab) = RN(1 - 47748.32 u): the descending order is correctly rounded here, the ascending one not.
  const float nine = split_product(panorama("9xbf16"), a, b);
  CHECK(nine == 1.0f - 47748 * 0x1p-24f);
  CHECK(nine == static_cast<float>(static_cast<double>(a) * static_cast<double>(b)));
  // The same nine terms added from level 0 upwards (the triangular order over all levels) end at
  // 1 - 47749 u: the step at p11 above decides it.
  SplitScheme up = panorama("9xbf16");
  up.terms = {{0, 0}, {0, 1}, {1, 0}, {0, 2}, {1, 1}, {2, 0}, {1, 2}, {2, 1}, {2, 2}};
  CHECK(split_product(up, a, b) == 1.0f - 47749 * 0x1p-24f);
}

TEST_CASE("panorama operands: s 2^u, u uniform on [-60, 60], rounded once to fp32") {
  // Draw 0 of seed 5, rebuilt from its Philox words: U from words 1:0 (53 bits), the sign from bit 0.
  const auto w = philox_4x32(5, 0x70616e6f, 0);
  const std::uint64_t bits = (static_cast<std::uint64_t>(w[1]) << 32) | w[0];
  const double u = -60.0 + 120.0 * (static_cast<double>(bits >> 11) * 0x1p-53);
  // exp2l (64-bit significand) then one rounding to float: the same float unless 2^u lies within
  // 2^-40 relative of a float midpoint (probability ~2^-16 for this one draw, fixed by the seed).
  const float expect = static_cast<float>(std::exp2l(static_cast<long double>(u))) * ((bits & 1) ? -1.0f : 1.0f);
  CHECK(panorama_operand(5, 0, 0) == expect);
  // Properties of 100,000 draws: |v| in [2^-60, 2^60]; signs balanced; the significand is log-uniform,
  // so P(m < 1.5) = log2(1.5) = 0.585 (a uniform significand would give 0.5). Binomial sd at n = 2e5:
  // sqrt(0.585 0.415 / 2e5) = 0.0011; the tolerance 0.01 is 9 sd.
  int neg = 0, below = 0, n = 0;
  for (std::uint64_t i = 0; i < 100000; ++i)
    for (int which : {0, 1}) {
      const float v = panorama_operand(7, i, which);
      REQUIRE(std::fabs(v) >= 0x1p-60f);
      REQUIRE(std::fabs(v) <= 0x1p60f);
      neg += v < 0;
      int e;
      const float m = 2 * std::frexp(std::fabs(v), &e);  // in [1, 2)
      below += m < 1.5f;
      ++n;
    }
  CHECK(static_cast<double>(neg) / n == doctest::Approx(0.5).epsilon(0.02));
  CHECK(static_cast<double>(below) / n == doctest::Approx(std::log2(1.5)).epsilon(0.017));
}

TEST_CASE("split_scalar_panorama: fp32's own product is correctly rounded, 9xBF16 at fp32's level, 1xBF16 at bf16's") {
  const auto rows = split_scalar_panorama(20000, 3);
  REQUIRE(rows.size() == 7);
  CHECK(rows[0].method == "fp32");
  // fp32: RN(ab) has relative error at most 2^-24 (u of fp32), and is nonzero for most pairs
  CHECK(rows[0].error.max <= std::ldexp(1.0, -24));
  CHECK(rows[0].error.counted > 19000);
  for (const auto& r : rows) {
    CAPTURE(r.method);
    CHECK(r.error.samples == 20000);
    CHECK(r.error.counted + r.error.exact + r.error.nonfinite == 20000);
    CHECK(r.error.median <= r.error.p99);
    CHECK(r.error.p99 <= r.error.max);
  }
  // 1xBF16: both operands rounded to 8 bits: relative error below about 2 2^-8 (u of bf16, twice)
  CHECK(rows[3].method == "1xbf16");
  CHECK(rows[3].error.max <= 2 * std::ldexp(1.0, -8) + std::ldexp(1.0, -16));
  CHECK(rows[3].error.median > std::ldexp(1.0, -12));
  // 9xBF16 keeps every slice product: three bf16 slices hold an fp32 value exactly, so only the fp32
  // additions round (at most 8 roundings of 2^-24 relative to partial sums near ab) and slice products
  // of the smallest operands that underflow (each off by < 2^-149 absolute, < 2^-29 relative to
  // |ab| >= 2^-120): a loose 16 2^-24.
  CHECK(rows[6].method == "9xbf16");
  CHECK(rows[6].error.max <= 16 * std::ldexp(1.0, -24));
}

TEST_CASE("row-sum norm next to the elementwise one: ||C - C*||_inf / ||C*||_inf on a 2 x 2 example") {
  // A = [1; 2], B = [1, -3] (k = 1): C* = [[1, -3], [2, -6]]; the kernel's output [[1.5, -3], [2, -5]]
  // errs by [[0.5, 0], [0, 1]].
  Problem p;
  p.m = 2, p.n = 2, p.k = 1;
  p.a = Matrix(2, 1);
  p.b = Matrix(1, 2);
  p.a(0, 0) = 1, p.a(1, 0) = 2;
  p.b(0, 0) = 1, p.b(0, 1) = -3;
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto k = make_gemm_kernel("model_gemm_f32");
  REQUIRE(k);
  std::vector<std::uint64_t> codes;
  for (float c : {1.5f, -3.0f, 2.0f, -5.0f}) codes.push_back(std::bit_cast<std::uint32_t>(c));
  GradeInput gi;
  gi.problem = &p;
  gi.ref = &ref;
  gi.traits = &k->traits();
  gi.codes = &codes;
  CaseResult r;
  grade(gi, r);
  // row sums of |error|: 0.5 and 1 -> 1; of |C*|: 4 and 8 -> 8; 1 / 8
  CHECK(r.metrics.rowsum_rel == 0.125);
  // elementwise: max |error| 1 over max |C*| 6
  CHECK(r.metrics.max_rel == doctest::Approx(1.0 / 6).epsilon(1e-15));
  // Frobenius: sqrt(0.25 + 1) / sqrt(1 + 9 + 4 + 36) = sqrt(1.25 / 50)
  CHECK(r.metrics.frobenius_rel == doctest::Approx(std::sqrt(0.025)).epsilon(1e-15));
}

TEST_CASE("the course's gate: rtol = max(table rtol, 4 eps sqrt(K)), atol = rtol max|ref|") {
  // fp16: eps = 2^-10; K = 256: 4 2^-10 16 = 0.0625; 1024: 0.125; 2048: 4 2^-10 45.25 = 0.177 (> 1e-2)
  CHECK(course_rtol(f16, 256) == 0.0625);
  CHECK(course_rtol(f16, 1024) == 0.125);
  CHECK(course_rtol(f16, 2048) == doctest::Approx(0.1767767).epsilon(1e-6));
  // fp32: eps = 2^-23; K = 256: 4 2^-23 16 = 7.6e-6 < 1e-5 -> 1e-5; K = 2048: 4 2^-23 45.25 = 2.158e-5
  CHECK(course_rtol(f32, 256) == 1e-5);
  CHECK(course_rtol(f32, 2048) == doctest::Approx(2.1579e-5).epsilon(1e-4));
  CHECK_THROWS_AS(course_rtol(bf16, 256), InputError);
  // ref {1, -2, 4}, got {1.1, -2, 3.5}: errors 0.1, 0, 0.5. rtol 0.01: atol 0.04, allowed 0.05, 0.06,
  // 0.08 -> fractions 2, 0, 6.25: fails with 6.25.
  const CourseGate g = course_gate({1.1, -2, 3.5}, {1, -2, 4}, 0.01);
  CHECK(g.atol == doctest::Approx(0.04).epsilon(1e-15));
  CHECK(g.max_abs == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(g.gate_fraction == doctest::Approx(6.25).epsilon(1e-12));
  CHECK(!g.pass);
  // rtol 0.1: atol 0.4, allowed 0.5, 0.6, 0.8 -> 0.2, 0, 0.625: passes.
  const CourseGate h = course_gate({1.1, -2, 3.5}, {1, -2, 4}, 0.1);
  CHECK(h.gate_fraction == doctest::Approx(0.625).epsilon(1e-12));
  CHECK(h.pass);
  // A NaN output fails whatever its neighbours.
  const CourseGate n = course_gate({1.1, kNaN, 4}, {1, -2, 4}, 0.1);
  CHECK(n.nonfinite == 1);
  CHECK(!n.pass);
}

TEST_CASE("fp16 running sum of 1.0 stops at 2048 after 2048 additions") {
  // fp16 has p = 11: integers up to 2^11 = 2048 are exact; in [2048, 4096) the spacing is 2, so
  // 2048 + 1 = 2049 is a tie between 2048 (significand 1.0000000000, even) and 2050 (odd): it stays.
  const Fp16Stall s = fp16_running_sum_stall();
  CHECK(s.value == 2048);
  CHECK(s.additions == 2048);
  CHECK(s.spacing == 2);
}

TEST_CASE("int_pattern: the course's repeating integers times 0.013 and 0.017, multiplied in fp32") {
  const Problem p = generate("int_pattern:m=2,n=3,k=4,seed=0");
  // A's row-major t = 0..7 -> t mod 7 = 0 1 2 3 4 5 6 0; B's t = 0..11 -> t mod 5 = 0 1 2 3 4 0 1 2 3 4 0 1
  const float sa = 0.013f, sb = 0.017f;  // the constants as fp32 holds them
  const int ia[] = {0, 1, 2, 3, 4, 5, 6, 0}, ib[] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1};
  for (int t = 0; t < 8; ++t) CHECK(p.a.data[static_cast<std::size_t>(t)] == static_cast<double>(static_cast<float>(ia[t]) * sa));
  for (int t = 0; t < 12; ++t) CHECK(p.b.data[static_cast<std::size_t>(t)] == static_cast<double>(static_cast<float>(ib[t]) * sb));
  // fp32(0.013) = 13958644 2^-30 (significand 0xd4fdf4, 22 significant bits): 3 of it needs 24 bits
  // (exact), 5 of it 25 (rounded): A at t = 5 is the rounded fp32 product.
  CHECK(p.a(0, 3) == 3 * static_cast<double>(sa));
  CHECK(p.a(1, 1) != 5 * static_cast<double>(sa));
  // No nonzero entry is a binary fraction of 11 (fp16) or 8 (bf16) bits: every conversion rounds.
  for (const Matrix* m : {&p.a, &p.b})
    for (double v : m->data)
      if (v != 0) {
        CHECK(quantize(f16, v) != v);
        CHECK(quantize(bf16, v) != v);
      }
}

TEST_CASE("presets: lookup names the valid ones; panorama suites state the source's sizes") {
  CHECK(find_preset("experiment split-scalar", "panorama").name == "panorama");
  try {
    (void)find_preset("experiment split-scalar", "course");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("valid: panorama") != std::string::npos);
  }
  CHECK_THROWS_AS(preset_suite("quick", "panorama"), InputError);
  SuiteContext c;  // a CPU run: fpcert's default would use M = N = 32; the source's 1024 stays
  const auto a = preset_suite("accuracy-vs-k", "panorama").cases(c);
  REQUIRE(a.size() == 10);
  for (const auto& cs : a) CHECK(cs.spec.find("m=1024,n=1024") != std::string::npos);
  CHECK(a[8].spec.find("k=16384") != std::string::npos);
  const auto b = preset_suite("exponent-range", "panorama").cases(c);
  bool wide = false;
  for (const auto& cs : b) wide = wide || cs.spec.find("emin=-110,emax=110") != std::string::npos;
  CHECK(wide);  // the source's fixed range, not one tailored to the kernels' formats
  for (const auto& cs : preset_suite("cancellation", "panorama").cases(c)) CHECK_NOTHROW((void)canonical_spec(cs.spec));
}
