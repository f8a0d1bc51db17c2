// tests/suites/norm_gpu_test.cpp — the CUDA LayerNorm / RMSNorm built-ins (kernels/norm/cuda/norm_cuda.cu) against the
// host reference through the runner: every kernel passes every case of the norm suite with a non-vacuous bound, and its
// mutants (the faults in the kernel's own device code) reach a score of 100 %: the two-pass and the Welford LayerNorms
// (welford_combined: Welford per lane, a butterfly of Chan's combinations) and the RMSNorms, in f32, f16 and bf16.
// Without a device: skipped (exit 77).
#include <doctest/doctest.h>

#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("norm CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_builtins(Operation::Norm);
  REQUIRE(ks.size() >= 9);  // layernorm warp (two-pass) and welford (Welford per lane, butterfly), rmsnorm; f32, f16, bf16
  check_builtins_pass(Operation::Norm, "norm", ks);
}

TEST_CASE("norm CUDA built-ins: mutation score 100 %") { check_builtins_mutation("norm", cuda_builtins(Operation::Norm)); }

}  // namespace fpcert
