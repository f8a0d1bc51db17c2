// tests/kernels/block/block_quant_arith_test.cpp — the CUDA quantizer's arithmetic (kernels/block/block_quant_arith.cuh,
// compiled here as host C++) against the quantizer model (oracle/block/block_format.hpp, itself checked against
// MPFR by tests/oracle/block_format_test.cpp): scale codes of every rule on fp32 maxima across the whole
// range, elements on strided fp32 patterns of both signs under scales across E8M0's range, NVFP4's
// quotients under every UE4M3 scale.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "kernels/block/block_quant_arith.cuh"
#include "oracle/block/block_format.hpp"

using namespace fpcert;

namespace {

/// Positive finite fp32 patterns: every stride-th, plus every power of two and its neighbours.
std::vector<std::uint32_t> patterns(std::uint32_t stride) {
  std::vector<std::uint32_t> v;
  for (std::uint64_t b = 1; b < 0x7F800000u; b += stride) v.push_back(static_cast<std::uint32_t>(b));
  for (std::uint32_t e = 0; e < 255; ++e)
    for (std::int64_t d : {-2, -1, 0, 1, 2}) {
      const std::int64_t b = (static_cast<std::int64_t>(e) << 23) + d;
      if (b > 0 && b < 0x7F800000) v.push_back(static_cast<std::uint32_t>(b));
    }
  return v;
}

}  // namespace

TEST_CASE("CUDA quantizer arithmetic: E8M0 scale codes equal the model's, every format and rule") {
  const std::vector<std::uint32_t> amaxes = patterns(9973);
  for (const BlockFormat* f : all_block_formats()) {
    if (!f->pow2_scales()) continue;
    const blockq::Elem e = blockq::elem_of(*f);
    for (ScaleRule r : kAllScaleRules) {
      CAPTURE(f->tag);
      CAPTURE(to_string(r));
      std::int64_t bad = 0;
      for (std::uint32_t b : amaxes) {
        const double amax = std::bit_cast<float>(b);
        bad += blockq::e8m0_code(e, blockq::rule_of(r), b, false) != block_scale_code(*f, r, amax, false);
      }
      CHECK(bad == 0);
      CHECK(blockq::e8m0_code(e, blockq::rule_of(r), 0, false) == block_scale_code(*f, r, 0.0, false));
      CHECK(blockq::e8m0_code(e, blockq::rule_of(r), 0x3F800000u, true) == 0xFFu);
    }
  }
}

TEST_CASE("CUDA quantizer arithmetic: elements under power-of-two scales equal the model's") {
  const std::vector<std::uint32_t> xs = patterns(16411);
  for (const BlockFormat* f : all_block_formats()) {
    if (!f->pow2_scales()) continue;
    const blockq::Elem e = blockq::elem_of(*f);
    for (int k : {-127, -126, -120, -60, -20, -9, -3, -1, 0, 1, 4, 20, 60, 120, 127}) {
      CAPTURE(f->tag);
      CAPTURE(k);
      std::int64_t bad = 0, sat_bad = 0, inexact = 0;
      for (std::uint32_t b : xs)
        for (std::uint32_t sign : {0u, 0x80000000u}) {
          const double x = std::bit_cast<float>(b | sign);
          bool sat = false;
          const std::uint32_t got = blockq::quantize_pow2(e, b | sign, k, &sat);
          const ElementCode want = quantize_element(*f, x, static_cast<std::uint8_t>(k + 127), 1.0, Rounding::NearestEven);
          bad += got != want.code;
          sat_bad += sat != ((want.flags & kElemSaturated) != 0);
          inexact += (want.flags & kElemInexact) != 0;
        }
      CHECK(bad == 0);
      CHECK(sat_bad == 0);
      CHECK(inexact > 0);
    }
  }
}

TEST_CASE("CUDA quantizer arithmetic: NVFP4 scales and elements (exact quotients) equal the model's") {
  const blockq::Elem e2 = blockq::elem_of(e2m1), s4 = blockq::elem_of(e4m3);
  const double t3 = to_double(f32, round_double(f32, 0.3, Rounder::nearest(f32)).code);
  const std::vector<std::uint32_t> xs = patterns(65537);
  for (double ts : {1.0, t3, std::ldexp(1.0, -100), std::ldexp(1.5, 60)}) {
    CAPTURE(ts);
    for (ScaleRule r : {ScaleRule::Floor, ScaleRule::Even, ScaleRule::RCeil}) {
      std::int64_t bad = 0;
      for (std::uint32_t b : xs) {
        const double amax = std::bit_cast<float>(b);
        bad += blockq::nvfp4_scale_code(s4, blockq::nvfp4_scale_mode(r), b, false, 6 * ts) != block_scale_code(nvfp4, r, amax, false, ts);
      }
      CHECK(bad == 0);
    }
    std::int64_t bad = 0, inexact = 0;
    for (std::uint32_t s = 0x01; s < 0x7F; s += 3)
      for (std::uint32_t b : xs)
        for (std::uint32_t sign : {0u, 0x80000000u}) {
          const double x = std::bit_cast<float>(b | sign);
          bool sat = false;
          const double d = static_cast<double>(blockq::e4m3_value(s)) * ts;
          const std::uint32_t got = blockq::round_quotient(e2, x, d, blockq::Mode::NearestEven, &sat);
          const ElementCode want = quantize_element(nvfp4, x, static_cast<std::uint8_t>(s), ts, Rounding::NearestEven);
          bad += got != want.code;
          inexact += (want.flags & kElemInexact) != 0;
        }
    CHECK(bad == 0);
    CHECK(inexact > 0);
    // Signed zeros keep their sign (a zero block's -0 entries: e2m1 0x8, as the oracle's quantizer says).
    for (double z : {0.0, -0.0}) {
      bool sat = false;
      const double d = static_cast<double>(blockq::e4m3_value(0x01)) * ts;
      CHECK(blockq::round_quotient(e2, z, d, blockq::Mode::NearestEven, &sat) == quantize_element(nvfp4, z, 0x01, ts, Rounding::NearestEven).code);
    }
  }
  // Every UE4M3 code decodes as the oracle's e4m3 (sign ignored; 0x7F NaN).
  for (std::uint32_t c = 0; c < 256; ++c) {
    const double want = scale_value(nvfp4, static_cast<std::uint8_t>(c));
    const double got = blockq::e4m3_value(c);
    if (std::isnan(want)) CHECK(std::isnan(got));
    else CHECK(got == want);
  }
}
