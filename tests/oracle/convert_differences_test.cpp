// tests/oracle/convert_differences_test.cpp — the host half of the device check, without a device: a
// subject whose results are known only as outcome-key counts and a list of differences from the
// model (what the device check sends back) gives the same ConvertCheckResult as the sampled host
// check of its full results. The device half is emulated here pattern by pattern with the same
// model_convert() the kernel runs (tests/kernels/convert/convert_check_device_gpu_test.cpp compares the real one).
#include <doctest/doctest.h>

#include <array>
#include <vector>

#include "oracle/convert/convert_check.hpp"
#include "oracle/convert/convert_model.hpp"
#include "tests/support/same_result.hpp"
#include "base/philox.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// A wrong subject: the model's result with a bit flipped on a few random codes and on code n / 3, and the sign of every
/// NaN result flipped (NaN-vs-NaN differences), in 32-bit results.
std::vector<std::uint32_t> wrong_subject(const ConvertModel& m, const Format& dst, std::uint64_t first, std::uint64_t n) {
  std::vector<std::uint32_t> out(n);
  const std::uint64_t key = test::seed() + 5;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t r = model_convert(m, static_cast<std::uint32_t>(first + i)).code;
    if (random_bits32(key, i) % 997 == 0 || i == n / 3) r ^= 1u;  // and one fixed code: narrow sources too
    if (classify(dst, r) == FpClass::NaN && dst.is_signed()) r ^= static_cast<std::uint32_t>(dst.sign_mask());
    out[i] = r;
  }
  return out;
}

void same(const ConvertCheckResult& a, const ConvertCheckResult& b) {
  test::check_same_result(a, b);
  CHECK(a.mpfr_checked == b.mpfr_checked);
}

void compare(const Format& src, const Format& dst, const Rounder& r, std::uint64_t first, std::uint64_t n) {
  INFO(src.tag << " -> " << dst.tag << " " << to_string(r.rounding) << " from " << first);
  const ConvertModel m = make_convert_model(src, dst, r);
  const std::vector<std::uint32_t> subject = wrong_subject(m, dst, first, n);
  ConvertCheckSpec spec;
  spec.src = &src;
  spec.dst = &dst;
  spec.rounder = r;
  spec.mpfr_every = false;
  spec.mpfr_sample = 61;
  ConvertCheckResult host;
  check_conversion_chunk(spec, first, n, SubjectChunk{subject.data(), 4, false}, host);
  // The device half: key counts over every code, differences listed.
  std::array<std::uint64_t, kOutcomeKeys> keys{};
  std::vector<ModelDifference> differ;
  for (std::uint64_t i = 0; i < n; ++i) {
    const ModelResult mr = model_convert(m, static_cast<std::uint32_t>(first + i));
    ++keys[mr.key];
    if (subject[i] != mr.code) differ.push_back({first + i, subject[i]});
  }
  REQUIRE(!differ.empty());  // the subject is wrong somewhere: the lists being compared are not empty
  ConvertCheckResult dev, part;
  add_outcome_keys(src, dst, keys.data(), dev);
  // In two pieces, as the sweep splits a chunk between threads.
  const std::uint64_t half = n / 2;
  auto cut = differ.begin();
  while (cut != differ.end() && cut->src < first + half) ++cut;
  check_conversion_differences(spec, first, half, {differ.data(), static_cast<std::size_t>(cut - differ.begin())}, dev);
  check_conversion_differences(spec, first + half, n - half,
                               {differ.data() + (cut - differ.begin()), static_cast<std::size_t>(differ.end() - cut)}, part);
  dev.merge(part, spec.max_listed);
  CHECK(host.mismatches > 0);
  same(dev, host);
}

}  // namespace

TEST_CASE("counts + differences + MPFR on the host == the sampled host check: narrow sources, every code") {
  for (const Format* src : {&f16, &bf16, &e4m3, &e5m2, &e2m1, &ue8m0})
    for (const Format* dst : {&f16, &bf16, &e4m3, &e2m3, &ue8m0, &f32})
      compare(*src, *dst, Rounder::nearest(*dst), 0, src->code_count());
}

TEST_CASE("counts + differences + MPFR on the host == the sampled host check: fp32 around 1, the subnormals, NaNs") {
  for (const std::uint64_t first : {0x3F7F0000ull, 0x00000000ull, 0x7F7F8000ull, 0xFF800000ull - 0x8000})
    for (const Format* dst : {&f16, &bf16, &tf32, &e4m3, &e5m2, &ue8m0})
      for (const Rounding rd : {Rounding::NearestEven, Rounding::TowardZero, Rounding::Up})
        compare(f32, *dst, Rounder{rd, default_saturation(*dst), NanPayload::Preserve}, first, 1 << 16);
}

TEST_CASE("a listed difference that equals the model, or one outside the range, is a logic error") {
  const ConvertModel m = make_convert_model(f32, f16, Rounder::nearest(f16));
  ConvertCheckSpec spec;
  spec.src = &f32;
  spec.dst = &f16;
  spec.mpfr_every = false;
  ConvertCheckResult acc;
  const std::uint32_t code = 0x3F800001u;
  const std::vector<ModelDifference> same_as_model = {{code, model_convert(m, code).code}};
  CHECK_THROWS_AS(check_conversion_differences(spec, code, 1, same_as_model, acc), std::logic_error);
  const std::vector<ModelDifference> outside = {{code + 5, 0}};
  CHECK_THROWS_AS(check_conversion_differences(spec, code, 1, outside, acc), std::logic_error);
}
