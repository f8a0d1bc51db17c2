// tests/oracle/convert_check_test.cpp — the sampled check (MPFR on disagreements and a sample, what
// the GPU sweep uses) counts exactly what the per-pattern check (MPFR on every pattern) counts.
//
// check_conversion_chunk has two paths: per pattern (mpfr_every, the CPU command) and per block
// (vectorised model, a compare pass, outcome classes keyed from the model's code and flags). Both
// are run here on the same subjects, including wrong ones, and must agree on every count and on
// the listed mismatches.
#include <doctest/doctest.h>

#include <vector>

#include "base/philox.hpp"
#include "oracle/convert/convert_check.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// The model's own codes for [first, first + n), then a few deliberate errors: a flipped low bit,
/// a flipped sign, and (where the destination has NaN payloads) a NaN with other bits.
std::vector<std::uint32_t> subject_with_errors(const Format& src, const Format& dst, const Rounder& r,
                                               std::uint64_t first, std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> s(n);
  for (std::uint64_t i = 0; i < n; ++i) s[i] = static_cast<std::uint32_t>(convert(src, first + i, dst, r).code);
  const std::uint64_t a = random_bits32(seed, 1) % n, b = random_bits32(seed, 2) % n;
  s[a] ^= 1u;
  s[b] ^= static_cast<std::uint32_t>(dst.sign_mask());
  for (std::uint64_t i = 0; i < n; ++i)  // the first NaN result: another payload (IEEE) or sign (fn)
    if (classify(dst, s[i]) == FpClass::NaN && dst.has_inf() && dst.frac_bits >= 2) {
      s[i] ^= 1u;
      break;
    }
  return s;
}

void require_same(const ConvertCheckResult& a, const ConvertCheckResult& b) {
  CHECK(a.patterns == b.patterns);
  for (int o = 0; o < kOutcomeCount; ++o) {
    CAPTURE(to_string(static_cast<Outcome>(o)));
    CHECK(a.outcomes[o] == b.outcomes[o]);
  }
  CHECK(a.mismatches == b.mismatches);
  CHECK(a.model_mismatches == b.model_mismatches);
  CHECK(a.nan_differences == b.nan_differences);
  REQUIRE(a.listed.size() == b.listed.size());
  for (std::size_t i = 0; i < a.listed.size(); ++i) {
    CHECK(a.listed[i].src == b.listed[i].src);
    CHECK(a.listed[i].expected == b.listed[i].expected);
    CHECK(a.listed[i].got == b.listed[i].got);
    CHECK(a.listed[i].outcome == b.listed[i].outcome);
  }
}

void compare_paths(const Format& src, const Format& dst, const Rounder& r, std::uint64_t first, std::uint64_t n,
                   bool strict_nan) {
  CAPTURE(src.tag);
  CAPTURE(dst.tag);
  CAPTURE(to_string(r.rounding));
  CAPTURE(to_string(r.saturation));
  CAPTURE(strict_nan);
  const auto subject = subject_with_errors(src, dst, r, first, n, test::seed());
  ConvertCheckSpec spec;
  spec.src = &src;
  spec.dst = &dst;
  spec.rounder = r;
  spec.strict_nan = strict_nan;
  spec.nan_counted_apart = r.nan == NanPayload::Preserve;  // a legacy preserve: strict_nan decides its leniency
  spec.max_listed = 50;
  const SubjectChunk chunk{subject.data(), 4, false};
  ConvertCheckResult every, sampled, all_sampled;
  spec.mpfr_every = true;
  check_conversion_chunk(spec, first, n, chunk, every);
  spec.mpfr_every = false;
  spec.mpfr_sample = 7;
  check_conversion_chunk(spec, first, n, chunk, sampled);
  spec.mpfr_sample = 1;  // every code in the sample: MPFR everywhere, as mpfr_every
  check_conversion_chunk(spec, first, n, chunk, all_sampled);
  REQUIRE(every.mismatches + every.nan_differences >= 1);  // the injected errors are seen at all
  require_same(every, sampled);
  require_same(every, all_sampled);
  CHECK(all_sampled.mpfr_checked == every.mpfr_checked);
  CHECK(sampled.mpfr_checked < every.mpfr_checked);
}

}  // namespace

