// tests/oracle/round_test.cpp — the fast rounding path against MPFR, every mode and saturation.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/philox.hpp"
#include "oracle/convert/convert_check.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/round.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::vector<Saturation> valid_saturations(const Format& f) {
  std::vector<Saturation> r;
  for (Saturation s : kAllSaturations)
    if (saturation_valid(f, s)) r.push_back(s);
  return r;
}

/// Every source code of src into every format, mode and valid saturation: fast path == MPFR,
/// codes and flags. Returns the number of conversions checked.
std::uint64_t check_all_pairs(const Format& src, std::uint64_t first, std::uint64_t count) {
  std::uint64_t checked = 0;
  for (const Format* dst : all_formats()) {
    for (Rounding rd : kAllRoundings) {
      for (Saturation sat : valid_saturations(*dst)) {
        ConvertCheckSpec spec;
        spec.src = &src;
        spec.dst = dst;
        spec.rounder = {rd, sat, NanPayload::Preserve};
        spec.seed = test::seed();
        spec.mpfr_every = true;
        spec.strict_nan = true;
        spec.first = first;
        spec.count = count;
        const ConvertCheckResult r = check_conversion(spec);
        CAPTURE(src.tag);
        CAPTURE(dst->tag);
        CAPTURE(to_string(rd));
        CAPTURE(to_string(sat));
        for (const auto& m : r.listed)
          MESSAGE("src " << hex_code(src, m.src) << " MPFR " << hex_code(*dst, m.expected) << " fast " << hex_code(*dst, m.got));
        REQUIRE(r.model_mismatches == 0);
        REQUIRE(r.mismatches == 0);
        REQUIRE(r.mpfr_checked == r.patterns);
        checked += r.patterns;
      }
    }
  }
  return checked;
}

}  // namespace

TEST_CASE("MPFR is built thread-safe (the checks run it on every core)") { CHECK(mpfr_buildopt_tls_p() != 0); }

TEST_CASE_TEMPLATE_DEFINE("every code of a narrow format, every mode, equals MPFR", T, narrow_all) {
  const Format& src = *T::fmt;
  const std::uint64_t n = check_all_pairs(src, 0, src.code_count());
  MESSAGE(src.tag << ": " << n << " conversions checked against MPFR");
  CHECK(n > 0);
}
struct Src_f16 { static constexpr const Format* fmt = &f16; };
struct Src_bf16 { static constexpr const Format* fmt = &bf16; };
struct Src_e4m3 { static constexpr const Format* fmt = &e4m3; };
struct Src_e5m2 { static constexpr const Format* fmt = &e5m2; };
struct Src_e2m3 { static constexpr const Format* fmt = &e2m3; };
struct Src_e3m2 { static constexpr const Format* fmt = &e3m2; };
struct Src_e2m1 { static constexpr const Format* fmt = &e2m1; };
struct Src_ue8m0 { static constexpr const Format* fmt = &ue8m0; };
TEST_CASE_TEMPLATE_INVOKE(narrow_all, Src_f16, Src_bf16, Src_e4m3, Src_e5m2, Src_e2m3, Src_e3m2, Src_e2m1, Src_ue8m0);

