// tests/oracle/math/mpfr_only_test.cpp — cbrt, erf, erfc (oracle/math/elementary.cpp: special values and clamps, then MPFR's
// Ziv loop; no fast path yet) against MPFR computed another way: 200 bits toward zero plus a sticky bit (reference() below),
// rounded by mpfr_ref::round under every mode into f32, f16, bf16. The clamps' premises are checked with MPFR too.
#include <doctest/doctest.h>

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/math/eltwise_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

const Format* const kDests[] = {&f32, &f16, &bf16};
const Fn kFns[] = {Fn::Cbrt, Fn::Erf, Fn::Erfc, Fn::Sin, Fn::Cos, Fn::Tan, Fn::Sinpi, Fn::Cospi};  // activations: activations_test.cpp
const Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down,
                           Rounding::Stochastic};

Rounder rounder(const Format& d, Rounding m) { return Rounder{m, default_saturation(d), NanPayload::Preserve}; }

int mpfr_f(Fn f, mpfr_ptr y, mpfr_srcptr in, mpfr_rnd_t rnd) {
  switch (f) {
    case Fn::Cbrt: return mpfr_cbrt(y, in, rnd);
    case Fn::Erf: return mpfr_erf(y, in, rnd);
    case Fn::Sin: return mpfr_sin(y, in, rnd);
    case Fn::Cos: return mpfr_cos(y, in, rnd);
    case Fn::Tan: return mpfr_tan(y, in, rnd);
    case Fn::Sinpi: return mpfr_sinpi(y, in, rnd);
    case Fn::Cospi: return mpfr_cospi(y, in, rnd);
    default: return mpfr_erfc(y, in, rnd);
  }
}

// 200 bits toward zero, then one more bit: when MPFR says the result is inexact, the exact value lies strictly between y and
// its 200-bit neighbour away from zero, and so does y's 201-bit neighbour away from zero: that stand-in rounds like the exact
// value into any format of at most 57 bits (stochastic rounding: 24 + 32). Exact results (cbrt of a cube, erf(0), erfc(0))
// are rounded as they are. erfc of a huge x underflows even MPFR's exponent range (erfc(2^64) = e^(-2^128)): the exact value
// is then a positive number below 2^(-2^30), stood in for by 2^-1000 (positive, far below every format's least subnormal).
Rounded reference(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  mpfr_ref::Mpfr in(24), y(200), z(201);
  mpfr_set_flt(in, x, MPFR_RNDN);  // exact
  mpfr_clear_flags();
  const int inex = mpfr_f(f, y, in, MPFR_RNDZ);
  if (mpfr_nan_p(y)) return round_double(d, std::nan(""), r, rbits);
  if (mpfr_inf_p(y)) return {(mpfr_signbit(y) ? d.sign_mask() : 0) | d.inf_code(), 0};  // cbrt(+-Inf): exact
  if (mpfr_zero_p(y)) {
    if (mpfr_underflow_p() && inex != 0) return round_double(d, 0x1p-1000, r, rbits);  // erfc of a huge x: positive
    return round_double(d, mpfr_signbit(y) ? -0.0 : 0.0, r, rbits);
  }
  mpfr_set(z, y, MPFR_RNDN);  // exact
  if (inex != 0) {
    if (mpfr_cmp_ui(z, 0) > 0) mpfr_nextabove(z);
    else mpfr_nextbelow(z);
  }
  return mpfr_ref::round(d, z, r, rbits);
}

bool same(const Format& d, std::uint64_t a, std::uint64_t b) {
  return a == b || (std::isnan(to_double(d, a)) && std::isnan(to_double(d, b)));
}

struct Count {
  std::int64_t checks = 0, differ = 0, mpfr = 0;
};

