// tests/suites/eltwise_near_zero_test.cpp — expm1 and log1p subjects through the elementwise check (issue 42): glibc's
// expm1f and log1pf keep 1 ulp on the CI suite (every f16/bf16 input, the f32 sample and thresholds), and the check refuses
// the textbook cancellation: expf(x) - 1 and logf(1 + x) in float, claimed at 1 ulp, fail near 0 (for |x| < 2^-25,
// logf(1 + x) is logf(1) = 0 while log1p(x) ~ x: the largest distance is huge).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("glibc expm1f and log1pf keep 1 ulp on every f16 and bf16 input and the f32 sample and thresholds") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"glibc_expm1f", "glibc_expm1f_f16", "glibc_expm1f_bf16", "glibc_log1pf", "glibc_log1pf_f16", "glibc_log1pf_bf16"}, opt);
  CHECK(r.cases.size() == 8);
  for (const auto& c : r.cases) {
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.elementwise);
    CHECK(c.elementwise->max_ulps <= 1);
  }
}

TEST_CASE("expf(x) - 1 and logf(1 + x) in float, claimed at 1 ulp, are refused near 0 (cancellation)") {
  for (math::Fn f : math::kNearZeroFns) {
    EltwiseTraits t;
    t.fn = f;
    t.claim = {math::ClaimKind::Ulp, 1};
    EltwiseTally tally;
    // every 257th code of [-1/4, 1/4]: both signs, every binade down to the subnormals
    for (std::uint32_t c = 0; c <= 0x3e800000u; c += 257)
      for (std::uint32_t sign : {0u, 0x80000000u}) {
        const float x = std::bit_cast<float>(c | sign);
        const float y = f == math::Fn::Expm1 ? std::exp(x) - 1.0f : std::log(1.0f + x);
        eltwise_check_one(t, c | sign, std::bit_cast<std::uint32_t>(y), tally);
      }
    INFO(math::to_string(f));
    CHECK(tally.inputs > 3000000);
    CHECK(tally.above > tally.inputs / 2);  // below 2^-24 or so the naive results are 0 (or +-2^-24-ish): all beyond 1 ulp
    REQUIRE(tally.has_worst);
    CHECK(tally.worst.ulps > (1u << 20));
  }
}
