// tests/oracle/block_format_test.cpp — block-scaled formats against the published constants, worked
// examples whose arithmetic is stated, MPFR (oracle/block/block_mpfr.hpp) on random blocks that force rounding,
// and the structured sweeps of `fpcert quantize --check` at a stride.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "oracle/block/block_check.hpp"
#include "oracle/block/block_format.hpp"
#include "oracle/block/block_mpfr.hpp"
#include "oracle/mpfr_ref.hpp"
#include "base/philox.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::vector<Rounding> all_modes() { return {std::begin(kAllRoundings), std::end(kAllRoundings)}; }

/// Random fp32 values with exponents spread over `span` binades below 2^top and random signs (their
/// low mantissa bits force rounding into every element format).
std::vector<double> random_values(std::uint64_t seed, std::uint64_t stream, std::size_t n, int top, int span) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = philox_4x32(seed, stream, i);
    const int e = top - static_cast<int>(r[0] % static_cast<std::uint32_t>(span));
    const float m = 1.0f + static_cast<float>(r[1] >> 9) * 0x1p-23f;  // [1, 2), every mantissa bit random
    v[i] = std::ldexp(static_cast<double>(m), e) * ((r[2] & 1) ? -1 : 1);
  }
  return v;
}

}  // namespace

TEST_CASE("block formats: derived constants match the published ones") {
  // OCP MX v1.0, table of element formats: largest normal 448, 57344, 7.5, 28, 6; MXINT8 1 63/64.
  struct Row {
    const BlockFormat* f;
    int bits, emax, block;
    double max_elem;
  };
  const Row rows[] = {{&mxfp8_e4m3, 8, 8, 32, 448},  {&mxfp8_e5m2, 8, 15, 32, 57344}, {&mxfp6_e2m3, 6, 2, 32, 7.5},
                      {&mxfp6_e3m2, 6, 4, 32, 28},   {&mxfp4, 4, 2, 32, 6},           {&mxint8, 8, 0, 32, 1.0 + 63.0 / 64},
                      {&nvfp4, 4, 2, 16, 6}};
  for (const Row& r : rows) {
    CAPTURE(r.f->tag);
    CHECK(r.f->element_bits() == r.bits);
    CHECK(r.f->emax_elem() == r.emax);
    CHECK(r.f->block == r.block);
    CHECK(r.f->max_elem() == r.max_elem);
    CHECK(find_block_format(r.f->tag) == r.f);
  }
  CHECK(all_block_formats().size() == 7);
  CHECK(mxfp8_e4m3.scale_nan_code() == 0xFF);
  CHECK(nvfp4.scale_nan_code() == 0x7F);
  CHECK(scale_value(mxfp4, 0) == std::ldexp(1.0, -127));  // E8M0: 2^(code - 127), no zero
  CHECK(scale_value(mxfp4, 254) == std::ldexp(1.0, 127));
  CHECK(std::isnan(scale_value(mxfp4, 255)));
  CHECK(scale_value(nvfp4, 0x7E) == 448);
  CHECK(scale_value(nvfp4, 0xFE) == 448);  // UE4M3: the sign bit is ignored
  CHECK(std::isnan(scale_value(nvfp4, 0x7F)));
  // MXINT8 elements: two's complement times 2^-6; -128 decodes to -2 though fpcert never writes it.
  CHECK(element_value(mxint8, 0x7F) == 127.0 / 64);
  CHECK(element_value(mxint8, 0x81) == -127.0 / 64);
  CHECK(element_value(mxint8, 0x80) == -2.0);
  CHECK(find_block_format("nope") == nullptr);
  CHECK(!rule_valid(nvfp4, ScaleRule::Ceil));
  CHECK(parse_scale_rule("OCP") == ScaleRule::Floor);
  CHECK(!parse_scale_rule("round"));
}

