// tests/support/sqrt_mutation.hpp — what the elementwise faults do around a correctly rounded square root, on the host
// (glibc's sqrtf: tests/suites/eltwise_faults_test.cpp) or the device (CUDA's sqrtf and __fsqrt_rn:
// tests/suites/eltwise_mutation_gpu_test.cpp): every fault that can change a square root is killed for its own fault
// (11), and elt_ftz is not applicable (sqrt(x) >= 2^-74.5 for every positive x: no result is subnormal).
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "suites/mutation/mutation.hpp"

namespace fpcert::test {

inline void check_sqrt_mutation(const std::string& kernel, const MutationScore& m) {
  CAPTURE(kernel);
  CHECK(m.invalid_cases.empty());
  int killed = 0;
  for (const MutantResult& x : m.mutants) {
    CAPTURE(x.fault);
    CAPTURE(x.detail);
    std::printf("%s %s: %s (%s) %.3f s\n", kernel.c_str(), x.fault.c_str(), std::string(to_string(x.outcome)).c_str(),
                x.case_id.c_str(), x.seconds);
    if (x.fault == "elt_ftz") {
      CHECK(x.outcome == MutantOutcome::NotApplicable);
    } else {
      CHECK(x.outcome == MutantOutcome::Killed);
      killed += x.outcome == MutantOutcome::Killed;
    }
  }
  CHECK(killed == 11);
  CHECK(m.score() == 1.0);
  std::printf("%s: score %.1f %% in %.2f s\n", kernel.c_str(), 100 * m.score(), m.seconds);
}

}  // namespace fpcert::test
