// tests/oracle/exact_sum_test.cpp — ExactSum and exact_dot against MPFR; the MPFR dot itself
// against values known by construction.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "base/philox.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/mpfr_to_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using mpfr_ref::Mpfr;
using test::mpfr_to_ref;

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// Bit-for-bit equality of two references (signed zeros and NaN payloads included).
bool same_ref(const RefValue& x, const RefValue& y) {
  return bits(x.hi) == bits(y.hi) && bits(x.lo) == bits(y.lo) && x.tail == y.tail;
}

std::string show(const RefValue& v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{hi %a, lo %a, tail %d}", v.hi, v.lo, v.tail);
  return buf;
}

/// A random finite double with a random sign and exponent in [emin, emax] (subnormals when emin < -1022).
double random_double(std::uint64_t key, std::uint64_t ctr, int emin, int emax) {
  const auto w = philox_4x32(key, 7, ctr);
  const int e = emin + static_cast<int>(w[0] % static_cast<std::uint32_t>(emax - emin + 1));
  const double frac = 1.0 + (static_cast<double>(w[1] >> 11) * 0x1p-21 + static_cast<double>(w[2]) * 0x1p-53);
  double x = std::ldexp(frac, e);  // rounds correctly into the subnormal range
  if (w[3] & 1) x = -x;
  if ((w[3] >> 1) % 17 == 0) x = std::ldexp(1.0, e) * ((w[3] & 4) ? -1 : 1);  // some powers of two
  return x;
}

}  // namespace

TEST_CASE("exact_dot_mpfr: values known by construction") {
  // 1e30 * 1 + 1 * 1 + (-1e30) * 1 = 1 exactly (1e30 is a double; its sum with 1 is not).
  {
    const double x[] = {1e30, 1.0, -1e30}, y[] = {1.0, 1.0, 1.0};
    const DotRef d = exact_dot_mpfr(x, y, 3);
    CHECK(same_ref(d.value, {1.0, 0.0, 0}));
    CHECK(d.status == kRefOk);
    // sum |x_i y_i| = 2e30 + 1 exactly; rounded upward it is the double just above 2e30
    // (2e30 + 1 is not a double: the spacing of doubles near 2e30 is 2^48).
    CHECK(d.abs_sum == std::nextafter(2e30, INFINITY));
  }
  // x, -x pairs cancel to exactly zero: the reference is +0 with no tail.
  {
    const double x[] = {0.1, 3.0, -0.1, -3.0, 1e-300, -1e-300}, y[] = {0.7, 1.0 / 3, 0.7, 1.0 / 3, 5.0, 5.0};
    const DotRef d = exact_dot_mpfr(x, y, 6);
    CHECK(same_ref(d.value, {0.0, 0.0, 0}));
  }
  // 1 + 2^-60 + 2^-130 (three products): hi = 1, lo = 2^-60, tail = +1 (2^-130 remains).
  {
    const double x[] = {1.0, 0x1p-30, 0x1p-65}, y[] = {1.0, 0x1p-30, 0x1p-65};
    const DotRef d = exact_dot_mpfr(x, y, 3);
    CHECK(same_ref(d.value, {1.0, 0x1p-60, 1}));
  }
  // 1 - 2^-54 - 2^-200 lies just below the midpoint 1 - 2^-54 of 1 - 2^-53 and 1: hi = 1 - 2^-53,
  // lo = RN(2^-54 - 2^-200) = 2^-54, tail = -1.
  {
    const double x[] = {1.0, -0x1p-27, -0x1p-100}, y[] = {1.0, 0x1p-27, 0x1p-100};
    const DotRef d = exact_dot_mpfr(x, y, 3);
    CHECK(same_ref(d.value, {1.0 - 0x1p-53, 0x1p-54, -1}));
  }
  // The product of the smallest subnormal with itself is 2^-2148: hi = lo = 0, tail = +1, tiny.
  {
    const double x[] = {0x1p-1074}, y[] = {-0x1p-1074};
    const DotRef d = exact_dot_mpfr(x, y, 1);
    CHECK(d.value.hi == 0.0);
    CHECK(std::signbit(d.value.hi));  // RN of a negative tiny value is -0
    CHECK(d.value.tail == -1);
    CHECK((d.status & kRefTiny) != 0);
  }
  // 2^1000 * 2^100 overflows double: hi = +Inf, overflow status.
  {
    const double x[] = {0x1p1000}, y[] = {0x1p100};
    const DotRef d = exact_dot_mpfr(x, y, 1);
    CHECK(d.value.hi == INFINITY);
    CHECK((d.status & kRefOverflow) != 0);
  }
}

