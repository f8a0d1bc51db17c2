// tests/oracle/format_test.cpp — the format table of DESIGN.md, and exact decoding of every code.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "oracle/format.hpp"

using namespace fpcert;

namespace {
double p2(int e) { return std::ldexp(1.0, e); }
}  // namespace

TEST_CASE("format table matches DESIGN.md (public specs)") {
  struct Row {
    const Format* f;
    int s, e, m, p;
    double u, max_finite, min_normal, min_sub;
    bool inf, nan;
  };
  // Values typed from the public specs (IEEE 754-2008, OCP 8-bit FP spec, OCP MX v1.0), not
  // from fpcert's derivations. fp32's max is FLT_MAX; bf16's (2 - 2^-7) * 2^127 = 3.3895e38.
  const Row rows[] = {
      {&f32, 1, 8, 23, 24, p2(-24), std::numeric_limits<float>::max(), p2(-126), p2(-149), true, true},
      {&tf32, 1, 8, 10, 11, p2(-11), (2 - p2(-10)) * p2(127), p2(-126), p2(-136), true, true},
      {&f16, 1, 5, 10, 11, p2(-11), 65504, p2(-14), p2(-24), true, true},
      {&bf16, 1, 8, 7, 8, p2(-8), (2 - p2(-7)) * p2(127), p2(-126), p2(-133), true, true},
      {&e4m3, 1, 4, 3, 4, p2(-4), 448, p2(-6), p2(-9), false, true},
      {&e5m2, 1, 5, 2, 3, p2(-3), 57344, p2(-14), p2(-16), true, true},
      {&e2m3, 1, 2, 3, 4, p2(-4), 7.5, 1, 0.125, false, false},
      {&e3m2, 1, 3, 2, 3, p2(-3), 28, 0.25, 0.0625, false, false},
      {&e2m1, 1, 2, 1, 2, p2(-2), 6, 1, 0.5, false, false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.f->tag);
    CHECK(r.f->sign_bits == r.s);
    CHECK(r.f->exp_bits == r.e);
    CHECK(r.f->frac_bits == r.m);
    CHECK(r.f->precision() == r.p);
    CHECK(r.f->unit_roundoff() == r.u);
    CHECK(r.f->max_finite() == r.max_finite);
    CHECK(r.f->min_normal() == r.min_normal);
    CHECK(r.f->min_subnormal() == r.min_sub);
    CHECK(r.f->has_inf() == r.inf);
    CHECK(r.f->has_nan() == r.nan);
  }
  // DESIGN.md's rounded decimals: fp32 3.4028e38, bf16 3.3895e38, tf32 ~3.40e38.
  CHECK(std::fabs(f32.max_finite() / 3.4028e38 - 1) < 1e-4);
  CHECK(std::fabs(bf16.max_finite() / 3.3895e38 - 1) < 1e-4);
  CHECK(std::fabs(tf32.max_finite() / 3.40e38 - 1) < 1e-2);
  // fp64 against the host's double.
  CHECK(f64.max_finite() == std::numeric_limits<double>::max());
  CHECK(f64.min_normal() == std::numeric_limits<double>::min());
  CHECK(f64.min_subnormal() == std::numeric_limits<double>::denorm_min());
  CHECK(f64.unit_roundoff() == std::numeric_limits<double>::epsilon() / 2);
  // ue8m0 (OCP MX): 2^-127 .. 2^127, no zero, 0xFF is NaN.
  CHECK(ue8m0.min_normal() == p2(-127));
  CHECK(ue8m0.max_finite() == p2(127));
  CHECK(!ue8m0.has_zero());
  CHECK(classify(ue8m0, 0xFF) == FpClass::NaN);
  CHECK(to_double(ue8m0, 0x00) == p2(-127));
  CHECK(to_double(ue8m0, 0x7F) == 1.0);
  CHECK(to_double(ue8m0, 0xFE) == p2(127));
}

