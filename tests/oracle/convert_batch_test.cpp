// tests/oracle/convert_batch_test.cpp — the vectorised batch path equals the scalar path (and so MPFR).
#include <doctest/doctest.h>

#include <vector>

#include "base/philox.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {
void compare(const Format& src, const Format& dst, const Rounder& r, const std::vector<std::uint32_t>& codes) {
  const std::uint64_t seed = test::seed();
  std::vector<std::uint32_t> out(codes.size());
  std::vector<std::uint8_t> flags(codes.size());
  convert_codes(src, dst, r, seed, codes.data(), out.data(), flags.data(), codes.size());
  std::vector<std::uint32_t> out2(codes.size());
  convert_codes(src, dst, r, seed, codes.data(), out2.data(), nullptr, codes.size());  // the flag-free loop
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const std::uint32_t rb = r.rounding == Rounding::Stochastic ? random_bits32(seed, codes[i]) : 0;
    const Rounded ref = convert(src, codes[i], dst, r, rb);
    REQUIRE_MESSAGE(out[i] == ref.code, src.tag << " " << hex_code(src, codes[i]) << " -> " << dst.tag << " "
                                                << to_string(r.rounding) << "/" << to_string(r.saturation) << "/"
                                                << to_string(r.nan) << ": batch " << out[i] << " scalar " << ref.code);
    REQUIRE(flags[i] == ref.flags);
    REQUIRE(out2[i] == ref.code);
  }
}
}  // namespace

TEST_CASE("batch == scalar: every 16-bit and narrower source, every destination, mode, saturation, NaN policy") {
  for (const Format* src : all_formats()) {
    if (src->total_bits() > 16) continue;
    std::vector<std::uint32_t> codes(src->code_count());
    for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
    for (const Format* dst : all_formats()) {
      if (dst->total_bits() > 32) continue;
      for (Rounding rd : kAllRoundings)
        for (Saturation sat : kAllSaturations) {
          if (!saturation_valid(*dst, sat)) continue;
          // Every NaN convention the destination can have; the newer ones under rn only (a NaN input's result
          // never depends on the rounding direction: round_special and the model's NaN select come before it).
          for (NanPayload np : kAllNanPayloads)
            if (nan_payload_problem(*dst, np).empty() && (np <= NanPayload::Canonical || rd == Rounding::NearestEven))
              compare(*src, *dst, {rd, sat, np}, codes);
        }
    }
  }
}

TEST_CASE("batch == scalar: fp32 sample (random codes, all specials, every binade edge) and ranges") {
  std::vector<std::uint32_t> codes;
  const std::uint64_t key = test::seed() + 17;
  for (std::uint32_t i = 0; i < 50000; ++i) codes.push_back(random_bits32(key, i));
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 2u, 0x1000u, 0xFFFu, 0x1001u, 0x8000u, 0x7FFFu, 0x8001u, 0x400000u, 0x7FFFFFu, 0x7FFFFEu})
      for (std::uint32_t sgn : {0u, 0x80000000u}) codes.push_back(sgn | (e << 23) | m);
  for (const Format* dst : all_formats()) {
    if (dst->total_bits() > 32) continue;
    for (Rounding rd : kAllRoundings)
      for (Saturation sat : kAllSaturations) {
        if (!saturation_valid(*dst, sat)) continue;
        for (NanPayload np : kAllNanPayloads)  // the newer conventions under rn only, as above
          if (nan_payload_problem(*dst, np).empty() && (np <= NanPayload::Canonical || rd == Rounding::NearestEven))
            compare(f32, *dst, {rd, sat, np}, codes);
      }
  }
  // The range form (what exhaustive sweeps use) on a window crossing the fp16 overflow threshold.
  std::vector<std::uint32_t> out(1 << 16), ref_codes(1 << 16);
  const std::uint64_t first = 0x477F0000;
  convert_code_range(f32, f16, Rounder::nearest(f16), 0, first, out.data(), nullptr, out.size());
  for (std::uint32_t i = 0; i < out.size(); ++i)
    REQUIRE(out[i] == convert(f32, first + i, f16, Rounder::nearest(f16)).code);
}