TEST_CASE("exact_dot_mpfr: rounding a reference into fp32 decides ties with the tail") {
  // The exact sums below sit on or next to the fp32 midpoint 1 + 2^-24 between 1 and 1 + 2^-23.
  const Rounder rn = Rounder::nearest(f32);
  struct Case {
    double x[3];
    std::uint64_t want;  // fp32 bits of RN(exact)
    const char* why;
  } cases[] = {
      {{1.0, 0x1p-24, 0.0}, 0x3F800000, "exactly the midpoint: ties to even gives 1"},
      {{1.0, 0x1p-24, 0x1p-200}, 0x3F800001, "just above the midpoint: 1 + 2^-23"},
      {{1.0, 0x1p-24, -0x1p-200}, 0x3F800000, "just below the midpoint: 1"},
  };
  for (const auto& c : cases) {
    const double y[] = {1.0, 1.0, 1.0};
    const DotRef d = exact_dot_mpfr(c.x, y, 3);
    INFO(c.why);
    CHECK(round_ref(f32, d.value, rn).code == c.want);
    // and the MPFR rounding of the same exact value, built independently, agrees
    Mpfr s(400);
    mpfr_set_d(s, c.x[0], MPFR_RNDN);
    mpfr_add_d(s, s, c.x[1], MPFR_RNDN);
    mpfr_add_d(s, s, c.x[2], MPFR_RNDN);
    CHECK(mpfr_ref::round(f32, s, rn).code == c.want);
  }
}

TEST_CASE("ExactSum: sums of doubles and products against MPFR (random, full exponent range)") {
  const std::uint64_t key = test::seed() + 11;
  ExactSum sum;
  Mpfr s(4600), p(120);
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const auto w = philox_4x32(key, 1, static_cast<std::uint64_t>(trial));
    const int n = 1 + static_cast<int>(w[0] % 40);
    // Exponent ranges: narrow, wide, everything (subnormals to near overflow).
    const int kind = static_cast<int>(w[1] % 4);
    const int emin = kind == 0 ? -5 : kind == 1 ? -300 : kind == 2 ? -1074 : 400;
    const int emax = kind == 0 ? 5 : kind == 1 ? 300 : kind == 2 ? 1023 : 1023;
    sum.clear();
    mpfr_set_zero(s, 1);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t ctr = static_cast<std::uint64_t>(trial) * 1000 + static_cast<std::uint64_t>(i) * 2;
      const double a = random_double(key, ctr, emin, emax), b = random_double(key, ctr + 1, emin, emax);
      if (w[2] & (1u << i % 32)) {
        sum.add(a);
        mpfr_add_d(s, s, a, MPFR_RNDN);  // exact at 4600 bits
      } else {
        sum.add_product(a, b);
        mpfr_set_d(p, a, MPFR_RNDN);
        mpfr_mul_d(p, p, b, MPFR_RNDN);  // exact: 106 bits
        mpfr_add(s, s, p, MPFR_RNDN);
      }
      if ((w[3] >> (i % 32)) & 1 && i > 0) {  // cancel a previous addend sometimes
        sum.add(-a);
        mpfr_sub_d(s, s, a, MPFR_RNDN);
      }
    }
    INFO("trial " << trial << " (seed " << test::seed() << ")");
    {
      ExactSum copy = sum;
      CHECK(bits(copy.round_nearest()) == bits(mpfr_get_d(s, MPFR_RNDN)));
    }
    {
      ExactSum copy = sum;
      CHECK(bits(copy.round_up()) == bits(mpfr_get_d(s, MPFR_RNDU)));
    }
    {
      ExactSum copy = sum;
      CHECK(copy.sign() == mpfr_sgn(s.get()));
    }
    std::uint8_t st = 0;
    const RefValue got = sum.finalize(st);
    RefValue want = mpfr_to_ref(s);
    std::uint8_t want_st = 0;
    if (!mpfr_zero_p(s.get()) && mpfr_get_exp(s.get()) < -968) want_st |= kRefTiny;
    if (std::isinf(want.hi)) {
      want = {want.hi, 0.0, 0};
      want_st |= kRefOverflow;
    }
    INFO("got " << show(got) << " want " << show(want));
    CHECK(same_ref(got, want));
    CHECK(st == want_st);
    ++checked;
  }
  CHECK(checked == 3000);
}

