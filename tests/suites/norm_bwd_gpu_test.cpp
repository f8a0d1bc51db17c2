// tests/suites/norm_bwd_gpu_test.cpp — the CUDA LayerNorm / RMSNorm backward built-ins (kernels/norm/cuda/norm_bwd_cuda.cu)
// against the host reference through the runner: every kernel passes every case of norm_backward with a non-vacuous
// bound, the atomic kernels' run-to-run spread of dgamma/dbeta is printed (graded run by run), and the mutants (the faults
// in the kernel's own device code) reach a score of 100 %. Without a device: skipped (exit 77).
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("norm backward CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_builtins(Operation::NormBackward);
  REQUIRE(ks.size() >= 5);  // layernorm_bwd_{f16,bf16}_cuda (atomics), *_det_cuda, rmsnorm_bwd_bf16_cuda
  check_builtins_pass(Operation::NormBackward, "norm_backward", ks);
}

TEST_CASE("norm backward CUDA built-ins: the atomic kernels' run-to-run spread of dgamma/dbeta") {
  const SuiteInfo* s = find_suite("norm_backward");
  REQUIRE(s);
  for (const char* k : {"layernorm_bwd_f16_cuda", "layernorm_bwd_bf16_cuda"}) {
    SuiteRunOptions opt;
    opt.run.timed = 20;
    const RunResult r = run_suite(*s, {k}, opt);
    for (const CaseResult& c : r.cases) {
      if (c.status != CaseStatus::Pass) continue;
      const auto differ = c.achieved.find("norm_bwd_param_runs_differ"), spread = c.achieved.find("norm_bwd_param_spread_ulps");
      if (differ == c.achieved.end()) continue;
      std::printf("%s %s: %g later run(s) (20 timed and the repeats) differ in dgamma/dbeta, spread %g ulp of f32\n", k, c.case_id.c_str(), differ->second,
                  spread->second);
    }
  }
}

TEST_CASE("norm backward CUDA built-ins: mutation score 100 %") {
  check_builtins_mutation("norm_backward", cuda_builtins(Operation::NormBackward));
}

}  // namespace fpcert
