// tests/oracle/ulp_test.cpp — ULP distance and RefValue rounding against MPFR.
#include <doctest/doctest.h>

#include <bit>
#include <algorithm>
#include <cmath>

#include "base/philox.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/ulp.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using mpfr_ref::Mpfr;

namespace {

/// MPFR version of the definition in oracle/ulp.hpp, on an exact MPFR value x.
double mpfr_ulp_distance(const Format& f, std::uint64_t cand, mpfr_srcptr x) {
  Mpfr ax(4000), vk(4000), vn(4000), pos(4000), pc(4000), d(4000);
  mpfr_abs(ax, x, MPFR_RNDN);
  const Rounded t = mpfr_ref::round(f, ax, {Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve});
  const std::uint64_t k = t.code;
  mpfr_ref::set_code(vk, f, k);
  if (k < f.max_finite_code()) {
    mpfr_ref::set_code(vn, f, k + 1);
  } else {  // continue the top binade's spacing
    Mpfr prev(64);
    mpfr_ref::set_code(prev, f, k - 1);
    mpfr_mul_2ui(vn, vk, 1, MPFR_RNDN);
    mpfr_sub(vn, vn, prev, MPFR_RNDN);
  }
  mpfr_sub(pos, ax, vk, MPFR_RNDN);
  mpfr_sub(d, vn, vk, MPFR_RNDN);
  mpfr_div(pos, pos, d, MPFR_RNDN);
  mpfr_add_ui(pos, pos, k, MPFR_RNDN);
  if (mpfr_signbit(x)) mpfr_neg(pos, pos, MPFR_RNDN);
  const auto mag = static_cast<long>(cand & f.magnitude_mask());
  mpfr_set_si(pc, code_is_negative(f, cand) ? -mag : mag, MPFR_RNDN);
  mpfr_sub(d, pc, pos, MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

}  // namespace

TEST_CASE("ULP distance: binade boundaries and subnormals by hand") {
  // fp16 below 1.0 the spacing is 2^-11, above it 2^-10: the code just below 1 (0x3BFF) is one
  // representable step from 1, although |diff| / ulp(1) would say half an ulp.
  CHECK(ulp_distance(f16, 0x3BFF, 1.0) == 1.0);
  CHECK(ulp_distance(f16, 0x3C01, 1.0) == 1.0);
  // Half-way between 0x3BFF and 1.0 is 1 - 2^-12: half a step from each.
  CHECK(ulp_distance(f16, 0x3C00, 1.0 - std::ldexp(1.0, -12)) == 0.5);
  CHECK(ulp_distance(f16, 0x3BFF, 1.0 - std::ldexp(1.0, -12)) == 0.5);
  // Subnormal range: uniform steps of 2^-24; the smallest normal is one step above the largest subnormal.
  CHECK(ulp_distance(f16, 0x0001, 0.0) == 1.0);
  CHECK(ulp_distance(f16, 0x0400, std::ldexp(1023.0, -24)) == 1.0);
  CHECK(ulp_distance(f16, 0x0000, std::ldexp(0.25, -24)) == 0.25);
  // Across zero: -2^-24 to +2^-24 is two steps.
  CHECK(ulp_distance(f16, 0x8001, std::ldexp(1.0, -24)) == 2.0);
  // Non-finite candidates.
  CHECK(std::isinf(ulp_distance(f16, 0x7C00, 65504.0)));
  CHECK(ulp_distance(f16, 0x7C00, INFINITY) == 0.0);
  CHECK(std::isinf(ulp_distance(f16, 0xFC00, INFINITY)));
  CHECK(ulp_distance(f16, 0x7E00, NAN) == 0.0);
}

TEST_CASE("ULP distance equals the MPFR evaluation of its definition (random references)") {
  const std::uint64_t key = test::seed() + 3;
  Mpfr x(4000), lo(64);
  for (int i = 0; i < 30000; ++i) {
    const auto w = philox_4x32(key, 2, static_cast<std::uint64_t>(i));
    for (const Format* f : {&f16, &bf16, &f32, &e4m3, &f64}) {
      // An exact value hi + lo (lo a few ulps of double below hi), near the format's range.
      // e from below the smallest subnormal to just past the largest finite (fp64: up to its top binade).
      const int top = std::min(f->emax() + 1, 1022);
      const int e = static_cast<int>(w[0] % static_cast<std::uint32_t>(top - f->emin() + f->frac_bits + 3)) + f->emin() -
                    f->frac_bits - 2;
      const double hi = std::ldexp(1.0 + w[1] * 0x1p-32, e) * ((w[2] & 1) ? -1 : 1);
      const double l = std::ldexp(static_cast<double>(static_cast<std::int32_t>(w[3])), e - 53 - 31);
      const RefValue ref = ref_from_two_sum(hi, l);
      mpfr_set_d(x, hi, MPFR_RNDN);
      mpfr_add_d(x, x, l, MPFR_RNDN);  // exact at 4000 bits
      // Candidates: the nearest code and a few steps around it.
      const Rounded rn = round_ref(*f, ref, {Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve});
      for (int step = -3; step <= 3; ++step) {
        const std::int64_t ord = code_ordinal(*f, rn.code) + step;
        const std::uint64_t mag = static_cast<std::uint64_t>(ord < 0 ? -ord : ord);
        if (mag > f->max_finite_code()) continue;
        const std::uint64_t cand = mag | (ord < 0 ? f->sign_mask() : 0);
        const double fast = ulp_distance(*f, cand, ref);
        const double truth = mpfr_ulp_distance(*f, cand, x);
        // The fast path computes the fraction ((|hi| - v_k) + lo) / step in double: one rounding of
        // the sum and an exact division, so |error| <= 2^-53 * (|frac| + 1) + the conversion of the
        // integer part (exact below 2^53): 1e-12 is ample and still far below any ulp question.
        REQUIRE_MESSAGE(std::fabs(fast - truth) <= 1e-12 * (1 + truth),
                        f->tag << " hi " << std::hexfloat << hi << " lo " << l << " cand " << cand << " fast " << fast
                               << " mpfr " << truth);
      }
    }
  }
}

TEST_CASE("RefValue rounding: hi + lo + tail rounds like MPFR on the exact value") {
  // Values sitting exactly on an fp32 rounding boundary in hi + lo, pushed either way by the tail:
  // the tail alone decides nearest-even ties and the directed modes.
  const std::uint64_t key = test::seed() + 5;
  Mpfr x(4000);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto w = philox_4x32(key, 3, static_cast<std::uint64_t>(i));
    const float base = std::bit_cast<float>((w[0] & 0x3FFFFFFFu) | 0x00800000u);  // positive normal fp32
    const double ulp32 = std::ldexp(1.0, std::ilogb(base) - 23);
    const double offsets[] = {0.5 * ulp32, 0.25 * ulp32, 0.0, ulp32 * (w[1] * 0x1p-32)};
    for (double off : offsets) {
      for (int tail = -1; tail <= 1; ++tail) {
        for (double sign : {1.0, -1.0}) {
          const RefValue ref = ref_from_two_sum(sign * base, sign * off);
          RefValue r = ref;
          r.tail = static_cast<std::int8_t>(tail);
          mpfr_set_d(x, ref.hi, MPFR_RNDN);
          mpfr_add_d(x, x, ref.lo, MPFR_RNDN);
          if (tail) {
            Mpfr eps(64);
            mpfr_set_si_2exp(eps, tail, -3000, MPFR_RNDN);
            mpfr_add(x, x, eps, MPFR_RNDN);
          }
          for (const Format* f : {&f32, &f16, &bf16, &f64, &e4m3}) {
            for (Rounding rd : {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Up, Rounding::Down}) {
              const Rounder rr{rd, default_saturation(*f), NanPayload::Preserve};
              const Rounded fast = round_ref(*f, r, rr);
              const Rounded truth = mpfr_ref::round(*f, x, rr);
              REQUIRE_MESSAGE(fast.code == truth.code, f->tag << " " << to_string(rd) << " hi " << std::hexfloat << r.hi
                                                              << " lo " << r.lo << " tail " << tail);
              ++checked;
            }
          }
        }
      }
    }
  }
  MESSAGE(checked << " RefValue roundings checked");
}

TEST_CASE("ULP distance: the shortcut from hi's bits equals the oracle's rounding, bit for bit, on every format") {
  // ulp_distance finds RZ(|x|) from hi's bits where it can; ulp_distance_generic always through round_exact. The
  // references here sit where the shortcut must decide: hi on a code of the format (lo and the tail then say whether x
  // is above or below it), on a binade boundary, a double ulp beside a code, at the smallest normal and the largest
  // finite value, and random.
  const std::uint64_t key = test::seed() + 11;
  std::int64_t compared = 0;
  for (const Format* f : all_formats()) {
    if (f->total_bits() > 64 || !f->is_signed()) continue;
    for (int i = 0; i < 4000; ++i) {
      const auto w = philox_4x32(key, static_cast<std::uint64_t>(f->total_bits()), static_cast<std::uint64_t>(i));
      const std::uint64_t max = f->max_finite_code();
      // A code: random, near the largest finite, near the smallest normal, or a power of two.
      std::uint64_t code = ((static_cast<std::uint64_t>(w[0]) << 32) | w[1]) % (max + 1);
      const std::uint64_t smallest_normal = std::uint64_t{1} << f->frac_bits;
      if (i % 5 == 1) code = max - std::min<std::uint64_t>(max, w[2] % 3);
      if (i % 5 == 2) code = smallest_normal - 2 + w[2] % 5;
      if (i % 5 == 3) code &= ~f->frac_mask();
      if (code > max) code = max;
      const double v = to_double(*f, code);
      if (!std::isfinite(v) || v == 0) continue;
      // hi: the code's value, or a double ulp beside it; lo: none, or a small part of hi's ulp with either sign.
      double hi = v;
      if (i % 7 == 4) hi = std::nextafter(v, INFINITY);
      if (i % 7 == 5) hi = std::nextafter(v, 0.0);
      if (hi == 0 || !std::isfinite(hi)) continue;
      const double half_ulp = (std::nextafter(std::fabs(hi), INFINITY) - std::fabs(hi)) / 2;
      double lo = (w[3] % 3 == 0) ? 0.0 : std::ldexp(half_ulp, -static_cast<int>(w[3] % 40)) * ((w[3] >> 8) & 1 ? -1 : 1) * 0.75;
      // Also lo beyond hi's ulp (hi + lo not a rounded pair, as no oracle result is): up to two of the format's
      // spacings either way, where the shortcut must see that it cannot decide.
      if (i % 11 == 6) lo = std::ldexp(static_cast<double>(static_cast<std::int32_t>(w[2]) % 9), -2) * std::fabs(v - to_double(*f, code - 1));
      const auto tail = static_cast<std::int8_t>(static_cast<int>(w[3] >> 16) % 3 - 1);
      for (const double sign : {1.0, -1.0}) {
        const RefValue ref{sign * hi, sign * lo, static_cast<std::int8_t>(sign > 0 ? tail : -tail)};
        for (int step = -2; step <= 2; ++step) {
          const std::int64_t ord = code_ordinal(*f, code | (sign < 0 ? f->sign_mask() : 0)) + step;
          const std::uint64_t mag = static_cast<std::uint64_t>(ord < 0 ? -ord : ord);
          if (mag > max) continue;
          const std::uint64_t cand = mag | (ord < 0 ? f->sign_mask() : 0);
          const double quick = ulp_distance(*f, cand, ref), generic = ulp_distance_generic(*f, cand, ref);
          REQUIRE_MESSAGE(std::bit_cast<std::uint64_t>(quick) == std::bit_cast<std::uint64_t>(generic),
                          f->tag << " hi " << std::hexfloat << ref.hi << " lo " << ref.lo << " tail " << int(ref.tail) << " cand " << cand
                                 << " quick " << quick << " generic " << generic);
          ++compared;
        }
      }
    }
  }
  CHECK(compared > 100000);
}
