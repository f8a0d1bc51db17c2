// tests/oracle/math/root_test.cpp — sqrt and rsqrt (oracle/math/elementary.cpp's integer square roots, eltwise_ref.hpp's
// root_ref_rn) against MPFR directly: mpfr_sqrt / mpfr_rec_sqrt at 200 bits rounded by mpfr_ref::round. 200 bits decide
// every inexact case (sqrt and rsqrt of a 24-bit input are never within 2^-100 relative of a 57-bit boundary unless equal
// to it: then they are exact, and MPFR computes exact results exactly: its ternary value 0).
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
const Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down,
                           Rounding::Stochastic};

Rounder rounder(const Format& d, Rounding m) { return Rounder{m, default_saturation(d), NanPayload::Preserve}; }

Rounded reference(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits) {
  mpfr_ref::Mpfr in(24), y(200);
  mpfr_set_flt(in, x, MPFR_RNDN);
  if (f == Fn::Sqrt) mpfr_sqrt(y, in, MPFR_RNDN);
  else mpfr_rec_sqrt(y, in, MPFR_RNDN);
  // rsqrt(-0) = -Inf in IEEE 754 9.2.1 (MPFR's mpfr_rec_sqrt gives +Inf: its manual says so); an Inf result of a zero
  // input is exact (divide by zero) in every mode; sqrt(-0) = -0.
  if (f == Fn::Rsqrt && x == 0) return {(std::signbit(x) ? d.sign_mask() : 0) | d.inf_code(), 0};
  if (mpfr_inf_p(y)) return {(mpfr_signbit(y) ? d.sign_mask() : 0) | d.inf_code(), 0};
  if (mpfr_nan_p(y)) return round_double(d, std::nan(""), r, rbits);
  if (mpfr_zero_p(y)) return round_double(d, mpfr_signbit(y) ? -0.0 : 0.0, r, rbits);
  return mpfr_ref::round(d, y, r, rbits);
}

const CodeFormat& code_of(const Format& d) { return &d == &f32 ? kCodeF32 : &d == &f16 ? kCodeF16 : kCodeBf16; }

struct Count {
  std::int64_t checks = 0, differ = 0, mpfr = 0, rn_differ = 0, undecided = 0;
};

bool same(const Format& d, std::uint64_t a, std::uint64_t b) {
  return a == b || (std::isnan(to_double(d, a)) && std::isnan(to_double(d, b)));
}

/// evaluate() under every destination and mode, and root_ref_rn (the device's reference) under nearest-even.
void check(Fn f, float x, Count& c, std::uint64_t seed, std::uint64_t i) {
  for (const Format* d : kDests) {
    for (Rounding m : kModes) {
      const Rounder r = rounder(*d, m);
      const std::uint32_t rbits = m == Rounding::Stochastic ? random_bits32(seed ^ 0x7371, i) : 0;
      const MathResult got = evaluate(f, x, *d, r, rbits);
      const Rounded want = reference(f, x, *d, r, rbits);
      ++c.checks;
      c.mpfr += got.used_mpfr;
      if (!same(*d, got.rounded.code, want.code) && ++c.differ <= 8)
        MESSAGE(to_string(f) << "(" << std::hexfloat << x << ") into " << d->tag << " " << to_string(m) << ": got 0x" << std::hex
                              << got.rounded.code << " want 0x" << want.code);
    }
    const RefRn rn = root_ref_rn(f == Fn::Rsqrt, x, code_of(*d));
    c.undecided += !rn.decided;
    const Rounded want = reference(f, x, *d, rounder(*d, Rounding::NearestEven), 0);
    if (!same(*d, rn.code, want.code) && ++c.rn_differ <= 8)
      MESSAGE("root_ref_rn " << to_string(f) << "(" << std::hexfloat << x << ") into " << d->tag << ": got 0x" << std::hex << rn.code
                             << " want 0x" << want.code);
  }
}

}  // namespace

