// tests/suites/softmax_gpu_test.cpp — the CUDA softmax built-ins (kernels/softmax/cuda/softmax_cuda.cu) against the host
// reference through the runner: every kernel passes every case of the softmax suite with a non-vacuous bound, and its
// mutants (the faults in the kernel's own device code) reach a score of 100 %. Without a device: skipped (exit 77).
#include <doctest/doctest.h>

#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("softmax CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_builtins(Operation::Softmax);
  REQUIRE(ks.size() >= 6);
  check_builtins_pass(Operation::Softmax, "softmax", ks);
}

TEST_CASE("softmax CUDA built-ins: mutation score 100 %") { check_builtins_mutation("softmax", cuda_builtins(Operation::Softmax)); }

}  // namespace fpcert
