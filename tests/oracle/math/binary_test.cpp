// tests/oracle/math/binary_test.cpp — the binary functions' oracle (oracle/math/binary.hpp) against references written
// apart from it: IEEE 754-2019 9.2's special values of pow and atan2 (each case its own line), division against the double
// quotient rounded to float (innocuous double rounding: 53 >= 2 * 24 + 2, Figueroa 1995), pow(x, 0.5), pow(x, 2) and
// pow(x, -1) against sqrtf, x * x and 1 / x (each correctly rounded by IEEE 754), atan2 against glibc's double atan2 away
// from float midpoints, fmax/fmin's NaN rule. Inputs from Philox keyed by FPCERT_TEST_SEED (tests/support/test_seed.hpp).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "base/philox.hpp"
#include "oracle/math/binary.hpp"
#include "oracle/math/elementary.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

std::uint32_t ref(Fn f, float a, float b) { return binary_ref_f32(f, a, b); }
std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
float val(std::uint32_t c) { return std::bit_cast<float>(c); }
bool is_nan_code(std::uint32_t c) { return (c & 0x7fffffffu) > 0x7f800000u; }
/// A random finite f32 (random bits, NaN and Inf mapped back into the finite range).
float finite(std::uint32_t w) {
  if ((w & 0x7f800000u) == 0x7f800000u) w &= 0xbfffffffu;
  return val(w);
}

constexpr float kInf = INFINITY, kNan = NAN;
constexpr std::uint32_t kPi = 0x40490fdbu, kPi2 = 0x3fc90fdbu, kPi4 = 0x3f490fdbu, k3Pi4 = 0x4016cbe4u;  // RN(pi), RN(pi/2), ...

}  // namespace

TEST_CASE("pow's special values are IEEE 754 9.2's (ISO C Annex F.10.4.4)") {
  const float some[] = {0.0f, -0.0f, 1.5f, -2.0f, kInf, -kInf, kNan, 0x1p-149f};
  for (float x : some) {
    CHECK(ref(Fn::Pow, x, 0.0f) == bits(1.0f));   // pow(x, +-0) = 1 for any x, even a NaN
    CHECK(ref(Fn::Pow, x, -0.0f) == bits(1.0f));
    CHECK(ref(Fn::Pow, 1.0f, x) == bits(1.0f));   // pow(+1, y) = 1 for any y, even a NaN
  }
  CHECK(ref(Fn::Pow, 0.0f, -3.0f) == bits(kInf));      // pow(+-0, y) = +-Inf for y a negative odd integer
  CHECK(ref(Fn::Pow, -0.0f, -3.0f) == bits(-kInf));
  CHECK(ref(Fn::Pow, -0.0f, -2.0f) == bits(kInf));     // +Inf for y negative, not an odd integer
  CHECK(ref(Fn::Pow, -0.0f, -0.5f) == bits(kInf));
  CHECK(ref(Fn::Pow, -0.0f, -kInf) == bits(kInf));     // pow(+-0, -Inf) = +Inf
  CHECK(ref(Fn::Pow, -0.0f, 3.0f) == bits(-0.0f));     // pow(+-0, y) = +-0 for y a positive odd integer
  CHECK(ref(Fn::Pow, -0.0f, 2.0f) == bits(0.0f));      // +0 for y positive, not an odd integer
  CHECK(ref(Fn::Pow, -1.0f, kInf) == bits(1.0f));      // pow(-1, +-Inf) = 1
  CHECK(ref(Fn::Pow, -1.0f, -kInf) == bits(1.0f));
  CHECK(ref(Fn::Pow, 0.5f, -kInf) == bits(kInf));      // |x| < 1: pow(x, -Inf) = +Inf, pow(x, +Inf) = +0
  CHECK(ref(Fn::Pow, -0.5f, kInf) == bits(0.0f));
  CHECK(ref(Fn::Pow, 2.0f, -kInf) == bits(0.0f));      // |x| > 1: pow(x, -Inf) = +0, pow(x, +Inf) = +Inf
  CHECK(ref(Fn::Pow, -2.0f, kInf) == bits(kInf));
  CHECK(ref(Fn::Pow, -kInf, -3.0f) == bits(-0.0f));    // pow(-Inf, y) = -0 for y a negative odd integer
  CHECK(ref(Fn::Pow, -kInf, -2.0f) == bits(0.0f));
  CHECK(ref(Fn::Pow, -kInf, 3.0f) == bits(-kInf));     // -Inf for y a positive odd integer, +Inf otherwise
  CHECK(ref(Fn::Pow, -kInf, 0.5f) == bits(kInf));
  CHECK(ref(Fn::Pow, kInf, -1.0f) == bits(0.0f));      // pow(+Inf, y < 0) = +0, y > 0: +Inf
  CHECK(ref(Fn::Pow, kInf, 0x1p-149f) == bits(kInf));
  CHECK(is_nan_code(ref(Fn::Pow, -2.0f, 0.5f)));       // a finite negative base with a finite non-integer exponent: NaN
  CHECK(is_nan_code(ref(Fn::Pow, kNan, 1.0f)));
  CHECK(is_nan_code(ref(Fn::Pow, 2.0f, kNan)));
  // Exact results and the range's edges: 2^-149 is the least subnormal; 2^-150 is half of it, a tie, rounded to even (+0);
  // 3 * 2^-151 = 0.75 * 2^-149 rounds up to 2^-149; 2^128 overflows; (-2)^3 = -8; (-2)^-149 = -2^-149.
  CHECK(ref(Fn::Pow, 2.0f, 10.0f) == bits(1024.0f));
  CHECK(ref(Fn::Pow, 2.0f, -149.0f) == 0x00000001u);
  CHECK(ref(Fn::Pow, 2.0f, -150.0f) == 0u);
  CHECK(ref(Fn::Pow, 0x1.8p-75f, 2.0f) == 0x00000001u);  // (1.5 2^-75)^2 = 2.25 2^-150 = 1.125 2^-149: rounds to 2^-149
  CHECK(ref(Fn::Pow, 2.0f, 128.0f) == bits(kInf));
  CHECK(ref(Fn::Pow, -2.0f, 3.0f) == bits(-8.0f));
  CHECK(ref(Fn::Pow, -2.0f, -149.0f) == 0x80000001u);
  // Beyond MPFR's exponent range (the double pre-check): (1 + 2^-23)^(2^127) = e^(2^104) overflows; its reciprocal power underflows;
  // a negative base with an odd integer exponent keeps the sign.
  CHECK(ref(Fn::Pow, 0x1.000002p0f, 0x1p127f) == bits(kInf));
  CHECK(ref(Fn::Pow, 0x1.000002p0f, -0x1p127f) == 0u);
  CHECK(ref(Fn::Pow, -3.0f, 16777215.0f) == bits(-kInf));
  CHECK(ref(Fn::Pow, -3.0f, -16777215.0f) == 0x80000000u);
}