TEST_CASE("sampled check == per-pattern check: every narrow source, every destination, rn and rz") {
  for (const Format* src : {&f16, &bf16, &e4m3, &e5m2, &e2m3, &e3m2, &e2m1, &ue8m0})
    for (const Format* dst : all_formats()) {
      if (dst->total_bits() > 32) continue;
      for (const Rounding rd : {Rounding::NearestEven, Rounding::TowardZero})
        for (const Saturation sat : kAllSaturations) {
          if (!saturation_valid(*dst, sat)) continue;
          for (const NanPayload np : {NanPayload::Preserve, NanPayload::Any, NanPayload::Nvidia})  // lenient, any NaN, one code
            if (nan_payload_problem(*dst, np).empty()) compare_paths(*src, *dst, Rounder{rd, sat, np}, 0, src->code_count(), false);
        }
    }
}

TEST_CASE("sampled check == per-pattern check: fp32 ranges around specials, subnormals and ties, strict NaN too") {
  const std::uint64_t ranges[][2] = {
      {0x7F7F0000, 0x20000},  // the top binade, +Inf, the first NaNs
      {0xFF7F0000, 0x20000},  // the same, negative
      {0x00000000, 0x10000},  // +0 and the smallest subnormals
      {0x33000000, 0x10000},  // around fp16's smallest subnormal and half of it
      {0x3F800000, 0x10000},  // [1, 1 + 2^-7): ties of every narrow format
      {0x477FE000, 0x4000},   // fp16's overflow threshold 65520
  };
  for (const auto& rg : ranges)
    for (const Format* dst : {&f16, &bf16, &tf32, &e4m3, &e5m2, &e2m1, &ue8m0})
      for (const bool strict : {false, true})
        compare_paths(f32, *dst, Rounder::nearest(*dst), rg[0], rg[1], strict);
}

TEST_CASE("sampled check on containers: tf32 results in fp32 bits") {
  const std::uint64_t first = 0x3F800000, n = 1 << 16;
  std::vector<std::uint32_t> bits(n);
  const Rounder r{Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve};
  for (std::uint64_t i = 0; i < n; ++i) bits[i] = static_cast<std::uint32_t>(to_container(tf32, convert(f32, first + i, tf32, r).code));
  bits[123] ^= 1u << 13;  // the lowest tf32 bit of one result
  ConvertCheckSpec spec;
  spec.src = &f32;
  spec.dst = &tf32;
  spec.rounder = r;
  spec.mpfr_every = false;
  spec.mpfr_sample = 0;
  ConvertCheckResult res;
  check_conversion_chunk(spec, first, n, SubjectChunk{bits.data(), 4, true}, res);
  CHECK(res.mismatches == 1);
  REQUIRE(res.listed.size() == 1);
  CHECK(res.listed[0].src == first + 123);
  CHECK(res.listed[0].got == ((bits[123] >> 13) & tf32.code_mask()));
  CHECK(res.mpfr_checked == 1);
}

TEST_CASE("sampled check == per-pattern check: ranges that cross the sign bit with the same class at both ends") {
  // e2m1 codes 0x5..0xC run +3, +4, +6, -0, -0.5, -1, -1.5, -2: normal at both ends, zero and a
  // subnormal in between; the per-block source-class shortcut must not take this block as all-normal.
  compare_paths(e2m1, f16, Rounder::nearest(f16), 0x5, 8, false);
  compare_paths(e2m3, bf16, Rounder::nearest(bf16), 0x1A, 16, false);
  // fp16 codes from the largest normals across +Inf, the NaNs and -0 into the negative subnormals.
  compare_paths(f16, e4m3, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve}, 0x7B00, 0x1200, false);
}