TEST_CASE("block formats: worked examples of the scale rules") {
  // MXFP4, block maximum 7 = 1.75 * 2^2, emax = 2, max_elem = 6 = 1.5 * 2^2, p = 2.
  //   floor: e = 2 - 2 = 0, X = 1: 7 is the tie between 6 (1.1b * 4, odd) and 8 (even): RNE gives 8,
  //          beyond 6: clamped to 6, the saturation of the OCP rule.
  //   ceil:  e = 3 - 2 = 1. even: 1.75 >= 2 - 2^-2 carries: e = 1. rceil: ceil(log2(7/6)) = 1.
  //          X = 2: 7 / 2 = 3.5, the tie between 3 (odd) and 4 (even): 4, i.e. the value 8.
  const double block[2] = {7.0, 0.3};
  std::uint8_t codes[2];
  BlockQuantOptions o;
  o.rule = ScaleRule::Floor;
  BlockSummary s = quantize_block(mxfp4, o, 1, block, 2, 1, codes);
  CHECK(s.scale == 127);
  CHECK(dequantize(mxfp4, codes[0], s.scale) == 6.0);
  CHECK(s.max_saturated);
  CHECK(dequantize(mxfp4, codes[1], s.scale) == 0.5);  // 0.3: between 0 and 0.5, above the midpoint 0.25
  for (ScaleRule r : {ScaleRule::Ceil, ScaleRule::Even, ScaleRule::RCeil}) {
    CAPTURE(to_string(r));
    o.rule = r;
    s = quantize_block(mxfp4, o, 1, block, 2, 1, codes);
    CHECK(s.scale == 128);
    CHECK(dequantize(mxfp4, codes[0], s.scale) == 8.0);
    CHECK(!s.max_saturated);
    CHECK(dequantize(mxfp4, codes[1], s.scale) == 0.0);  // 0.3 / 2 = 0.15 < 0.25: flushed
  }
  // MXFP8 E4M3, maximum 500 = 1.953 * 2^8: floor gives X = 1; 500 lies above the midpoint 496 of 480 and
  // 512, so RNE gives 512, clamped to 448. rceil: ceil(log2(500 / 448)) = 1, X = 2: 250 lies between 240
  // and 256, above their midpoint 248, so 256, the value 512.
  {
    const double b[1] = {500};
    std::uint8_t c[1];
    o.rule = ScaleRule::Floor;
    s = quantize_block(mxfp8_e4m3, o, 1, b, 1, 1, c);
    CHECK(dequantize(mxfp8_e4m3, c[0], s.scale) == 448);
    CHECK(s.saturated == 1);
    o.rule = ScaleRule::RCeil;
    s = quantize_block(mxfp8_e4m3, o, 1, b, 1, 1, c);
    CHECK(dequantize(mxfp8_e4m3, c[0], s.scale) == 512);
  }
  // MXINT8: 1.995 * 64 = 127.68 rounds to 128 > 127: saturates under floor (X = 1). even: 1.995 >=
  // 2 - 2^-7 carries, X = 2: 1.995 / 2 * 64 = 63.84 -> 64, value 2.0.
  {
    const double b[1] = {1.995};
    std::uint8_t c[1];
    o.rule = ScaleRule::Floor;
    s = quantize_block(mxint8, o, 1, b, 1, 1, c);
    CHECK(c[0] == 0x7F);
    CHECK(s.max_saturated);
    o.rule = ScaleRule::Even;
    s = quantize_block(mxint8, o, 1, b, 1, 1, c);
    CHECK(dequantize(mxint8, c[0], s.scale) == 2.0);
  }
  // Zero block: the smallest scale 2^-127, every code zero. NaN or Inf anywhere: the NaN scale.
  {
    const double z[3] = {0.0, -0.0, 0.0};
    std::uint8_t c[3];
    o.rule = ScaleRule::Floor;
    s = quantize_block(mxfp8_e5m2, o, 1, z, 3, 1, c);
    CHECK(s.scale == 0);
    CHECK(dequantize(mxfp8_e5m2, c[1], s.scale) == 0.0);
    CHECK(std::signbit(dequantize(mxfp8_e5m2, c[1], s.scale)));
    const double n[3] = {1.0, INFINITY, 2.0};
    s = quantize_block(mxfp8_e5m2, o, 1, n, 3, 1, c);
    CHECK(s.nonfinite);
    CHECK(s.scale == 0xFF);
    CHECK(std::isnan(dequantize(mxfp8_e5m2, c[0], s.scale)));
  }
  // Clamps: a maximum of 2^-140 wants e = -148 < -127: X = 2^-127 and 2^-140 / 2^-127 = 2^-13 is below
  // e4m3's smallest subnormal 2^-9 (and its half): flushed. A maximum of 2^200 wants e = 198 > 127: NaN.
  {
    const double t[1] = {std::ldexp(1.0, -140)};
    std::uint8_t c[1];
    s = quantize_block(mxfp8_e4m3, o, 1, t, 1, 1, c);
    CHECK(s.scale == 0);
    CHECK(s.flushed == 1);
    const double h[1] = {std::ldexp(1.0, 200)};
    s = quantize_block(mxfp4, o, 1, h, 1, 1, c);
    CHECK(s.scale == 0xFF);
  }
  // NVFP4 with s_t = 1: maximum 9.75 gives 9.75 / 6 = 1.625, an e4m3 value (0x3D), so the maximum maps to
  // the element 6 exactly; 1.0 / 1.625 = 0.615 rounds to 0.5 (midpoint 0.75).
  {
    const double b[2] = {9.75, 1.0};
    std::uint8_t c[2];
    o.rule = ScaleRule::Even;
    s = quantize_block(nvfp4, o, 1.0, b, 2, 1, c);
    CHECK(s.scale == 0x3D);
    CHECK(dequantize(nvfp4, c[0], s.scale, 1.0) == 9.75);
    CHECK(dequantize(nvfp4, c[1], s.scale, 1.0) == 0.8125);
  }
  // NVFP4's tensor scale: 2688 = 448 * 6 maps to 1; zero tensors get 1.
  CHECK(nvfp4_tensor_scale(2688.0) == 1.0);
  CHECK(nvfp4_tensor_scale(0.0) == 1.0);
}

