// tests/suites/eltwise_mutation_gpu_test.cpp — the elementwise fault injectors around CUDA kernels (docs/mutation.md,
// "Elementwise"): the faults made on device buffers (inputs copied and changed on the device, results edited after the
// call, writes past the end and into x), with the verdicts derived from the fault and the function as for glibc's
// sqrtf on the host (tests/suites/eltwise_faults_test.cpp): CUDA's sqrtf (-prec-sqrt=true) and __fsqrt_rn are correctly
// rounded, so every fault that changes a square root is refused for its own fault, and elt_ftz (no square root is
// subnormal) is not applicable. Without a device: skipped.
#include <doctest/doctest.h>

#include <cstdio>

#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("elementwise faults around CUDA's correctly rounded square roots: 11 of 11 killed for their own fault, elt_ftz not applicable") {
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s);
  for (const char* k : {"cuda_sqrtf", "cuda___fsqrt_rn"}) {
    CAPTURE(k);
    const MutationScore m = run_mutation(*s, k, MutationOptions{});
    CHECK(m.invalid_cases.empty());
    int killed = 0;
    for (const MutantResult& x : m.mutants) {
      CAPTURE(x.fault);
      CAPTURE(x.detail);
      std::printf("%s %s: %s (%s) %.3f s\n", k, x.fault.c_str(), std::string(to_string(x.outcome)).c_str(), x.case_id.c_str(), x.seconds);
      if (x.fault == "elt_ftz") {
        CHECK(x.outcome == MutantOutcome::NotApplicable);
      } else {
        CHECK(x.outcome == MutantOutcome::Killed);
        killed += x.outcome == MutantOutcome::Killed;
      }
    }
    CHECK(killed == 11);
    CHECK(m.score() == 1.0);
    std::printf("%s: score %.1f %% in %.2f s\n", k, 100 * m.score(), m.seconds);
  }
}