TEST_CASE("atan2's special values are IEEE 754 9.2's (ISO C Annex F.9.1.4); atan2(y, x) reads (x1, x2) = (y, x)") {
  CHECK(ref(Fn::Atan2, 0.0f, -0.0f) == kPi);              // atan2(+-0, -0) = +-pi
  CHECK(ref(Fn::Atan2, -0.0f, -0.0f) == (kPi | 0x80000000u));
  CHECK(ref(Fn::Atan2, 0.0f, 0.0f) == 0u);                // atan2(+-0, +0) = +-0
  CHECK(ref(Fn::Atan2, -0.0f, 0.0f) == 0x80000000u);
  CHECK(ref(Fn::Atan2, 0.0f, -3.0f) == kPi);              // atan2(+-0, x < 0) = +-pi; x > 0: +-0
  CHECK(ref(Fn::Atan2, -0.0f, 3.0f) == 0x80000000u);
  CHECK(ref(Fn::Atan2, -3.0f, 0.0f) == (kPi2 | 0x80000000u));  // atan2(y < 0, +-0) = -pi/2; y > 0: +pi/2
  CHECK(ref(Fn::Atan2, 3.0f, -0.0f) == kPi2);
  CHECK(ref(Fn::Atan2, 3.0f, -kInf) == kPi);              // atan2(+-y, -Inf) = +-pi for finite y > 0; +Inf: +-0
  CHECK(ref(Fn::Atan2, -3.0f, kInf) == 0x80000000u);
  CHECK(ref(Fn::Atan2, kInf, 5.0f) == kPi2);              // atan2(+-Inf, finite x) = +-pi/2
  CHECK(ref(Fn::Atan2, kInf, -kInf) == k3Pi4);            // atan2(+-Inf, -Inf) = +-3pi/4; +Inf: +-pi/4
  CHECK(ref(Fn::Atan2, -kInf, kInf) == (kPi4 | 0x80000000u));
  CHECK(ref(Fn::Atan2, 1.0f, 1.0f) == kPi4);              // pi/4 rounded
  CHECK(ref(Fn::Atan2, 0x1p-149f, 0x1p127f) == 0u);       // 2^-276: far under half the least subnormal
  CHECK(is_nan_code(ref(Fn::Atan2, kNan, 1.0f)));
  CHECK(is_nan_code(ref(Fn::Atan2, 1.0f, kNan)));
}