TEST_CASE("lookup by tag, name and alias; unknown names") {
  CHECK(find_format("f16") == &f16);
  CHECK(find_format("fp16") == &f16);
  CHECK(find_format("FP16") == &f16);
  CHECK(find_format("half") == &f16);
  CHECK(find_format("bfloat16") == &bf16);
  CHECK(find_format("float8_e4m3fn") == &e4m3);
  CHECK(find_format("fp8_e5m2") == &e5m2);
  CHECK(find_format("e8m0") == &ue8m0);
  CHECK(find_format("f17") == nullptr);
  CHECK(find_format("") == nullptr);
  CHECK(all_formats().size() == 11);
}

TEST_CASE("every fp32 code decodes exactly (sampled against the host float)") {
  // 2^20 codes spread over the whole space (stride is odd, so every exponent is visited), plus
  // the boundaries of every binade.
  for (std::uint64_t i = 0; i < (1u << 20); ++i) {
    const std::uint32_t c = static_cast<std::uint32_t>(i * 4099u + (i >> 7));
    const float h = std::bit_cast<float>(c);
    const double d = to_double(f32, c);
    if (std::isnan(h)) {
      REQUIRE(std::isnan(d));
      REQUIRE(classify(f32, c) == FpClass::NaN);
    } else {
      REQUIRE(d == static_cast<double>(h));
      REQUIRE(std::signbit(d) == std::signbit(h));
    }
  }
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu})
      for (std::uint32_t s : {0u, 0x80000000u}) {
        const std::uint32_t c = s | (e << 23) | m;
        const float h = std::bit_cast<float>(c);
        if (!std::isnan(h)) CHECK(to_double(f32, c) == static_cast<double>(h));
      }
}

#if defined(__FLT16_MANT_DIG__)
TEST_CASE("every fp16 code decodes exactly (against the host _Float16)") {
  for (std::uint32_t c = 0; c < 65536; ++c) {
    const _Float16 h = std::bit_cast<_Float16>(static_cast<std::uint16_t>(c));
    const double d = to_double(f16, c);
    const double ref = static_cast<double>(h);
    if (std::isnan(ref)) {
      REQUIRE(std::isnan(d));
    } else {
      REQUIRE(d == ref);
      REQUIRE(std::signbit(d) == std::signbit(ref));
    }
    const FpClass k = classify(f16, c);
    const int host = std::fpclassify(ref);
    const FpClass expect = host == FP_NAN ? FpClass::NaN
                           : host == FP_INFINITE ? FpClass::Inf
                           : host == FP_ZERO ? FpClass::Zero
                           : host == FP_SUBNORMAL || std::fabs(ref) < 0x1p-14 ? FpClass::Subnormal
                                                                              : FpClass::Normal;
    REQUIRE(k == expect);
  }
}
#endif

TEST_CASE("every bf16 code decodes exactly (as the top half of an fp32)") {
  for (std::uint32_t c = 0; c < 65536; ++c) {
    const float h = std::bit_cast<float>(c << 16);
    const double d = to_double(bf16, c);
    if (std::isnan(h)) REQUIRE(std::isnan(d));
    else REQUIRE(d == static_cast<double>(h));
  }
}

TEST_CASE("every tf32 code decodes as the fp32 with the low 13 bits zero") {
  for (std::uint32_t c = 0; c < (1u << 19); ++c) {
    const float h = std::bit_cast<float>(c << 13);
    const double d = to_double(tf32, c);
    if (std::isnan(h)) REQUIRE(std::isnan(d));
    else REQUIRE(d == static_cast<double>(h));
    REQUIRE(to_container(tf32, c) == (std::uint64_t{c} << 13));
    REQUIRE(from_container(tf32, std::uint64_t{c} << 13) == c);
  }
}

