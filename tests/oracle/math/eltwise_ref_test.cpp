// tests/oracle/math/eltwise_ref_test.cpp — the elementwise check's host/device arithmetic (oracle/math/eltwise_ref.hpp)
// against independent references: round_rn_code against oracle/round.hpp's round_double (a separate implementation of
// correct rounding), exp_ref_rn against 200-bit MPFR rounded by mpfr_ref::round, ulp distances and claims by hand.
#include <doctest/doctest.h>

#include <limits>

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdio>

#include "base/philox.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/math/eltwise_ref.hpp"
#include "oracle/mpfr_ref.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using namespace fpcert::math;

namespace {

struct Pair {
  const Format* f;
  CodeFormat c;
};
const Pair kPairs[] = {{&f32, kCodeF32}, {&f16, kCodeF16}, {&bf16, kCodeBf16}};
const Rounder kRn{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};

std::uint32_t mpfr_rn(Fn f, float x, const Format& d) {
  mpfr_ref::Mpfr in(24), y(200);
  mpfr_set_flt(in, x, MPFR_RNDN);
  if (f == Fn::Exp) mpfr_exp(y, in, MPFR_RNDN);
  else if (f == Fn::Exp2) mpfr_exp2(y, in, MPFR_RNDN);
  else if (f == Fn::Exp10) mpfr_exp10(y, in, MPFR_RNDN);
  else if (f == Fn::Log) mpfr_log(y, in, MPFR_RNDN);
  else if (f == Fn::Log2) mpfr_log2(y, in, MPFR_RNDN);
  else if (f == Fn::Log10) mpfr_log10(y, in, MPFR_RNDN);
  else if (f == Fn::Sqrt) mpfr_sqrt(y, in, MPFR_RNDN);
  else if (f == Fn::Expm1) mpfr_expm1(y, in, MPFR_RNDN);
  else if (f == Fn::Log1p) mpfr_log1p(y, in, MPFR_RNDN);
  else if (f == Fn::Tanh) mpfr_tanh(y, in, MPFR_RNDN);
  else if (f == Fn::Sinh) mpfr_sinh(y, in, MPFR_RNDN);
  else if (f == Fn::Cosh) mpfr_cosh(y, in, MPFR_RNDN);
  else mpfr_rec_sqrt(y, in, MPFR_RNDN);  // rsqrt: +0 -> +Inf (the tests draw no -0 for it)
  if (mpfr_inf_p(y)) return (mpfr_signbit(y) ? static_cast<std::uint32_t>(d.sign_mask()) : 0u) | static_cast<std::uint32_t>(d.inf_code());
  return static_cast<std::uint32_t>(mpfr_ref::round(d, y, kRn).code);
}

RefRn ref(Fn f, float x, CodeFormat c) { return ref_rn(f, x, c, exp_tables(), log_tables()); }

}  // namespace

