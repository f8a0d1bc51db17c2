// tests/suites/eltwise_mpfr_only_test.cpp — cbrt, erf, erfc subjects through the elementwise check (issue 42): erf's and
// erfc's reference has no fast path (MPFR decides every input on the host); cbrt's decides nearest-even exactly. glibc's cbrtf, erff, erfcf keep their claims on the CI
// suite; the check refuses erfc computed as 1 - erff(x) (cancellation) at CUDA's 4 ulp, and accepts it under the absolute
// bound its derivation gives, which exercises the MPFR value that absolute claims read.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "suites/ops/elementwise/eltwise_check.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("glibc cbrtf, erff, erfcf keep their claims on every f16 and bf16 input and the f32 sample and thresholds") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"glibc_cbrtf", "glibc_cbrtf_f16", "glibc_cbrtf_bf16", "glibc_erff", "glibc_erff_f16", "glibc_erff_bf16",
                                     "glibc_erfcf", "glibc_erfcf_f16", "glibc_erfcf_bf16"}, opt);
  CHECK(r.cases.size() == 12);
  for (const auto& c : r.cases) {
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.elementwise);
    CHECK(c.elementwise->inputs > 1000);
    // erf, erfc: no fast path, MPFR decided the (non-special) inputs; cbrt: its exact reference (cbrt_ref_rn) decided all
    if (c.kernel.find("cbrt") != std::string::npos) CHECK(c.elementwise->mpfr_decided == 0);
    else CHECK(c.elementwise->mpfr_decided > 0);
  }
}

TEST_CASE("erfc as 1 - erff(x): refused at 4 ulp (cancellation), accepted under its derived absolute bound on [0, 4]") {
  // every 4099th code of [0, 4]: erf(x) in [0, 1), erfc(x) from 1 down to 1.5e-8
  auto tally_of = [](math::Claim claim) {
    EltwiseTraits t;
    t.fn = math::Fn::Erfc;
    t.claim = claim;
    EltwiseTally tally;
    for (std::uint32_t c = 0; c <= 0x40800000u; c += 4099) {
      const float x = std::bit_cast<float>(c);
      eltwise_check_one(t, c, std::bit_cast<std::uint32_t>(1.0f - std::erf(x)), tally);
    }
    return tally;
  };
  const EltwiseTally ulp = tally_of({math::ClaimKind::Ulp, 4});
  CHECK(ulp.inputs > 250000);
  CHECK(ulp.above > 1000);  // for x above ~1, erfc(x) < 0.16 keeps erff's absolute error of ~2^-24: many ulps of erfc
  REQUIRE(ulp.has_worst);
  CHECK(ulp.worst.ulps > (1u << 10));
  // The absolute error of 1.0f - erff(x) for x in [0, 4]: erff is within 1 ulp of the correctly rounded erf (the previous test
  // case), so within 1.5 ulp <= 1.5 2^-24 of erf(x) (erf < 1: its ulp is at most 2^-24); the subtraction is exact when
  // 1 - y <= 1/2 (Sterbenz), otherwise y <= 1/2 and it rounds by at most 2^-25: total <= 1.5 2^-24 + 2^-25 = 2^-23.
  math::Claim abs{math::ClaimKind::Absolute};
  abs.bound = 0x1p-23;
  abs.lo = 0;
  abs.hi = 4;
  const EltwiseTally a = tally_of(abs);
  CHECK(a.inputs > 250000);
  CHECK(a.above == 0);
  CHECK(a.undecided == 0);
  // ... and a quarter of it is too tight: the judgement on MPFR's value can fail.
  abs.bound = 0x1p-25;
  CHECK(tally_of(abs).above > 0);
}

TEST_CASE("glibc sinf, cosf, tanf keep 1 ulp on every f16 and bf16 input and the f32 sample (huge arguments included)") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"glibc_sinf", "glibc_sinf_f16", "glibc_sinf_bf16", "glibc_cosf", "glibc_cosf_f16", "glibc_cosf_bf16",
                                     "glibc_tanf", "glibc_tanf_f16", "glibc_tanf_bf16"}, opt);
  CHECK(r.cases.size() == 12);
  for (const auto& c : r.cases) {
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.elementwise);
    CHECK(c.elementwise->max_ulps <= 1);
    CHECK(c.elementwise->inputs > 1000);
  }
}
