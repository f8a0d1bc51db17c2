// tests/suites/softmax_bwd_gpu_test.cpp — the CUDA softmax backward built-ins (kernels/softmax/cuda/softmax_bwd_cuda.cu)
// against the host reference through the runner: every kernel passes every case of the softmax_backward suite with a
// non-vacuous bound, and its mutants (the faults in the kernel's own device code) reach a score of 100 %. Without a
// device: skipped (exit 77).
#include <doctest/doctest.h>

#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("softmax backward CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_builtins(Operation::SoftmaxBackward);
  REQUIRE(ks.size() == 5);
  check_builtins_pass(Operation::SoftmaxBackward, "softmax_backward", ks);
}

TEST_CASE("softmax backward CUDA built-ins: mutation score 100 %") {
  check_builtins_mutation("softmax_backward", cuda_builtins(Operation::SoftmaxBackward));
}

}  // namespace fpcert
