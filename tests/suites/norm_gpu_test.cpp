// tests/suites/norm_gpu_test.cpp — the CUDA LayerNorm / RMSNorm built-ins (kernels/norm/cuda/norm_cuda.cu) against the
// host reference through the runner: every kernel passes every case of the norm suite with a non-vacuous bound, and its
// mutants (the faults in the kernel's own device code) reach a score of 100 %. Without a device: skipped (exit 77).
#include <doctest/doctest.h>

#include <cstdio>

#include "kernels/norm/norm_kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

std::vector<std::string> cuda_kernels() {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, Operation::Norm))
    if (make_norm_kernel(n)->backend() == Backend::Cuda) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("norm CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_kernels();
  REQUIRE(ks.size() >= 6);
  const SuiteInfo* s = find_suite("norm");
  REQUIRE(s);
  for (const std::string& k : ks) {
    CAPTURE(k);
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CAPTURE(c.envelope.arithmetic);
      std::printf("%s %s: %s, err/bound %.3g, ulp max %.0f, %.3f ms\n", k.c_str(), c.case_id.c_str(), std::string(to_string(c.status)).c_str(),
                  c.metrics.err_frac_max, c.metrics.ulp_max, c.time_ms_median);
      CHECK(c.status == CaseStatus::Pass);
    }
    operation_runner(Operation::Norm).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

TEST_CASE("norm CUDA built-ins: mutation score 100 %") {
  const SuiteInfo* s = find_suite("norm");
  REQUIRE(s);
  for (const std::string& k : cuda_kernels()) {
    CAPTURE(k);
    const MutationScore m = run_mutation(*s, k, MutationOptions{});
    for (const MutantResult& x : m.mutants) {
      CAPTURE(x.fault);
      CAPTURE(x.detail);
      std::printf("%s %s: %s (%s)\n", k.c_str(), x.fault.c_str(), std::string(to_string(x.outcome)).c_str(), x.case_id.c_str());
      CHECK((x.outcome == MutantOutcome::Killed || x.outcome == MutantOutcome::NotApplicable));
    }
    CHECK(m.score() == 1.0);
  }
}

}  // namespace fpcert