TEST_CASE("fp32: seeded sample plus every binade's rounding boundaries, every mode, equals MPFR") {
  // (1) Random codes; (2) for every exponent, fractions at and around the rounding points of
  // every narrower format (a ulp of bf16 is 2^16 fp32 ulps: ties are 0x8000, 0x7FFF, 0x8001 ...).
  std::vector<std::uint32_t> codes;
  const std::uint64_t key = test::seed();
  for (std::uint32_t i = 0; i < 20000; ++i) codes.push_back(random_bits32(key, i));
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t tie_bit : {2u, 12u, 13u, 16u, 19u, 20u, 21u, 22u})
      for (int d = -1; d <= 1; ++d)
        for (std::uint32_t even : {0u, 1u}) {
          const std::uint32_t m = ((even << tie_bit) + (1u << (tie_bit - 1)) + static_cast<std::uint32_t>(d)) & 0x7FFFFFu;
          codes.push_back((e << 23) | m);
          codes.push_back(0x80000000u | (e << 23) | m);
        }
  std::uint64_t checked = 0;
  for (const Format* dst : all_formats()) {
    for (Rounding rd : kAllRoundings) {
      for (Saturation sat : valid_saturations(*dst)) {
        const Rounder r{rd, sat, NanPayload::Preserve};
        for (std::uint32_t c : codes) {
          const std::uint32_t rbits = random_bits32(key ^ 0x5EED, c);
          const Rounded fast = convert(f32, c, *dst, r, rbits);
          const Rounded ref = mpfr_ref::convert(f32, c, *dst, r, rbits);
          if (!(fast == ref)) {
            FAIL_CHECK("f32 " << std::hex << c << " -> " << dst->tag << " " << to_string(rd) << "/" << to_string(sat)
                              << ": fast " << fast.code << " flags " << int(fast.flags) << ", MPFR " << ref.code
                              << " flags " << int(ref.flags));
            return;
          }
          ++checked;
        }
      }
    }
  }
  MESSAGE(checked << " fp32 conversions checked against MPFR");
}

TEST_CASE("tf32 source: every 7th code into every narrower format equals MPFR") {
  // 2^19 codes; a stride of 7 visits every exponent and every low-fraction residue.
  for (const Format* dst : {&f16, &bf16, &e4m3, &e5m2, &e2m1, &ue8m0}) {
    for (Rounding rd : kAllRoundings) {
      const Rounder r{rd, default_saturation(*dst), NanPayload::Preserve};
      for (std::uint64_t c = 0; c < tf32.code_count(); c += 7) {
        const Rounded fast = convert(tf32, c, *dst, r, 0x9E3779B9u);
        const Rounded ref = mpfr_ref::convert(tf32, c, *dst, r, 0x9E3779B9u);
        REQUIRE_MESSAGE(fast == ref, "tf32 " << c << " -> " << dst->tag << " " << to_string(rd));
      }
    }
  }
}

TEST_CASE("fp64 sources: values that need more than 53 bits of care (double-rounding traps)") {
  // x = 1 + 2^-11 + 2^-40 is above the fp16 tie 1 + 2^-11: a double rounding through fp32
  // (1 + 2^-11 exactly, a tie, to even 1.0) would be wrong; correct fp16 RN is 1 + 2^-10.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(round_double(f16, x, Rounder::nearest(f16)).code == 0x3C01);
  CHECK(round_double(f16, static_cast<double>(static_cast<float>(x)), Rounder::nearest(f16)).code == 0x3C00);
  const std::uint64_t key = test::seed() + 64;
  for (int i = 0; i < 40000; ++i) {
    const auto w = philox_4x32(key, 0, static_cast<std::uint64_t>(i));
    // Bias the exponent towards the narrow formats' ranges so rounding, underflow and overflow all occur.
    std::uint64_t bits = (std::uint64_t{w[0]} << 32) | w[1];
    const std::uint64_t exp = 1023 + (w[2] % 300) - 150;
    bits = (bits & 0x800FFFFFFFFFFFFFULL) | (exp << 52);
    const double v = std::bit_cast<double>(bits);
    for (const Format* dst : all_formats()) {
      for (Rounding rd : kAllRoundings) {
        const Rounder r{rd, default_saturation(*dst), NanPayload::Preserve};
        const Rounded fast = round_double(*dst, v, r, w[3]);
        const Rounded ref = mpfr_ref::convert(f64, bits, *dst, r, w[3]);
        REQUIRE_MESSAGE(fast == ref, "f64 " << std::hexfloat << v << " -> " << dst->tag << " " << to_string(rd));
      }
    }
  }
}

