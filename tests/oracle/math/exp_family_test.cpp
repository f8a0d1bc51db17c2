// tests/oracle/math/exp_family_test.cpp — exp, exp2, exp10 (oracle/math/) against MPFR directly:
// mpfr_exp/exp2/exp10 at 200 bits, rounded into f32/f16/bf16 by mpfr_ref::round under every mode.
// 200 bits suffice: the result is transcendental except for the exact cases (2^n, 10^n), which MPFR
// computes exactly at 200 bits; for the others binary32's hardest cases lie far above 2^-200 relative
// distance from a rounding boundary (docs/elementwise.md, "Tests").
#include <doctest/doctest.h>

#include <mpfr.h>

#include <bit>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

const Format* const kDests[] = {&f32, &f16, &bf16};

// The independent reference: 200-bit MPFR, then mpfr_ref::round (no code shared with the fast path).
Rounded reference(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  mpfr_ref::Mpfr in(24), y(200);
  mpfr_set_flt(in, x, MPFR_RNDN);
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_clear_flags();
  if (f == Fn::Exp) mpfr_exp(y, in, MPFR_RNDN);
  else if (f == Fn::Exp2) mpfr_exp2(y, in, MPFR_RNDN);
  else mpfr_exp10(y, in, MPFR_RNDN);
  // Beyond even MPFR's widest exponent range (exp(-2^92)): MPFR returns 0 or Inf with a flag. The exact
  // value is positive and below 2^-2^60 (resp. above 2^2^60): any such value rounds alike in the 16- and
  // 32-bit formats, so its stand-in is MPFR's least positive (resp. largest finite) number.
  if (mpfr_underflow_p() && mpfr_zero_p(y)) mpfr_set_ui_2exp(y, 1, mpfr_get_emin() , MPFR_RNDN);
  if (mpfr_overflow_p() && mpfr_inf_p(y)) mpfr_set_ui_2exp(y, 1, mpfr_get_emax() - 1, MPFR_RNDN);
  const Rounded out = mpfr_ref::round(d, y, r, rbits);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return out;
}

Rounder rounder(const Format& d, Rounding m) { return {m, default_saturation(d), NanPayload::Preserve}; }

struct Tally {
  long checked = 0, differences = 0, mpfr = 0;
};

// Every destination and mode on x; `tables`/`bracket` let a test corrupt the fast path.
void check_all(Fn f, float x, std::uint32_t rbits, Tally& t, const ExpTables* tables = nullptr,
               double bracket = kExpBracket, bool report = true) {
  for (const Format* d : kDests)
    for (Rounding m : kAllRoundings) {
      const Rounder r = rounder(*d, m);
      const MathResult got = evaluate(f, x, *d, r, rbits, tables, bracket);
      const Rounded want = reference(f, x, *d, r, rbits);
      ++t.checked;
      t.mpfr += got.used_mpfr;
      // NaN: the code must be a NaN (the payload convention is round_double's, tested elsewhere).
      const bool ok = x != x ? (got.rounded.code & d->magnitude_mask()) > d->max_finite_code()
                                  : got.rounded.code == want.code;
      if (!ok) {
        ++t.differences;
        if (report && t.differences <= 5)
          std::printf("%s(%a = 0x%08x) %s %s: got 0x%llx want 0x%llx\n", std::string(to_string(f)).c_str(),
                      static_cast<double>(x), std::bit_cast<std::uint32_t>(x), std::string(d->tag).c_str(),
                      std::string(to_string(m)).c_str(), static_cast<unsigned long long>(got.rounded.code),
                      static_cast<unsigned long long>(want.code));
      }
    }
}