TEST_CASE("sqrt, rsqrt: random inputs against MPFR in f32, f16, bf16 under every mode, 0 differences, no MPFR") {
  const std::uint64_t seed = test::seed();
  std::printf("root_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  for (Fn f : kRootFns) {
    Count c;
    for (std::uint64_t i = 0; i < 60000; ++i) {
      const auto w = philox_4x32(seed, 0x727274, i);
      float x;
      if (i % 3 == 0) x = std::bit_cast<float>(w[0]);                       // any pattern (negatives, NaN, subnormals)
      else if (i % 3 == 1) x = std::bit_cast<float>(w[0] & 0x7fffffffu);  // positive, every binade
      else x = static_cast<float>(1.0 + w[1] * 0x1p-32 * 3.0);             // [1, 4): results in [1, 2) and (1/2, 1]
      check(f, x, c, seed, i);
    }
    MESSAGE(to_string(f) << ": " << c.checks << " checks, " << c.mpfr << " decided by MPFR");
    CHECK(c.checks == 60000 * 18);
    CHECK(c.differ == 0);
    CHECK(c.rn_differ == 0);
    CHECK(c.undecided == 0);
    CHECK(c.mpfr == 0);  // decided exactly, always
  }
}

TEST_CASE("sqrt, rsqrt: 10^6 random inputs per function into f32 under nearest-even (evaluate and root_ref_rn), 0 differences") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kRootFns) {
    std::int64_t differ = 0, rn_differ = 0, undecided = 0;
    const Rounder rn = rounder(f32, Rounding::NearestEven);
    for (std::uint64_t i = 0; i < 1000000; ++i) {
      const auto w = philox_4x32(seed, 0x72727431, i);
      const float x = std::bit_cast<float>(w[0] & 0x7fffffffu);
      if (std::isnan(x)) continue;
      const Rounded want = reference(f, x, f32, rn, 0);
      differ += evaluate(f, x, f32, rn).rounded.code != want.code;
      const RefRn r = root_ref_rn(f == Fn::Rsqrt, x, kCodeF32);
      undecided += !r.decided;
      if (r.code != want.code && ++rn_differ <= 5) MESSAGE(to_string(f) << "(" << std::hexfloat << x << ")");
    }
    CHECK(differ == 0);
    CHECK(rn_differ == 0);
    CHECK(undecided == 0);
  }
}

TEST_CASE("sqrt, rsqrt: exact results, ties of f16/bf16, thresholds, special values") {
  const std::uint64_t seed = test::seed();
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -0x1p-149f, 0x1p-149f, 0x1p-126f, 1.0f, 0x1.fffffep127f, 2.0f};
  for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0f, k));  // sqrt exact for even k, rsqrt exact for even k
  for (int k = 1; k <= 4096; ++k) xs.push_back(static_cast<float>(k * k));  // perfect squares (exact sqrt)
  // Ties: a midpoint of f16 (12 significant bits) or bf16 (9 bits) squared has at most 24 bits: an fp32 input whose sqrt
  // is exactly halfway between two f16 (bf16) codes, decided by the even rule. (1 + (2j+1) 2^-11)^2 and the bf16 analogue.
  for (int j = 0; j < 1024; j += 3) {
    const double m16 = 1.0 + (2 * j + 1) * 0x1p-11, m8 = 1.0 + (2 * (j % 128) + 1) * 0x1p-8;
    xs.push_back(static_cast<float>(m16 * m16));
    xs.push_back(static_cast<float>(m8 * m8 * 4.0));
    xs.push_back(static_cast<float>(1.0 / (m16 * m16)));  // rsqrt near an f16 midpoint (not exact: 1/m^2 is not dyadic)
  }
  // The overflow and underflow thresholds of f16 and bf16: sqrt(65520^2) (ties to Inf), 1/65520^2 for rsqrt, and the
  // half least subnormals squared; +-2 codes around each.
  for (double v : {65520.0 * 65520.0, 65504.0 * 65504.0, 1.0 / (65520.0 * 65520.0), 0x1p-50, 0x1p-48, 0x1p-266 * 0x1p10, 0x1p-126})
    for (int d = -2; d <= 2; ++d) xs.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) + static_cast<std::uint32_t>(d)));
  for (int d = -64; d <= 64; ++d) xs.push_back(std::bit_cast<float>(0x3f800000u + static_cast<std::uint32_t>(d)));  // around 1
  Count c;
  for (Fn f : kRootFns)
    for (std::size_t i = 0; i < xs.size(); ++i) check(f, xs[i], c, seed, i);
  CHECK(c.differ == 0);
  CHECK(c.rn_differ == 0);
  CHECK(c.undecided == 0);
  // By hand: sqrt(2^-148) = 2^-74 exactly under round-down; rsqrt(4) = 0.5; rsqrt(-0) = -Inf, sqrt(-0) = -0; a tie into f16:
  // sqrt((1 + 2^-11)^2) = 1 + 2^-11, halfway between 1 and 1 + 2^-10: the even code 0x3c00.
  const Rounder rd = rounder(f32, Rounding::Down), rn = rounder(f32, Rounding::NearestEven), rn16 = rounder(f16, Rounding::NearestEven);
  CHECK(to_double(f32, evaluate(Fn::Sqrt, 0x1p-148f, f32, rd).rounded.code) == 0x1p-74);
  CHECK(to_double(f32, evaluate(Fn::Rsqrt, 4.0f, f32, rd).rounded.code) == 0.5);
  CHECK(evaluate(Fn::Rsqrt, -0.0f, f32, rn).rounded.code == 0xff800000u);
  CHECK(evaluate(Fn::Sqrt, -0.0f, f32, rn).rounded.code == 0x80000000u);
  const float tie = static_cast<float>((1.0 + 0x1p-11) * (1.0 + 0x1p-11));
  CHECK(evaluate(Fn::Sqrt, tie, f16, rn16).rounded.code == 0x3c00u);
  CHECK(root_ref_rn(false, tie, kCodeF16).code == 0x3c00u);
  CHECK(root_ref_rn(false, std::nextafter(tie, 2.0f), kCodeF16).code == 0x3c01u);  // just above the tie: up
}