TEST_CASE("fmax and fmin: exact, a NaN operand yields the other one (IEEE 754-2008 maxNum/minNum, C Annex F.10.9.2)") {
  CHECK(ref(Fn::Fmax, kNan, 1.0f) == bits(1.0f));
  CHECK(ref(Fn::Fmax, 1.0f, kNan) == bits(1.0f));
  CHECK(ref(Fn::Fmin, -kInf, kNan) == bits(-kInf));
  CHECK(ref(Fn::Fmin, val(0x7f800001u), 0x1p-149f) == 0x00000001u);  // a signalling NaN operand loses too
  CHECK(is_nan_code(ref(Fn::Fmax, kNan, kNan)));
  CHECK(ref(Fn::Fmax, -1.0f, 0x1p-149f) == 0x00000001u);
  CHECK(ref(Fn::Fmin, -1.0f, 0x1p-149f) == bits(-1.0f));
  CHECK((ref(Fn::Fmax, -0.0f, 0.0f) & 0x7fffffffu) == 0u);  // +0 or -0: C leaves the sign unspecified
}

TEST_CASE("division, pow(x, 0.5 / 2 / -1) and atan2 agree with references computed apart from MPFR") {
  const std::uint64_t s = test::seed();
  int div_checked = 0, atan_checked = 0, atan_skipped = 0;
  for (std::uint64_t i = 0; i < 40000; ++i) {
    const auto w = philox_4x32(s, 0x62696e, i);
    // Half random bit patterns (every binade, subnormals, huge and tiny quotients), half moderate values.
    const float a = i % 2 ? finite(w[0]) : static_cast<float>(static_cast<std::int32_t>(w[0]) * 0x1p-24);
    const float b = i % 2 ? finite(w[1]) : static_cast<float>(static_cast<std::int32_t>(w[1]) * 0x1p-27);
    // The double quotient of two floats rounded to float is the correctly rounded float quotient (53 >= 2 * 24 + 2): in the
    // subnormal range too, and 0/0, x/0 as IEEE 754 has them. NaN results compared as NaN.
    const float q = static_cast<float>(static_cast<double>(a) / static_cast<double>(b));
    const std::uint32_t rq = ref(Fn::Div, a, b);
    INFO("div a=" << std::hexfloat << a << " b=" << b);
    if (std::isnan(q)) CHECK(is_nan_code(rq));
    else CHECK(rq == bits(q));
    ++div_checked;
    const float x = std::fabs(a);
    CHECK(ref(Fn::Pow, x, 0.5f) == bits(std::sqrt(x)));          // sqrt correctly rounded (IEEE 754 5.4.1); pow(+0, 0.5) = +0
    CHECK(ref(Fn::Pow, a, 2.0f) == bits(a * a));                 // one rounding of the exact square
    if (a != 0) CHECK(ref(Fn::Pow, a, -1.0f) == bits(1.0f / a)); // one rounding of 1/a
    // atan2: glibc's double atan2 (< 1 ulp of double) rounded to float is the correctly rounded float unless the double lies
    // within 2^-50 relative of a float midpoint (then skipped: the double cannot decide).
    const double d = std::atan2(static_cast<double>(a), static_cast<double>(b));
    const float fd = static_cast<float>(d);
    const double mid_dist = std::fabs(d - static_cast<double>(fd)) / std::ldexp(1.0, std::ilogb(static_cast<double>(fd)) - 23);
    if (fd != 0 && std::isnormal(fd) && std::fabs(mid_dist - 0.5) < 0x1p-26) {
      ++atan_skipped;
      continue;
    }
    if (fd == 0 || !std::isnormal(fd)) continue;  // underflowed atan2: the special and tiny cases are tested above
    INFO("atan2 a=" << std::hexfloat << a << " b=" << b);
    CHECK(ref(Fn::Atan2, a, b) == bits(fd));
    ++atan_checked;
  }
  std::printf("binary_test: %d quotients, %d atan2 checked (%d skipped near a midpoint)\n", div_checked, atan_checked, atan_skipped);
  CHECK(atan_checked > 30000);
}

TEST_CASE("binary functions: names, arity, and the unary entry points refuse them") {
  CHECK(parse_fn("atan2") == Fn::Atan2);
  CHECK(parse_fn("div") == Fn::Div);
  CHECK(arity(Fn::Pow) == 2);
  CHECK(arity(Fn::Exp) == 1);
  CHECK_FALSE(has_device_ref(Fn::Div));
  const Rounder rn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  CHECK_THROWS_AS(evaluate_mpfr(Fn::Pow, 2.0f, f32, rn), std::invalid_argument);
  CHECK_THROWS_AS(evaluate_binary(Fn::Exp, 1.0f, 2.0f, f32, rn), std::invalid_argument);
}