// Random inputs: half random bit patterns (the whole domain), half uniform in the range where the
// result is neither overflowed nor flushed ([lo, hi], the interesting range).
std::vector<float> sample(Fn f, long n, std::uint64_t key) {
  const double lo = f == Fn::Exp ? -104.0 : f == Fn::Exp2 ? -150.0 : -45.0;
  const double hi = f == Fn::Exp ? 89.0 : f == Fn::Exp2 ? 128.0 : 38.6;
  std::vector<float> v;
  v.reserve(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) {
    const auto w = philox_4x32(key, static_cast<std::uint64_t>(f), static_cast<std::uint64_t>(i));
    if (i % 2 == 0) v.push_back(std::bit_cast<float>(w[0]));
    else v.push_back(static_cast<float>(lo + (hi - lo) * (w[1] * 0x1p-32)));
  }
  return v;
}

}  // namespace

TEST_CASE("exp family: 10^5 random fp32 inputs each, f32/f16/bf16, every rounding mode, 0 differences") {
  const std::uint64_t key = test::seed() ^ 0x6d617468ULL;
  for (Fn f : kExpFns) {
    Tally t;
    long i = 0;
    for (float x : sample(f, 100000, key)) check_all(f, x, random_bits32(key + 1, static_cast<std::uint64_t>(i++)), t);
    std::printf("%s: %ld checks, %ld differences, %ld MPFR fall-backs\n", std::string(to_string(f)).c_str(), t.checked,
                t.differences, t.mpfr);
    CHECK(t.differences == 0);
  }
}

TEST_CASE("exp family: special values and boundaries") {
  std::vector<float> xs = {0.0f, -0.0f, __builtin_inff(), -__builtin_inff(), __builtin_nanf(""), -__builtin_nanf(""),
                           std::bit_cast<float>(0x7fa00000u) /* sNaN */, 1.0f, -1.0f,
                           std::bit_cast<float>(0x00000001u), std::bit_cast<float>(0x80000001u),  // tiny: f = 1 +- tiny
                           std::bit_cast<float>(0x7f7fffffu), std::bit_cast<float>(0xff7fffffu)};
  // Overflow and underflow thresholds of each destination, with their float neighbours: ln, log2 and
  // log10 of max, of the least subnormal and of half of it (the RN flush point), from MPFR.
  for (const Format* d : kDests) {
    mpfr_ref::Mpfr m(200), l(200);
    mpfr_ref::max_finite(m, *d);
    for (int which = 0; which < 3; ++which) {
      mpfr_ref::Mpfr a(200);
      if (which == 0) mpfr_set(a, m, MPFR_RNDN);
      else mpfr_set_ui_2exp(a, 1, d->emin() - d->frac_bits - (which == 2 ? 1 : 0), MPFR_RNDN);
      for (int fn = 0; fn < 3; ++fn) {
        if (fn == 0) mpfr_log(l, a, MPFR_RNDN);
        else if (fn == 1) mpfr_log2(l, a, MPFR_RNDN);
        else mpfr_log10(l, a, MPFR_RNDN);
        float x = mpfr_get_flt(l, MPFR_RNDN);
        for (int s = 0; s < 3; ++s) x = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) - 1);
        for (int s = 0; s < 6; ++s, x = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) + 1)) xs.push_back(x);
      }
    }
  }
  // Integers (exact cases 2^n and 10^n, and around the clamps) and the clamp points themselves.
  for (int n = -160; n <= 130; ++n) xs.push_back(static_cast<float>(n));
  for (float c : {90.0f, -127.0f, 129.0f, -183.0f, 39.0f, -55.0f, -105.0f, -152.0f, -46.0f}) {
    xs.push_back(c);
    xs.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(c) - 1));
    xs.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(c) + 1));
  }
  for (Fn f : kExpFns) {
    Tally t;
    std::uint32_t rb = 0x9e3779b9u;
    for (float x : xs) check_all(f, x, rb += 0x6d2b79f5u, t);
    std::printf("%s specials/boundaries: %ld checks, %ld differences, %ld MPFR\n", std::string(to_string(f)).c_str(),
                t.checked, t.differences, t.mpfr);
    CHECK(t.differences == 0);
  }
  // IEEE 754 9.2 by hand: exp(-Inf) = +0, exp(+Inf) = +Inf, exp(+-0) = 1 exactly, NaN -> NaN.
  const Rounder rn = Rounder::nearest(f32);
  CHECK(evaluate(Fn::Exp, -__builtin_inff(), f32, rn).rounded.code == 0u);
  CHECK(evaluate(Fn::Exp, __builtin_inff(), f32, rn).rounded.code == 0x7f800000u);
  CHECK(evaluate(Fn::Exp10, -0.0f, f32, rn).rounded.code == 0x3f800000u);
  CHECK((evaluate(Fn::Exp2, __builtin_nanf(""), f32, rn).rounded.code & 0x7fc00000u) == 0x7fc00000u);
}