TEST_CASE("root_sign: exact at a tie, the right sign one unit of a 25-bit midpoint away") {
  // sqrt(x) for x = m^2 is exactly m: sign 0; m +- 2^-24 (25 significant bits, as a midpoint of f32 has) give -1 and +1.
  const double m = 1.0 + 0x1p-11;
  const double x = m * m;
  CHECK(root_sign(false, x, m) == 0);
  CHECK(root_sign(false, x, m + 0x1p-24) == -1);
  CHECK(root_sign(false, x, m - 0x1p-24) == 1);
  // 1/sqrt(4) = 0.5 exactly: m = 0.5 gives 0, 0.5 (1 +- 2^-24) give -1 and +1 (m^2 has 49 bits: the split into h and l).
  CHECK(root_sign(true, 4.0, 0.5) == 0);
  CHECK(root_sign(true, 4.0, 0.5 + 0x1p-25) == -1);
  CHECK(root_sign(true, 4.0, 0.5 - 0x1p-25) == 1);
  // x = 4 - 2^-21, m = 0.5 (1 + 2^-24): m^2 x = 1 - 2^-46 + 2^-48 - 2^-71 < 1, so 1/sqrt(x) > m.
  CHECK(root_sign(true, 4.0 - 0x1p-21, 0.5 + 0x1p-25) == 1);
}

namespace {
/// cbrt(x) at 200 bits by MPFR (exact for perfect cubes: ternary 0), rounded to nearest-even into d.
Rounded cbrt_mpfr(float x, const Format& d) {
  if (std::isnan(x)) return round_double(d, std::nan(""), rounder(d, Rounding::NearestEven), 0);
  mpfr_ref::Mpfr in(24), y(200);
  mpfr_set_flt(in, x, MPFR_RNDN);
  mpfr_cbrt(y, in, MPFR_RNDN);
  if (mpfr_inf_p(y)) return {(mpfr_signbit(y) ? d.sign_mask() : 0) | d.inf_code(), 0};
  if (mpfr_zero_p(y)) return round_double(d, mpfr_signbit(y) ? -0.0 : 0.0, rounder(d, Rounding::NearestEven), 0);
  return mpfr_ref::round(d, y, rounder(d, Rounding::NearestEven), 0);
}
}  // namespace