TEST_CASE("8-, 6- and 4-bit formats: every code against the OCP tables") {
  // OCP MX v1.0, table of e2m1 values (codes 0..7): 0, 0.5, 1, 1.5, 2, 3, 4, 6.
  const double e2m1_vals[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (std::uint32_t c = 0; c < 16; ++c) {
    const double v = e2m1_vals[c & 7];
    CHECK(to_double(e2m1, c) == ((c & 8) ? -v : v));
    CHECK(std::signbit(to_double(e2m1, c)) == ((c & 8) != 0));
  }
  // e2m3: subnormals m/8 (m = 0..7), then (1 + m/8) * 2^(e-1) for e = 1..3.
  for (std::uint32_t c = 0; c < 32; ++c) {
    const std::uint32_t e = c >> 3, m = c & 7;
    const double v = e == 0 ? m / 8.0 : (1 + m / 8.0) * p2(static_cast<int>(e) - 1);
    CHECK(to_double(e2m3, c) == v);
    CHECK(to_double(e2m3, c | 32) == -v);
  }
  // e3m2: subnormals (m/4) * 2^-2, then (1 + m/4) * 2^(e-3) for e = 1..7.
  for (std::uint32_t c = 0; c < 32; ++c) {
    const std::uint32_t e = c >> 2, m = c & 3;
    const double v = e == 0 ? (m / 4.0) * 0.25 : (1 + m / 4.0) * p2(static_cast<int>(e) - 3);
    CHECK(to_double(e3m2, c) == v);
  }
  // OCP 8-bit FP: annotated codes.
  CHECK(to_double(e4m3, 0x7E) == 448);      // S.1111.110: largest finite
  CHECK(classify(e4m3, 0x7F) == FpClass::NaN);   // S.1111.111: the only NaN
  CHECK(classify(e4m3, 0xFF) == FpClass::NaN);
  CHECK(to_double(e4m3, 0x78) == 256);      // S.1111.000 is finite in fn formats
  CHECK(to_double(e4m3, 0x01) == p2(-9));   // smallest subnormal
  CHECK(to_double(e4m3, 0x08) == p2(-6));   // smallest normal
  CHECK(to_double(e4m3, 0x38) == 1.0);      // 0.0111.000
  CHECK(to_double(e5m2, 0x7B) == 57344);    // 0.11110.11: largest finite
  CHECK(classify(e5m2, 0x7C) == FpClass::Inf);
  for (std::uint32_t c : {0x7Du, 0x7Eu, 0x7Fu}) CHECK(classify(e5m2, c) == FpClass::NaN);
  CHECK(to_double(e5m2, 0x01) == p2(-16));
  CHECK(to_double(e5m2, 0x04) == p2(-14));
  CHECK(to_double(e5m2, 0x3C) == 1.0);
  // Codes are ordered by magnitude: decoding is monotone over the finite codes of every format.
  for (const Format* f : all_formats()) {
    if (f->total_bits() > 20) continue;
    double prev = -1;
    for (std::uint64_t c = 0; c <= f->max_finite_code(); ++c) {
      const double v = to_double(*f, c);
      CAPTURE(f->tag);
      CAPTURE(c);
      REQUIRE(v > prev);
      prev = v;
    }
  }
}

TEST_CASE("derived constants agree with each other for every format") {
  for (const Format* f : all_formats()) {
    CAPTURE(f->tag);
    CHECK(f->precision() == f->frac_bits + 1);
    CHECK(f->epsilon() == 2 * f->unit_roundoff());
    // The largest finite value is just below 2^(emax+1), by one or two ulps of the top binade.
    const int ulps_below = f->specials == Specials::FiniteNaN ? 2 : 1;
    const double expect = f->specials == Specials::ScaleOnly
                              ? std::ldexp(1.0, f->emax())
                              : std::ldexp(2.0 - ulps_below * std::ldexp(1.0, -f->frac_bits), f->emax());
    CHECK(f->max_finite() == expect);
    CHECK(classify(*f, f->max_finite_code()) == FpClass::Normal);
    if (f->has_inf()) CHECK(classify(*f, f->inf_code()) == FpClass::Inf);
    if (f->has_nan()) CHECK(classify(*f, f->canonical_nan_code()) == FpClass::NaN);
  }
}