TEST_CASE("known values of DESIGN.md") {
  const Rounder rn16 = Rounder::nearest(f16), rnbf = Rounder::nearest(bf16);
  CHECK(round_double(f16, 300000.0, rn16).code == 0x7C00);   // above 65504 + half ulp: Inf
  CHECK(to_double(bf16, round_double(bf16, 300000.0, rnbf).code) == 299008.0);
  const double x = static_cast<double>(1.0007f);              // the fp32 nearest 1.0007
  CHECK(to_double(f16, round_double(f16, x, rn16).code) == 1.0009765625);
  CHECK(to_double(bf16, round_double(bf16, x, rnbf).code) == 1.0);
  // An fp16 running sum of ones stops at 2048: 2048 + 1 is a tie between 2048 and 2050 (the
  // fp16 spacing there is 2), and ties go to the even significand, 2048.
  double s = 0;
  for (int i = 0; i < 3000; ++i) s = quantize(f16, s + 1.0);  // s + 1 is exact in double
  CHECK(s == 2048.0);
}

TEST_CASE("special values: annotated table") {
  const Rounder ieee{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  const Rounder sat{Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve};
  const Rounder nosat{Rounding::NearestEven, Saturation::NaN, NanPayload::Preserve};
  // NaN payloads: quiet bit set, top payload bits kept, sign kept.
  CHECK(convert(f32, 0x7F800001, f16, ieee).code == 0x7E00);   // sNaN payload 1: only the quiet bit survives
  CHECK(convert(f32, 0xFFC12345, f16, ieee).code == 0xFE09);   // payload 0x412345 >> 13 = 0x209, quiet already set
  CHECK(convert(f32, 0x7FC00000, bf16, ieee).code == 0x7FC0);  // the default NaN keeps its bits
  CHECK(convert(f32, 0xFFC12345, f16, {Rounding::NearestEven, Saturation::Inf, NanPayload::Canonical}).code == 0x7E00);
  CHECK(convert(f16, 0x7E01, f32, ieee).code == 0x7FC02000);   // widening keeps the payload top-aligned
  // Inf: IEEE keeps it, satfinite clamps, fn formats without saturation make NaN.
  CHECK(convert(f32, 0x7F800000, f16, ieee).code == 0x7C00);
  CHECK(convert(f32, 0xFF800000, f16, sat).code == 0xFBFF);    // -65504
  CHECK(convert(f32, 0x7F800000, e4m3, nosat).code == 0x7F);   // NaN
  CHECK(convert(f32, 0x7F800000, e4m3, sat).code == 0x7E);     // 448
  CHECK(convert(f32, 0xFF800000, e5m2, ieee).code == 0xFC);    // -Inf
  // Overflow of finite values: 470 is above e4m3's 448 + 16 midpoint, 460 rounds down to 448.
  CHECK(round_double(e4m3, 470, nosat).code == 0x7F);
  CHECK(round_double(e4m3, 470, sat).code == 0x7E);
  CHECK(round_double(e4m3, 460, nosat).code == 0x7E);
  CHECK(round_double(e4m3, 464, nosat).code == 0x7E);          // the tie goes to even 448 (1.110b)
  // Directed rounding never overflows toward zero: fp16 RZ of 1e6 is 65504, RD of -1e6 is -Inf.
  CHECK(round_double(f16, 1e6, {Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve}).code == 0x7BFF);
  CHECK(round_double(f16, -1e6, {Rounding::Down, Saturation::Inf, NanPayload::Preserve}).code == 0xFC00);
  CHECK(round_double(f16, -1e6, {Rounding::Up, Saturation::Inf, NanPayload::Preserve}).code == 0xFBFF);
  // Finite-only formats: NaN becomes +max (CUDA cvt.satfinite), Inf clamps with its sign.
  CHECK(convert(f32, 0xFFC00000, e2m1, sat).code == 0x7);      // -NaN -> +6
  CHECK(convert(f32, 0xFF800000, e2m1, sat).code == 0xF);      // -Inf -> -6
  CHECK(round_double(e2m1, 5.0, sat).code == 0x6);             // tie between 4 (0x6) and 6 (0x7): even
  CHECK(round_double(e2m1, 0.25, sat).code == 0x0);            // tie between 0 and 0.5: even (0)
  CHECK(round_double(e2m1, -0.26, sat).code == 0x9);           // -0.5
  // Signed zeros survive every format that has them; underflow keeps the sign.
  CHECK(round_double(f16, -0.0, ieee).code == 0x8000);
  CHECK(round_double(f16, -1e-10, ieee).code == 0x8000);
  CHECK(round_double(e2m1, -0.0, sat).code == 0x8);
  // ue8m0: |x| to a power of two; no zero (2^-127 instead); ties to the even code.
  const Rounder u_rn{Rounding::NearestEven, Saturation::NaN, NanPayload::Preserve};
  const Rounder u_rz{Rounding::TowardZero, Saturation::NaN, NanPayload::Preserve};
  const Rounder u_ru{Rounding::Up, Saturation::NaN, NanPayload::Preserve};
  const Rounder u_sat{Rounding::Up, Saturation::Finite, NanPayload::Preserve};
  CHECK(round_double(ue8m0, 1.0, u_rn).code == 0x7F);
  CHECK(round_double(ue8m0, 3.0, u_rn).code == 0x80);   // 3 = 1.5 * 2: tie between 2 (0x80, even) and 4
  CHECK(round_double(ue8m0, 3.0, u_rz).code == 0x80);
  CHECK(round_double(ue8m0, 3.0, u_ru).code == 0x81);
  CHECK(round_double(ue8m0, -3.0, u_ru).code == 0x81);  // the sign is ignored
  CHECK(round_double(ue8m0, 0.0, u_rz).code == 0x00);   // no zero: 2^-127
  CHECK(round_double(ue8m0, 1e-300, u_ru).code == 0x00);
  CHECK(round_double(ue8m0, 1.5 * std::ldexp(1.0, 127), u_ru).code == 0xFF);   // overflow: NaN
  CHECK(round_double(ue8m0, 1.5 * std::ldexp(1.0, 127), u_sat).code == 0xFE);  // satfinite: 2^127
  CHECK(round_double(ue8m0, INFINITY, u_rz).code == 0xFF);
}

TEST_CASE("every rounding mode brackets the exact value (property, all formats)") {
  // RD(x) <= x <= RU(x), RZ toward zero, RN and RNA within half an ulp: checked on decoded values.
  const std::uint64_t key = test::seed() + 7;
  for (int i = 0; i < 200000; ++i) {
    const auto w = philox_4x32(key, 1, static_cast<std::uint64_t>(i));
    const float xf = std::bit_cast<float>(w[0]);
    if (!std::isfinite(xf)) continue;
    const double x = xf;
    for (const Format* f : {&f16, &bf16, &e4m3, &e5m2, &tf32}) {
      if (std::fabs(x) >= f->max_finite()) continue;
      const Saturation s = default_saturation(*f);
      const double rd = to_double(*f, round_double(*f, x, {Rounding::Down, s, NanPayload::Preserve}).code);
      const double ru = to_double(*f, round_double(*f, x, {Rounding::Up, s, NanPayload::Preserve}).code);
      const double rz = to_double(*f, round_double(*f, x, {Rounding::TowardZero, s, NanPayload::Preserve}).code);
      const double rn = to_double(*f, round_double(*f, x, {Rounding::NearestEven, s, NanPayload::Preserve}).code);
      REQUIRE(rd <= x);
      REQUIRE(x <= ru);
      REQUIRE(std::fabs(rz) <= std::fabs(x));
      REQUIRE((rn == rd || rn == ru));
      REQUIRE(std::fabs(rn - x) <= std::fabs((x < rn ? rd : ru) - x));
    }
  }
}

TEST_CASE("stochastic rounding: exact values never move, frequencies follow the discarded fraction") {
  const Rounder sr{Rounding::Stochastic, Saturation::Inf, NanPayload::Preserve};
  // 1.0 is exact in fp16: no rbits may move it.
  for (std::uint32_t r : {0u, 1u, 0x80000000u, 0xFFFFFFFFu}) CHECK(round_double(f16, 1.0, sr, r).code == 0x3C00);
  // x = 1 + 0.3 ulp (fp16 ulp at 1 is 2^-10): round up with probability 0.3 exactly as D/2^32.
  const double x = 1.0 + 0.3 * std::ldexp(1.0, -10);
  const std::uint64_t key = test::seed() + 11;
  const int n = 200000;
  int ups = 0;
  for (int i = 0; i < n; ++i) ups += round_double(f16, x, sr, random_bits32(key, static_cast<std::uint64_t>(i))).code == 0x3C01;
  // Binomial(n, 0.3): sd = sqrt(n * 0.3 * 0.7) = 205; 6 sd = 1230 keeps a false failure below 1e-8.
  CHECK(std::abs(ups - static_cast<int>(0.3 * n)) < 1230);
  // The decision rule itself: up iff D + rbits >= 2^32 with D = floor(0.3 * 2^32) (x's fraction is
  // 0.3 to double precision; its first 32 bits are those of 0.3 * 2^32 rounded down).
  const double frac = (x - 1.0) / std::ldexp(1.0, -10);
  const auto D = static_cast<std::uint64_t>(std::floor(std::ldexp(frac, 32)));
  const auto threshold = static_cast<std::uint32_t>((std::uint64_t{1} << 32) - D);
  CHECK(round_double(f16, x, sr, threshold).code == 0x3C01);
  CHECK(round_double(f16, x, sr, threshold - 1).code == 0x3C00);
}

TEST_CASE("outcome classes") {
  const Rounder ieee = Rounder::nearest(f16);
  auto oc = [&](std::uint32_t c, const Format& d, const Rounder& r) {
    return classify_outcome(f32, c, d, convert(f32, c, d, r));
  };
  CHECK(oc(0x7FC00000, f16, ieee) == Outcome::NaN);
  CHECK(oc(0x7F800000, f16, ieee) == Outcome::Inf);
  CHECK(oc(0x80000000, f16, ieee) == Outcome::Zero);
  CHECK(oc(0x3F800000, f16, ieee) == Outcome::ExactNormal);          // 1.0
  CHECK(oc(0x33800000, f16, ieee) == Outcome::ExactSubnormal);       // 2^-24
  CHECK(oc(0x3F8016F0, f16, ieee) == Outcome::RoundedNormal);        // 1.0007
  CHECK(oc(0x33A00000, f16, ieee) == Outcome::RoundedSubnormal);     // 1.25 * 2^-24
  CHECK(oc(0x48927C00, f16, ieee) == Outcome::OverflowInf);          // 300000
  CHECK(oc(0x48927C00, f16, {Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve}) == Outcome::Saturated);
  CHECK(oc(0x48927C00, e4m3, {Rounding::NearestEven, Saturation::NaN, NanPayload::Preserve}) == Outcome::OverflowNaN);
  CHECK(oc(0x33000000, f16, ieee) == Outcome::UnderflowZero);        // 2^-25: a tie with 0, to even
}

TEST_CASE("the exhaustive checker can fail: a wrong subject is caught with its bits") {
  ConvertCheckSpec spec;
  spec.src = &bf16;
  spec.dst = &f16;
  spec.rounder = Rounder::nearest(f16);
  spec.mpfr_every = false;
  spec.mpfr_sample = 0;
  std::vector<std::uint16_t> subject(65536);
  for (std::uint32_t c = 0; c < 65536; ++c)
    subject[c] = static_cast<std::uint16_t>(convert(bf16, c, f16, spec.rounder).code);
  subject[0x3F81] ^= 1;  // one wrong code: bf16 1.0078125 -> should be fp16 0x3C08
  ConvertCheckResult r;
  check_conversion_chunk(spec, 0, 65536, SubjectChunk{subject.data(), 2, false}, r);
  CHECK(r.mismatches == 1);
  CHECK(r.model_mismatches == 0);
  REQUIRE(r.listed.size() == 1);
  CHECK(r.listed[0].src == 0x3F81);
  CHECK(r.listed[0].expected == 0x3C08);
  CHECK(r.mpfr_checked == 1);  // MPFR arbitrated the one disagreement
  CHECK(r.outcomes[static_cast<int>(Outcome::OverflowInf)] > 0);
}
