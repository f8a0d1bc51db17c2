// tests/suites/eltwise_roots_test.cpp — sqrt and rsqrt subjects through the elementwise check (issue 42): glibc's sqrtf
// on every f16 and bf16 input and the f32 sample (correctly rounded: passes), and the check refusing a subject that is
// not: the classic "fast inverse square root" (bit trick 0x5f3759df and one Newton step, relative error <= 0.00175 <
// 2^-9) held to 2 ulp is refused with counterexamples whose reference MPFR confirms, and passes a relative 2^-8 claim.
#include <doctest/doctest.h>

#include <mpfr.h>

#include <bit>
#include <cmath>

#include "oracle/mpfr_ref.hpp"
#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

float fast_rsqrt(float x) {  // Quake III's: y0 from the bit pattern, one Newton step
  const float y = std::bit_cast<float>(0x5f3759dfu - (std::bit_cast<std::uint32_t>(x) >> 1));
  return y * (1.5f - 0.5f * x * y * y);
}

EltwiseTraits rsqrt_traits(math::Claim c) {
  EltwiseTraits t;
  t.fn = math::Fn::Rsqrt;
  t.claim = c;
  return t;
}

}  // namespace

TEST_CASE("glibc sqrtf: correctly rounded on every f16 and bf16 input (double rounding innocuous) and the f32 sample") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"glibc_sqrtf", "glibc_sqrtf_f16", "glibc_sqrtf_bf16"}, opt);
  CHECK(r.cases.size() == 4);  // special and sample for f32, all_f16, all_bf16
  for (const auto& c : r.cases) {
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.elementwise);
    CHECK(c.elementwise->max_ulps == 0);
    CHECK(c.elementwise->mpfr_decided == 0);  // sqrt is decided exactly, never by MPFR
    CHECK(c.elementwise->inputs >= 12000);
  }
}

TEST_CASE("a fast inverse square root (2^-9 relative) is refused at 2 ulp, with MPFR-confirmed counterexamples; passes 2^-8 relative") {
  EltwiseTally two, rel;
  const EltwiseTraits t2 = rsqrt_traits({math::ClaimKind::Ulp, 2});
  const EltwiseTraits tr = rsqrt_traits({math::ClaimKind::Relative, 0, 0, 0x1p-8, 0x1p-126, 0x1p127});
  // Every 4099th positive normal pattern (about 520,000 inputs over all binades)
  for (std::uint32_t c = 0x00800000u; c < 0x7f000000u; c += 4099) {
    const std::uint32_t got = std::bit_cast<std::uint32_t>(fast_rsqrt(std::bit_cast<float>(c)));
    eltwise_check_one(t2, c, got, two);
    eltwise_check_one(tr, c, got, rel);
  }
  CHECK(two.inputs > 500000);
  CHECK(two.above > two.inputs / 2);  // 2^-9 relative is ~2^14 ulp at most: most inputs are far beyond 2 ulp
  REQUIRE(two.has_worst);
  CHECK(two.worst.ulps > 1000);
  CHECK(two.worst.ulps < (1u << 15));  // 0.00175 * 2^23 < 14700 ulp
  REQUIRE_FALSE(two.listed.empty());
  for (const auto& it : two.listed) {  // the reference is 1/sqrt(x) correctly rounded: MPFR's mpfr_rec_sqrt into f32
    mpfr_ref::Mpfr in(24), y(24);
    mpfr_set_flt(in, std::bit_cast<float>(it.x), MPFR_RNDN);
    mpfr_rec_sqrt(y, in, MPFR_RNDN);
    CHECK(std::bit_cast<std::uint32_t>(mpfr_get_flt(y, MPFR_RNDN)) == it.ref);
  }
  CHECK(rel.above == 0);
  CHECK(rel.undecided == 0);
  CHECK(rel.histogram[0] < rel.inputs);  // the errors are there, within the relative claim
}