void check(Fn f, float x, Count& c, std::uint64_t seed, std::uint64_t i) {
  for (const Format* d : kDests)
    for (Rounding m : kModes) {
      const Rounder r = rounder(*d, m);
      const std::uint32_t rbits = m == Rounding::Stochastic ? philox_4x32(seed, 0x5eed, i)[3] : 0;
      const MathResult got = evaluate(f, x, *d, r, rbits);
      const Rounded want = reference(f, x, *d, r, rbits);
      ++c.checks;
      c.mpfr += got.used_mpfr;
      if (!same(*d, got.rounded.code, want.code)) {
        if (++c.differ <= 5)
          std::printf("%s(0x%08x) into %s mode %d: got 0x%llx, MPFR 0x%llx (FPCERT_TEST_SEED=%llu)\n", std::string(to_string(f)).c_str(),
                      std::bit_cast<std::uint32_t>(x), std::string(d->tag).c_str(), static_cast<int>(m),
                      static_cast<unsigned long long>(got.rounded.code), static_cast<unsigned long long>(want.code),
                      static_cast<unsigned long long>(seed));
      }
    }
}

float sample(Fn f, std::uint64_t seed, std::uint64_t i) {
  const auto w = philox_4x32(seed, 0xcbe7, i);
  const double u = static_cast<double>((static_cast<std::uint64_t>(w[1]) << 21) ^ w[2]) * 0x1p-53;  // [0, 1)
  switch (i % 3) {
    case 0: return std::bit_cast<float>(w[0]);  // any pattern: the whole domain, NaNs and huge values included
    case 1:  // the interesting range: cbrt over every binade of both signs; erf [-8, 8]; erfc [-8, 13] (past the clamps)
      if (f == Fn::Cbrt) return static_cast<float>((w[3] & 1 ? -1.0 : 1.0) * std::exp2(-149.0 + u * 277.0));
      if (f == Fn::Sin || f == Fn::Cos || f == Fn::Tan) return static_cast<float>(-100.0 + 200.0 * u);
      if (f == Fn::Sinpi || f == Fn::Cospi) return static_cast<float>(-8.0 + 16.0 * u);
      return static_cast<float>(f == Fn::Erf ? -8.0 + 16.0 * u : -8.0 + 21.0 * u);
    default:  // tiny and moderate: +-2^(-40 .. 4) (erf ~ 2x/sqrt(pi), erfc ~ 1 - that: directed modes straddle 1)
      return static_cast<float>((w[3] & 1 ? -1.0 : 1.0) * std::exp2(-40.0 + u * 44.0));
  }
}

}  // namespace

TEST_CASE("cbrt, erf, erfc, sin, cos, tan, sinpi, cospi: evaluate equals MPFR's 200-bit result rounded, every destination and mode, random inputs") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kFns) {
    Count c;
    for (std::uint64_t i = 0; i < 6000; ++i) check(f, sample(f, seed, i), c, seed, i);
    std::printf("%s: %lld checks (6000 inputs x 18 destinations/modes), %lld differences, %lld decided by MPFR\n",
                std::string(to_string(f)).c_str(), static_cast<long long>(c.checks), static_cast<long long>(c.differ),
                static_cast<long long>(c.mpfr));
    CHECK(c.checks == 6000 * 18);
    CHECK(c.differ == 0);
    CHECK(c.mpfr > 0);  // the comparison reaches MPFR's Ziv loop, not only the special values
  }
}