// Hard cases. exp10f(-0x1.4de862p+3): the one exceptional input of CORE-MATH's cr_exp10f
// (nak5124/core-math, src/binary32/exp10/exp10f.c: result 0x1.435996p-35 - 0x1.fffffep-60, i.e. within
// 2^-25 ulp of a float), and its exact cases 10^1..10^10; exp2 of integers. Each against MPFR.
TEST_CASE("exp family: hard and exact cases from the literature") {
  struct Case { Fn f; float x; };
  std::vector<Case> cases = {{Fn::Exp10, -0x1.4de862p+3f}};
  for (int n = 1; n <= 10; ++n) cases.push_back({Fn::Exp10, static_cast<float>(n)});
  for (int n = -149; n <= 127; n += 7) cases.push_back({Fn::Exp2, static_cast<float>(n)});
  Tally t;
  for (const Case& c : cases) check_all(c.f, c.x, 0x12345678u, t);
  CHECK(t.differences == 0);
  // The CORE-MATH exceptional case lies next to a midpoint (rh + rl, rl = -2^-59 = -ulp/2 + 2^-83):
  // round-to-nearest needs MPFR; its answer is CORE-MATH's rh + rl rounded, the float 0x1.435996p-35.
  const MathResult rn = evaluate(Fn::Exp10, -0x1.4de862p+3f, f32, rounder(f32, Rounding::NearestEven));
  CHECK(rn.used_mpfr);
  CHECK(rn.rounded.code == std::bit_cast<std::uint32_t>(0x1.435996p-35f));
}

TEST_CASE("exp family: a wrong table entry or a loosened bound is caught by the MPFR comparison") {
  const std::uint64_t key = test::seed() ^ 0x77726f6eULL;
  // A table entry off by 2^-26 relative (far above the claimed 2^-48): an f32 result of an input with
  // k & 63 == 1 then lies on the wrong side of a rounding boundary about once in 2^(26-24) = 4.
  ExpTables bad = exp_tables();
  bad.two_j64[1] *= 1.0 + 0x1p-26;
  Tally t;
  long i = 0;
  for (float x : sample(Fn::Exp2, 4000, key)) check_all(Fn::Exp2, x, random_bits32(key, static_cast<std::uint64_t>(i++)), t, &bad, kExpBracket, false);
  std::printf("corrupted table: %ld differences in %ld checks\n", t.differences, t.checked);
  CHECK(t.differences > 0);
  // The same error with a claimed bound that covers it (bracket 2^-24 > 2^-26 + 2^-48 + rounding): sound again,
  // 0 differences, more MPFR fall-backs. The comparison tells an honest bound from a loosened one.
  Tally u;
  i = 0;
  for (float x : sample(Fn::Exp2, 4000, key)) check_all(Fn::Exp2, x, random_bits32(key, static_cast<std::uint64_t>(i++)), u, &bad, 0x1p-24, false);
  std::printf("corrupted table, bracket 2^-24: %ld differences, %ld MPFR in %ld checks\n", u.differences, u.mpfr, u.checked);
  CHECK(u.differences == 0);
}
