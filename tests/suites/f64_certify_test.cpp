// tests/suites/f64_certify_test.cpp — the FP64 models graded through the runner (docs/fp64.md): the honest ones pass by
// their declared tier (bitwise where the order is declared, the envelope where not), the weakened emulation (inputs
// truncated to 40 bits, declared as fp64) is refused, and fp64 outputs carry the correct-bits metric.
#include <doctest/doctest.h>

#include <string>

#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

TEST_CASE("fp64 models: certified by their declared tier; the weakened emulation (40-bit inputs) refused") {
  auto host = make_host_api();
  // Uniform [-1, 1) with 53 random bits: every product and sum rounds in fp64 (the test can fail).
  const Problem p = test::uniform_problem(24, 20, 300, f64, test::seed() + 64);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : {"model_gemm_f64", "model_gemm_f64_pairwise", "model_gemm_f64_blocked32", "model_gemm_f64_noorder"}) {
    CAPTURE(name);
    auto k = make_gemm_kernel(name);
    REQUIRE(k);
    const CaseResult r = test::run_graded(*k, p, ref, *host);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    CHECK(r.metrics.max_abs > 0);  // fp64 roundings happened
    CHECK(r.tier == (std::string(name) == "model_gemm_f64_noorder" ? Tier::EnvelopeStatistical : Tier::Bitwise));
    // Correct bits: measured for fp64 outputs, 53 bits where the result is the correctly rounded one; K = 300 sums of
    // 53-bit products round, so some element is off by an ulp or more (a weaker test would not fail on a mutant).
    CHECK(r.metrics.correct_bits_hist.size() == 54);
    CHECK(r.metrics.correct_bits_min >= 0);
    CHECK(r.metrics.correct_bits_min < 53);
  }
  auto weak = make_gemm_kernel("model_gemm_f64_emu_trunc40");
  REQUIRE(weak);
  const CaseResult w = test::run_graded(*weak, p, ref, *host);
  INFO(w.reason);
  // 40-bit inputs: relative errors up to 2^-39 per operand, far beyond gamma_300(2^-53) ~ 2^-44.8 of |A||B|.
  CHECK(w.status == CaseStatus::Fail);
  // Its correct bits: at most 53 - 13 = 40 where a truncation reaches the result (2^-40 relative is 2^13 ulps).
  CHECK(w.metrics.correct_bits_min <= 40);
}