TEST_CASE("block formats: random tensors against MPFR, every format, rule and rounding") {
  const std::uint64_t seed = test::seed();
  MESSAGE("FPCERT_TEST_SEED=" << seed);
  std::uint64_t stream = 0;
  for (const BlockFormat* f : all_block_formats()) {
    for (ScaleRule rule : kAllScaleRules) {
      if (!rule_valid(*f, rule)) continue;
      for (Rounding r : all_modes()) {
        for (int axis : {1, 0}) {
          CAPTURE(f->tag);
          CAPTURE(to_string(rule));
          CAPTURE(to_string(r));
          CAPTURE(axis);
          // 24 x 40 values over 40 binades: blocks of 32 along rows leave a short block of 8; along columns
          // (axis 0) a short block of 24 - 16 = 8 for NVFP4 and one short block of 24 for the others.
          const std::int64_t rows = 24, cols = 40;
          std::vector<double> x = random_values(seed, stream++, static_cast<std::size_t>(rows * cols), 20, 40);
          BlockQuantOptions o;
          o.rule = rule;
          o.rounding = r;
          o.axis = axis;
          o.seed = seed;
          const BlockTensor t = quantize_tensor(*f, o, x.data(), rows, cols);
          double amax_t = 0;
          for (double v : x) amax_t = std::max(amax_t, std::fabs(v));
          const double ts = f->tensor_scale ? mpfr_ref::nvfp4_tensor_scale(amax_t) : 1.0;
          CHECK(t.tensor_scale == ts);
          std::int64_t inexact = 0;
          mpfr_ref::Mpfr m(128);
          for (std::int64_t br = 0; br < t.scale_rows; ++br)
            for (std::int64_t bc = 0; bc < t.scale_cols; ++bc) {
              // The block's members.
              std::vector<std::pair<std::int64_t, std::int64_t>> idx;
              for (std::int64_t q = 0; q < t.block; ++q) {
                const std::int64_t i = axis == 1 ? br : br * t.block + q, j = axis == 1 ? bc * t.block + q : bc;
                if (i < rows && j < cols) idx.push_back({i, j});
              }
              double amax = 0;
              for (auto [i, j] : idx) amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(i * cols + j)]));
              const std::uint8_t want_scale = mpfr_ref::block_scale_code(*f, rule, amax, false, ts);
              REQUIRE(t.scales[static_cast<std::size_t>(br * t.scale_cols + bc)] == want_scale);
              for (auto [i, j] : idx) {
                const auto flat = static_cast<std::uint64_t>(i * cols + j);
                const double v = x[flat];
                const std::uint32_t rbits = r == Rounding::Stochastic ? random_bits32(seed, flat) : 0;
                const ElementCode want = mpfr_ref::quantize_element(*f, v, want_scale, ts, r, rbits);
                CAPTURE(v);
                REQUIRE(t.codes[flat] == want.code);
                REQUIRE(mpfr_ref::dequantize(m, *f, want.code, want_scale, ts));
                REQUIRE(mpfr_cmp_d(m, t.value(i, j)) == 0);
                if (want.flags & kElemInexact) ++inexact;
              }
            }
          // The inputs must force rounding: most elements are inexact.
          CHECK(inexact > rows * cols / 2);
        }
      }
    }
  }
}