TEST_CASE("round_rn_code equals round_double under nearest-even (random doubles, ties, the range's ends)") {
  const std::uint64_t seed = test::seed();
  std::printf("eltwise_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::int64_t differ = 0, checked = 0;
  for (const Pair& p : kPairs) {
    auto check = [&](double v) {
      const auto want = static_cast<std::uint32_t>(round_double(*p.f, v, kRn).code);
      const std::uint32_t got = round_rn_code(v, p.c);
      ++checked;
      if (got != want && ++differ <= 5) MESSAGE(p.f->tag << " v=" << v << " got " << got << " want " << want);
    };
    for (std::uint64_t i = 0; i < 200000; ++i) {
      const auto w = philox_4x32(seed, 7, i);
      // exponent within +-160 of 1 (covers subnormals, underflow to 0 and overflow of every format), random fraction
      const double m = 1.0 + static_cast<double>((static_cast<std::uint64_t>(w[0]) << 20) ^ w[1]) * 0x1p-52;
      const double v = std::ldexp(m, static_cast<int>(w[2] % 321) - 160) * ((w[3] & 1) ? -1 : 1);
      check(v);
      // the midpoint between this value rounded and its neighbour: a tie, decided by the even rule
      const double r = round_double(*p.f, v, kRn).code & ((std::uint64_t{1} << (p.f->container_bits - 1)) - 1)
                           ? to_double(*p.f, round_double(*p.f, v, kRn).code)
                           : 0.0;
      if (std::isfinite(r) && r != 0) {
        const double up = to_double(*p.f, round_double(*p.f, v, kRn).code + 1);
        if (std::isfinite(up)) check((r + up) / 2);  // exact in double: both have at most 24 bits
      }
    }
    for (double v : std::initializer_list<double>{0.0, -0.0, HUGE_VAL, -HUGE_VAL, p.f->max_finite(), p.f->min_subnormal(), p.f->min_subnormal() / 2,
                     p.f->min_subnormal() * 0.75, p.f->min_normal(), 1.0})
      check(v);
  }
  CHECK(checked > 900000);  // 600000 random values and up to as many ties
  CHECK(differ == 0);
}

TEST_CASE("exp_ref_rn, log_ref_rn, root_ref_rn, expm1/log1p_ref_rn: decided codes equal MPFR's correctly rounded result; undecided ones are rare under nearest") {
  const std::uint64_t seed = test::seed();
  for (Fn f : kAllFns)
    for (const Pair& p : kPairs) {
      if (is_mpfr_only(f)) continue;  // no fast path: always undecided (mpfr_only_test.cpp)
      std::int64_t differ = 0, undecided = 0, n = 0;
      for (std::uint64_t i = 0; i < 40000; ++i) {
        const auto w = philox_4x32(seed, 11, i);
        // half random bit patterns, half uniform in [-60, 60] (results finite in f32, many inside f16/bf16)
        float x = (i & 1) ? std::bit_cast<float>(w[0]) : static_cast<float>(-60.0 + 120.0 * (w[1] * 0x1p-32));
        if (positive_domain(f) && !(i & 1)) x = std::fabs(x) * 0x1p-5f;  // logs, roots: positive inputs in (0, 2)
        const RefRn r = ref(f, x, p.c);
        ++n;
        if (!r.decided) {
          ++undecided;
          continue;
        }
        if (std::isnan(x) || (positive_domain(f) && x < 0) || (f == Fn::Log1p && x < -1)) {
          CHECK(p.c.is_nan(r.code));
          continue;
        }
        const std::uint32_t want = mpfr_rn(f, x, *p.f);
        if (r.code != want && ++differ <= 5) MESSAGE(to_string(f) << " " << p.f->tag << " x=" << x << " got " << r.code << " want " << want);
      }
      CHECK(differ == 0);
      CHECK(undecided * 1000 < n);  // the bracket 2^-46 straddles a boundary of a 24-bit format with odds ~2^-21 per input
    }
}

TEST_CASE("ulp_distance counts codes between values, across zero and to infinity; NaN only against NaN") {
  const CodeFormat c = kCodeF32;
  CHECK(ulp_distance(0x3f800000u, 0x3f800001u, c) == 1);
  CHECK(ulp_distance(0x3f800003u, 0x3f800000u, c) == 3);
  CHECK(ulp_distance(0x00000000u, 0x80000000u, c) == 0);  // +0 and -0 are one value
  CHECK(ulp_distance(0x00000001u, 0x80000001u, c) == 2);  // +-2^-149 straddle 0
  CHECK(ulp_distance(0x7f7fffffu, 0x7f800000u, c) == 1);  // largest finite and +Inf
  CHECK(ulp_distance(0x7fc00000u, 0xffc00001u, c) == 0);
  CHECK(ulp_distance(0x7fc00000u, 0x3f800000u, c) == kNanDistance);
  CHECK(ulp_distance(0x3c00u, 0x3c01u, kCodeF16) == 1);
  CHECK(ulp_bin(0) == 0);
  CHECK(ulp_bin(4) == 4);
  CHECK(ulp_bin(5) == 5);   // (4, 8]
  CHECK(ulp_bin(8) == 5);
  CHECK(ulp_bin(9) == 6);   // (8, 16]
  CHECK(ulp_bin(kNanDistance) == kUlpBins - 1);
}

TEST_CASE("judge: ulp claims with a slope, correctly rounded, ftz, and an absolute bound with its uncertainty") {
  const CodeFormat c = kCodeF32;
  RefRn ref{0x3f800000u, true, 1.0};
  // __expf's claim 2 + floor(1.173 |x|): at x = 2, 2 + floor(2.346) = 4 ulp allowed; 5 is beyond
  const Claim slope{ClaimKind::Ulp, 2, 1.173};
  CHECK_FALSE(judge(0x3f800004u, 2.0f, ref, c, slope).above);
  CHECK(judge(0x3f800005u, 2.0f, ref, c, slope).above);
  CHECK(judge(0x3f800001u, 0.0f, ref, c, Claim{}).above);  // correctly rounded: one ulp is too many
  // ftz: +0 where the reference is the subnormal 2^-140 counts 0 ulp; without ftz it is 2^9 ulp
  const RefRn sub{0x00000200u, true, 0x1p-140};
  CHECK(judge(0x00000000u, -97.0f, sub, c, Claim{}, true).ulps == 0);
  CHECK(judge(0x00000000u, -97.0f, sub, c, Claim{}).ulps == 0x200);
  // absolute bound 2^-20 on [0.5, 2]: 1 + 2^-19 is beyond, 1 + 2^-21 within, and outside the interval nothing is claimed
  const Claim ab{ClaimKind::Absolute, 0, 0, 0x1p-20, 0.5, 2.0};
  const std::uint32_t far = std::bit_cast<std::uint32_t>(1.0f + 0x1p-19f), near = std::bit_cast<std::uint32_t>(1.0f + 0x1p-21f);
  CHECK(judge(far, 1.0f, ref, c, ab).above);
  CHECK_FALSE(judge(near, 1.0f, ref, c, ab).above);
  CHECK_FALSE(judge(far, 3.0f, ref, c, ab).above);
  // a ulp claim on a domain claims nothing outside it: 3 ulp at x = 200 against "<= 1 ulp on [-FLT_MAX, 104]"
  const Claim ranged{ClaimKind::Ulp, 1, 0, 0, -0x1.fffffep127, 104.0};
  CHECK_FALSE(judge(0x3f800003u, 200.0f, ref, c, ranged).above);
  CHECK_FALSE(judge(0x3f800003u, 200.0f, ref, c, ranged).claimed);
  CHECK(judge(0x3f800003u, 100.0f, ref, c, ranged).above);
  // an infinite input has an exact result (IEEE 754 9.2): exp(+Inf) = +Inf; the largest finite value, 1 code away, is
  // beyond a 2-ulp claim and beyond an absolute bound; a binary function's (exact_at_inf false) keeps the code distance
  const RefRn inf{0x7f800000u, true, std::numeric_limits<double>::infinity()};
  const float pinf = std::numeric_limits<float>::infinity();
  CHECK(judge(0x7f7fffffu, pinf, inf, c, Claim{ClaimKind::Ulp, 2}).above);
  CHECK(judge(0x7f7fffffu, pinf, inf, c, Claim{ClaimKind::Absolute, 2, 0, 0x1p-20, 0.5, 2.0}).above);
  CHECK_FALSE(judge(0x7f800000u, pinf, inf, c, Claim{ClaimKind::Ulp, 2}).above);
  CHECK_FALSE(judge(0x7f7fffffu, pinf, inf, c, Claim{ClaimKind::Ulp, 2}, false, false).above);
  // ... and a finite input whose result overflows keeps CUDA's code distance (1 ulp between the largest finite and Inf)
  CHECK_FALSE(judge(0x7f7fffffu, 89.0f, inf, c, Claim{ClaimKind::Ulp, 2}).above);
  // a pole is exact too: rsqrt(+0) = +Inf, log(-0) = -Inf, log1p(-1) = -Inf (IEEE 754 9.2); the largest finite value of the
  // sign is beyond a 2-ulp claim there, as is +Inf for -Inf (a sign error), and Inf itself passes
  const RefRn ninf{0xff800000u, true, -std::numeric_limits<double>::infinity()};
  CHECK(judge(0x7f7fffffu, 0.0f, inf, c, Claim{ClaimKind::Ulp, 2}).above);
  CHECK(judge(0xff7fffffu, -0.0f, ninf, c, Claim{ClaimKind::Ulp, 2}).above);
  CHECK(judge(0xff7fffffu, -1.0f, ninf, c, Claim{ClaimKind::Ulp, 1}).above);
  CHECK(judge(0xff7fffffu, 0.0f, ninf, c, Claim{ClaimKind::Absolute, 3, 0, 0x1p-21, 0.5, 2.0}).above);
  CHECK_FALSE(judge(0x7f800000u, 0.0f, inf, c, Claim{ClaimKind::Ulp, 2}).above);
  CHECK_FALSE(judge(0xff800000u, -1.0f, ninf, c, Claim{ClaimKind::Ulp, 1}).above);
  // a binary function's pole (x / 0: exact_at_inf false) keeps the code distance, as its infinite inputs do
  CHECK_FALSE(judge(0x7f7fffffu, 0.0f, inf, c, Claim{ClaimKind::Ulp, 2}, false, false).above);
  // a NaN input is claimed by a claim without a domain (NaN -> NaN is part of every unranged claim)
  CHECK(judge(0x3f800000u, std::bit_cast<float>(0x7fc00000u), RefRn{0x7fc00000u, true, 0}, c, Claim{}).above);
  // a result within the reference's uncertainty (|f| 2^-47) of the bound is undecided, not passed
  const RefRn edge{0x3f800000u, true, 1.0 - 0x1p-20};  // err = 2^-20 exactly from the fast value
  CHECK(judge(0x3f800000u, 1.0f, edge, c, ab).undecided);
}

TEST_CASE("f32_value decodes every subnormal, zero, normal, infinite and NaN pattern as the float's own value") {
  // The decoder must not depend on the float to double conversion (a -ftz=true device build flushes it); on the host that
  // conversion is exact, so it is the independent reference here. Every subnormal pattern of both signs, and each binade's
  // ends and a Philox sample of the rest.
  const auto bits_of = [](double d) { return std::bit_cast<std::uint64_t>(d); };
  std::uint64_t checked = 0, mismatched = 0;
  const auto check = [&](std::uint32_t b) {
    const float x = std::bit_cast<float>(b);
    const double want = static_cast<double>(x), got = f32_value(x);
    ++checked;
    if (std::isnan(want) ? !std::isnan(got) : bits_of(got) != bits_of(want)) {
      if (++mismatched <= 5) std::printf("f32_value(0x%08x) = %a, float value %a\n", b, got, want);
    }
  };
  for (std::uint32_t m = 0; m < (1u << 23); ++m) check(m), check(m | 0x80000000u);
  for (std::uint32_t e = 1; e <= 255; ++e)
    for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7fffffu}) check(e << 23 | m), check(e << 23 | m | 0x80000000u);
  const std::uint64_t seed = test::seed();
  for (std::uint64_t i = 0; i < 100000; ++i) check(random_bits32(seed ^ 0xf32, i));
  CHECK(mismatched == 0);
  CHECK(checked > (1u << 24));
}
