// tests/suites/eltwise_mutation_gpu_test.cpp — the elementwise fault injectors around CUDA kernels (docs/mutation.md,
// "Elementwise"): the faults made on device buffers (inputs copied and changed on the device, results edited after the
// call, writes past the end and into x), with the verdicts derived from the fault and the function as for glibc's
// sqrtf on the host (tests/suites/eltwise_faults_test.cpp): CUDA's sqrtf (-prec-sqrt=true) and __fsqrt_rn are correctly
// rounded, so every fault that changes a square root is refused for its own fault, and elt_ftz (no square root is
// subnormal) is not applicable. Without a device: skipped.
#include <doctest/doctest.h>

#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/sqrt_mutation.hpp"

using namespace fpcert;

TEST_CASE("elementwise faults around CUDA's correctly rounded square roots: 11 of 11 killed for their own fault, elt_ftz not applicable") {
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s);
  for (const char* k : {"cuda_sqrtf", "cuda___fsqrt_rn"}) test::check_sqrt_mutation(k, run_mutation(*s, k, MutationOptions{}));
}