TEST_CASE("block formats: ceil and rceil never saturate, floor can (property on random blocks)") {
  const std::uint64_t seed = test::seed();
  for (const BlockFormat* f : all_block_formats()) {
    if (!f->pow2_scales()) continue;
    std::int64_t floor_sat = 0;
    for (ScaleRule rule : kAllScaleRules) {
      CAPTURE(f->tag);
      CAPTURE(to_string(rule));
      const std::vector<double> x = random_values(seed, 1000 + static_cast<std::uint64_t>(rule), 32 * 512, 3, 6);
      BlockQuantOptions o;
      o.rule = rule;
      const BlockTensor t = quantize_tensor(*f, o, x.data(), 512, 32);
      std::int64_t sat = 0;
      for (const BlockSummary& s : t.blocks) sat += s.saturated;
      // ceil: amax / X <= 2^emax <= max_elem; rceil: X >= amax / max_elem. Neither can exceed max_elem.
      if (rule == ScaleRule::Ceil || rule == ScaleRule::RCeil) CHECK(sat == 0);
      if (rule == ScaleRule::Floor) floor_sat = sat;
    }
    // floor: amax / X is uniform-ish in [2^emax, 2^(emax+1)); the part above max_elem (rounded) saturates.
    CHECK(floor_sat > 0);
  }
}

TEST_CASE("block formats: int8 byte conversions are two's complement") {
  for (int k = -127; k <= 127; ++k) {
    const std::uint64_t sm = (k < 0 ? 0x80u : 0u) | static_cast<std::uint64_t>(std::abs(k));
    CHECK(int8_byte_from_code(sm) == static_cast<std::uint8_t>(static_cast<std::int8_t>(k)));
    if (k != 0) CHECK(int8_code_from_byte(static_cast<std::uint8_t>(static_cast<std::int8_t>(k))) == sm);
  }
}

TEST_CASE("block formats: quantize --check sweeps at a stride pass for every format") {
  // The full sweeps (stride 1) run in `fpcert quantize --to F --check` (ctest label exhaustive).
  BlockCheckOptions o;
  o.stride = 4099;
  o.other_stride = 7;
  o.scale_stride = 37;
  for (const BlockFormat* f : all_block_formats()) {
    CAPTURE(f->tag);
    const BlockCheckResult r = check_block_format(*f, o);
    for (const auto& p : r.parts) {
      CAPTURE(p.name);
      for (const auto& l : p.listed) MESSAGE(l);
      CHECK(p.checked > 1000);
      CHECK(p.mismatches == 0);
    }
  }
}