TEST_CASE("ExactSum: carries across many chunks, cancellation to zero and to a subnormal") {
  ExactSum s;
  // 2^1000 + 2^-1000 - 2^1000: every chunk between the two is touched by the carries.
  s.add(0x1p1000);
  s.add(0x1p-1000);
  s.add(-0x1p1000);
  std::uint8_t st = 0;
  CHECK(same_ref(s.finalize(st), {0x1p-1000, 0.0, 0}));
  s.clear();
  // (1 + 2^-52)^2 - 1 - 2^-51 = 2^-104 exactly; a product with 106 significant bits.
  s.add_product(1.0 + 0x1p-52, 1.0 + 0x1p-52);
  s.add(-1.0);
  s.add(-0x1p-51);
  st = 0;
  CHECK(same_ref(s.finalize(st), {0x1p-104, 0.0, 0}));
  s.clear();
  // A sum that cancels to the smallest subnormal: 3 * 2^-1074 - 2^-1073.
  s.add_product(3.0, 0x1p-1074);
  s.add(-0x1p-1073);
  st = 0;
  CHECK(same_ref(s.finalize(st), {0x1p-1074, 0.0, 0}));
  CHECK(st == kRefTiny);
  s.clear();
  // Exactly zero after many terms.
  for (int i = 0; i < 1000; ++i) s.add_product(0.1 * i, 1e-3 * i);
  for (int i = 999; i >= 0; --i) s.add_product(-0.1 * i, 1e-3 * i);
  CHECK(s.sign() == 0);
  st = 0;
  CHECK(same_ref(s.finalize(st), {}));
}

TEST_CASE("exact_dot equals exact_dot_mpfr bit for bit (random vectors, specials, strides)") {
  const std::uint64_t key = test::seed() + 12;
  for (int trial = 0; trial < 400; ++trial) {
    const auto w = philox_4x32(key, 2, static_cast<std::uint64_t>(trial));
    const std::size_t n = w[0] % 300;
    const int kind = static_cast<int>(w[1] % 5);
    std::vector<double> x(2 * n + 1), y(n + 1);
    for (std::size_t i = 0; i < 2 * n + 1; ++i) {
      const std::uint64_t ctr = static_cast<std::uint64_t>(trial) * 4000 + i;
      switch (kind) {
        case 0: x[i] = static_cast<float>(random_double(key, ctr, -20, 20)); break;     // fp32 values
        case 1: x[i] = static_cast<float>(random_double(key, ctr, -149, 127)); break;   // fp32 full range
        case 2: x[i] = random_double(key, ctr, -1074, 1023); break;                     // fp64 full range
        case 3: x[i] = random_double(key, ctr, 500, 1023); break;                       // overflowing sums
        default: x[i] = random_double(key, ctr, -1074, -900); break;                    // tiny
      }
    }
    for (std::size_t i = 0; i < n + 1; ++i) y[i] = x[2 * n - i] * ((i & 1) ? -1 : 1);
    if (kind == 0 && n > 2 && (w[2] & 1)) y[n / 2] = (w[2] & 2) ? INFINITY : NAN;
    if (kind == 0 && n > 2 && (w[2] & 4)) x[0] = -INFINITY;
    const DotRef f = exact_dot(x.data(), y.data(), n, 2, 1), m = exact_dot_mpfr(x.data(), y.data(), n, 2, 1);
    INFO("trial " << trial << " kind " << kind << " n " << n << " fast " << show(f.value) << " mpfr " << show(m.value));
    if (std::isnan(m.value.hi)) {
      CHECK(std::isnan(f.value.hi));
    } else {
      CHECK(same_ref(f.value, m.value));
    }
    CHECK(f.status == m.status);
    CHECK(bits(f.abs_sum) == bits(m.abs_sum));
  }
}
