// tests/kernels/attention/attention_bwd_gpu_test.cpp — the CUDA attention backward built-ins
// (kernels/attention/cuda/attention_bwd_cuda.cu): every kernel passes every case of the `attention_backward` suite
// against the exact gradients with evidence, and its mutants (the faults of AttentionBwdBug in the kernel's own device
// code) reach a score of 100 %. Without a device: skipped (exit 77). The device code's indexing and arithmetic are also
// checked without a device, on the host emulation (attention_bwd_cuda_emulation_test.cpp).
#include <doctest/doctest.h>

#include <string>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("attention backward CUDA built-ins: every case passes against the exact gradients, with evidence") {
  const auto ks = cuda_builtins(Operation::AttentionBackward);
  REQUIRE(ks.size() >= 5);
  // The flash kernels declare head dims 64 and 128 (AttentionBwdTraits::head_dims): the suite's head-dim-256 cases are
  // "not supported" for them, by can_implement's head-dim rule, and for nothing else.
  check_builtins_pass(Operation::AttentionBackward, "attention_backward", ks, [](const std::string& k, const CaseResult& c) {
    const auto t = make_attention_bwd_kernel(k);
    return t && !t->attention_bwd_traits().head_dims.empty() && c.reason.find("head_dim") != std::string::npos;
  });
}

TEST_CASE("attention backward CUDA built-ins: mutation score 100 %") {
  check_builtins_mutation("attention_backward", cuda_builtins(Operation::AttentionBackward));
}

}  // namespace fpcert