TEST_CASE("cbrt_ref_rn (the device's cbrt reference): decided exactly, equal to MPFR at 200 bits into f32, f16, bf16") {
  // 200 bits decide every case: for a midpoint m of at most 25 significant bits (m in [2^e, 2^(e+1)), its last bit at
  // 2^(e-24)), m^3 is an odd multiple of 2^(3e-72) and an fp32 x near it has no bit below 2^(3e-21): x != m^3, and
  // |x - m^3| >= 2^(3e-72), i.e. cbrt(x) is at least ~2^-74 relative away from m: far beyond MPFR's 2^-199.
  const std::uint64_t seed = test::seed();
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep127f, -0x1.fffffep127f};
  for (int k = 1; k <= 256; ++k) xs.push_back(static_cast<float>(k * k * k)), xs.push_back(-static_cast<float>(k * k * k));  // exact cubes
  for (int k = -149; k <= 127; ++k) xs.push_back(std::ldexp(1.0f, k));  // 2^k: exact when 3 | k
  for (std::uint64_t i = 0; i < 150000; ++i) {
    const auto w = philox_4x32(seed, 0x63627274, i);
    xs.push_back(i % 2 ? std::bit_cast<float>(w[0]) : static_cast<float>(1.0 + w[1] * 0x1p-32 * 7.0));  // any pattern; [1, 8)
  }
  // Near the midpoints of f16 and bf16 in [1, 2): m^3 for m = 1 + (2j + 1) 2^-11 (f16) and 2^-8 (bf16), and the fp32
  // values on either side of each.
  for (int j = 0; j < 1024; ++j) {
    for (double m : {1.0 + (2 * j + 1) * 0x1p-11, 1.0 + (2 * (j % 128) + 1) * 0x1p-8}) {
      const float c = static_cast<float>(m * m * m);
      xs.push_back(c), xs.push_back(std::nextafter(c, 0.0f)), xs.push_back(std::nextafter(c, 16.0f));
    }
  }
  std::int64_t checks = 0, differ = 0, undecided = 0;
  for (const Format* d : kDests)
    for (float x : xs) {
      const RefRn r = cbrt_ref_rn(x, code_of(*d));
      const Rounded want = cbrt_mpfr(x, *d);
      ++checks;
      undecided += !r.decided;
      if (!same(*d, r.code, want.code) && ++differ <= 8)
        MESSAGE("cbrt(" << std::hexfloat << x << ") into " << d->tag << ": got 0x" << std::hex << r.code << " want 0x" << want.code);
    }
  MESSAGE("cbrt_ref_rn: " << checks << " checks");
  CHECK(checks == static_cast<std::int64_t>(3 * xs.size()));
  CHECK(differ == 0);
  CHECK(undecided == 0);
  // By hand: cbrt(27) = 3, cbrt(-8) = -2, cbrt(2) = 1.25992105 (0x3fa14518, as MPFR's test above), cbrt(2^-149) = 2^-49.67.
  CHECK(cbrt_ref_rn(27.0f, kCodeF32).code == 0x40400000u);
  CHECK(cbrt_ref_rn(-8.0f, kCodeF32).code == 0xc0000000u);
  CHECK(cbrt_ref_rn(2.0f, kCodeF32).code == 0x3fa14518u);
  CHECK(cbrt_ref_rn(-0.0f, kCodeF32).code == 0x80000000u);
  CHECK(has_device_ref(Fn::Cbrt));
  CHECK_FALSE(has_device_ref(Fn::Erf));
}

TEST_CASE("cube_sign: exact one unit of a 25-bit midpoint away") {
  // m = 1 + 2^-24 (a midpoint of f32 in [1, 2)): m^3 = 1 + 3 2^-24 + 3 2^-48 + 2^-72. x = 1 + 3 2^-24 lies below it by
  // 3 2^-48 + 2^-72: sign -1; x = 1 + 4 2^-24 lies above: +1. A double would round m^3 to 1 + 3 2^-24 + 3 2^-48 and a
  // float to 1 + 2^-22 (= x above): only the exact lo decides.
  const double m = 1.0 + 0x1p-24;
  CHECK(cube_sign(1.0 + 3 * 0x1p-24, m) == -1);
  CHECK(cube_sign(1.0 + 4 * 0x1p-24, m) == 1);
  CHECK(cube_sign(8.0, 2.0) == 0);
  CHECK(cube_sign(8.0 + 0x1p-20, 2.0) == 1);
  CHECK(cube_sign(0x1p-149, 0x1p-50) == 1);  // m^3 = 2^-150 < 2^-149
}