TEST_CASE("cbrt, erf, erfc, sin, cos, tan, sinpi, cospi: special values, exact cubes, clamps and thresholds, each +-3 codes") {
  const std::uint64_t seed = test::seed();
  std::vector<double> xs = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-149, -0x1p-149, 0x1p-126, 1.0, -1.0};
  // cbrt: cubes k^3 (exact results: MPFR's ternary value 0 in Ziv's loop), 2^(3k) and 2^(3k+1)
  for (int k = 1; k <= 300; k += (k < 40 ? 1 : 7)) xs.push_back(static_cast<double>(k) * k * k), xs.push_back(-static_cast<double>(k) * k * k);
  for (int k = -49; k <= 42; ++k) xs.push_back(std::ldexp(1.0, 3 * k)), xs.push_back(std::ldexp(1.0, 3 * k + 1));
  // erf/erfc: the clamps (+-7, 12), where f32 results reach +-1 / 2 (3.92), erfc's f32 underflow thresholds (9.19, 10.05),
  // the largest finite, powers of two from tiny to 16
  for (double v : {7.0, -7.0, 12.0, -12.0, 3.92, -3.92, 9.19, 10.05, 26.5, 3.4028234663852886e38, -3.4028234663852886e38})
    xs.push_back(v);
  for (int k = -149; k <= 4; ++k) xs.push_back(std::ldexp(1.0, k)), xs.push_back(-std::ldexp(1.0, k));
  // trig: floats nearest k pi/4 (results near 0, +-1, tan's poles), integers and half-integers (sinpi/cospi exact results)
  for (int k = 1; k <= 100; ++k) xs.push_back(k * 0.78539816339744830962), xs.push_back(-k * 0.78539816339744830962);
  for (int k = -16; k <= 16; ++k) xs.push_back(k * 0.5), xs.push_back(k * 0.5 + 0.25);
  for (Fn f : kFns) {
    Count c;
    std::uint64_t i = 0;
    for (double v : xs) {
      const std::uint32_t b = std::bit_cast<std::uint32_t>(static_cast<float>(v));
      const bool finite = std::isfinite(v);
      for (int d = finite ? -3 : 0; d <= (finite ? 3 : 0); ++d) {
        const std::uint32_t code = b + static_cast<std::uint32_t>(d);
        if (finite && ((code ^ b) >> 31)) continue;  // stepped past zero into the other sign's codes
        check(f, std::bit_cast<float>(code), c, seed, i++);
      }
    }
    std::printf("%s special: %lld checks, %lld differences\n", std::string(to_string(f)).c_str(), static_cast<long long>(c.checks),
                static_cast<long long>(c.differ));
    CHECK(c.checks > 10000);
    CHECK(c.differ == 0);
  }
}

TEST_CASE("cbrt, erf, erfc: hand-checked values and the clamps' premises") {
  const Rounder rn = rounder(f32, Rounding::NearestEven);
  // cbrt(27) = 3 exactly, cbrt(-8) = -2; cbrt(2) = 1.2599210498948731647... -> 0x3fa14518 (1.25992107391357421875: the
  // neighbours 1.2599209547 and 1.2599211931 are farther)
  CHECK(evaluate(Fn::Cbrt, 27.0f, f32, rn).rounded.code == 0x40400000u);
  CHECK(evaluate(Fn::Cbrt, -8.0f, f32, rn).rounded.code == 0xc0000000u);
  CHECK(evaluate(Fn::Cbrt, 2.0f, f32, rn).rounded.code == 0x3fa14518u);
  // erf(1) = 0.84270079294971486934... -> 0x3f57bb3d (0.842700779438; neighbours 0.842700720 and 0.842700839)
  CHECK(evaluate(Fn::Erf, 1.0f, f32, rn).rounded.code == 0x3f57bb3du);
  // erfc(+-0) = 1, erfc(-Inf) = 2, erfc(+Inf) = +0, erf(-Inf) = -1 exactly
  CHECK(evaluate(Fn::Erfc, -0.0f, f32, rn).rounded.code == 0x3f800000u);
  CHECK(evaluate(Fn::Erfc, -INFINITY, f32, rn).rounded.code == 0x40000000u);
  CHECK(evaluate(Fn::Erfc, INFINITY, f32, rn).rounded.code == 0u);
  CHECK(evaluate(Fn::Erf, -INFINITY, f32, rn).rounded.code == 0xbf800000u);
  // Beyond the clamps the directed modes see the side of the stand-in: erf(8) rounds down to the float below 1 (1 - 2^-24),
  // erfc(-8) toward zero to the float below 2, erfc(20) up to the least subnormal.
  CHECK(evaluate(Fn::Erf, 8.0f, f32, rounder(f32, Rounding::Down)).rounded.code == 0x3f7fffffu);
  CHECK(evaluate(Fn::Erfc, -8.0f, f32, rounder(f32, Rounding::TowardZero)).rounded.code == 0x3fffffffu);
  CHECK(evaluate(Fn::Erfc, 20.0f, f32, rounder(f32, Rounding::Up)).rounded.code == 1u);
  // The clamps' premises (elementary.cpp, mpfr_only_special): erfc(7) < 2^-74 (1 - erf and 2 - erfc within (.., 2^-56) of
  // 1 and 2 beyond +-7) and erfc(12) < 2^-211 (below 2^-182: under half the least subnormal, the 32 stochastic bits zero).
  mpfr_ref::Mpfr v(200), t(200);
  mpfr_set_ui(v, 7, MPFR_RNDN);
  mpfr_erfc(t, v, MPFR_RNDU);
  CHECK(mpfr_cmp_d(t, 0x1p-74) < 0);
  mpfr_set_ui(v, 12, MPFR_RNDN);
  mpfr_erfc(t, v, MPFR_RNDU);
  CHECK(mpfr_cmp_d(t, 0x1p-211) < 0);
  // The comparison can fail: erf's result held against erfc's reference differs on most inputs.
  const std::uint64_t seed = test::seed();
  std::int64_t differ = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const float x = sample(Fn::Erf, seed, 3 * i + 1);
    differ += !same(f32, evaluate(Fn::Erf, x, f32, rn).rounded.code, reference(Fn::Erfc, x, f32, rn, 0).code);
  }
  CHECK(differ > 150);
}

TEST_CASE("erf, erfc, trig: ref_rn leaves every input undecided (no fast path), no device sweep; cbrt's is exact") {
  for (Fn f : kFns) {
    CHECK(is_mpfr_only(f));  // the host's evaluate() takes every one of them through MPFR
    const RefRn r = ref_rn(f, 1.5f, kCodeF32, exp_tables(), log_tables());
    CHECK(r.decided == (f == Fn::Cbrt));  // cbrt_ref_rn decides it exactly (root_test.cpp)
    CHECK(has_device_ref(f) == (f == Fn::Cbrt));
  }
  CHECK_FALSE(is_mpfr_only(Fn::Exp));
}

TEST_CASE("sin, cos, tan, sinpi, cospi: IEEE 754 9.2 special values and hand-checked results") {
  const Rounder rn = rounder(f32, Rounding::NearestEven);
  auto code = [&](Fn f, float x) { return static_cast<std::uint32_t>(evaluate(f, x, f32, rn).rounded.code); };
  CHECK(code(Fn::Sin, -0.0f) == 0x80000000u);
  CHECK(code(Fn::Cos, -0.0f) == 0x3f800000u);
  CHECK(std::isnan(std::bit_cast<float>(code(Fn::Cos, INFINITY))));  // invalid
  CHECK(std::isnan(std::bit_cast<float>(code(Fn::Sinpi, -INFINITY))));
  CHECK(code(Fn::Sinpi, 2.0f) == 0u);            // sinPi(+n) = +0
  CHECK(code(Fn::Sinpi, -3.0f) == 0x80000000u);  // sinPi(-n) = -0
  CHECK(code(Fn::Sinpi, 0x1p30f) == 0u);         // every float >= 2^23 is an integer
  CHECK(code(Fn::Cospi, 1.5f) == 0u);            // cosPi(n + 1/2) = +0
  CHECK(code(Fn::Cospi, -1.0f) == 0xbf800000u);  // (-1)^1
  CHECK(code(Fn::Cospi, 0x1.000002p23f) == 0xbf800000u);  // 8388609: odd
  CHECK(code(Fn::Sinpi, 0.5f) == 0x3f800000u);   // exact 1 (MPFR's ternary value 0)
  CHECK(code(Fn::Sinpi, 0.25f) == 0x3f3504f3u);  // sqrt(2)/2 = 0.70710678118654752... -> 0x3f3504f3
  // sin 1 = 0.8414709848078965... -> 0x3f576aa4; cos 1 = 0.5403023058681398... -> 0x3f0a5140; tan 1 = 1.5574077246549023... -> 0x3fc75923
  CHECK(code(Fn::Sin, 1.0f) == 0x3f576aa4u);
  CHECK(code(Fn::Cos, 1.0f) == 0x3f0a5140u);
  CHECK(code(Fn::Tan, 1.0f) == 0x3fc75923u);
}
