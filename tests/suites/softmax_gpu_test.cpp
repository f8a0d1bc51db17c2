// tests/suites/softmax_gpu_test.cpp — the CUDA softmax built-ins (kernels/softmax/cuda/softmax_cuda.cu) against the host
// reference through the runner: every kernel passes every case of the softmax suite with a non-vacuous bound, and its
// mutants (the faults in the kernel's own device code) reach a score of 100 %; the kernels declared exactly
// (softmax_*_warp_ops_cuda) equal the host's emulation bit for bit on every case. Without a device: skipped (exit 77).
#include <doctest/doctest.h>

#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/softmax/softmax_emulate.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/row_gpu_checks.hpp"

namespace fpcert {

TEST_CASE("softmax CUDA built-ins: every case passes against the host reference, with evidence") {
  const auto ks = cuda_builtins(Operation::Softmax);
  REQUIRE(ks.size() >= 6);
  check_builtins_pass(Operation::Softmax, "softmax", ks);
}

TEST_CASE("softmax CUDA built-ins declared exactly: bit for bit the host's emulation on every case") {
  const auto ks = cuda_builtins(Operation::Softmax);
  int exact = 0;
  for (const std::string& k : ks) {
    if (!softmax_emulable(make_softmax_kernel(k)->softmax_traits().arith)) continue;
    ++exact;
    CAPTURE(k);
    RunResult r = run_suite(*find_suite("softmax"), {k}, SuiteRunOptions{});
    for (const CaseResult& c : r.cases) {
      if (c.case_id == "evidence") continue;
      CAPTURE(c.case_id);
      bool bitwise = false;
      for (const CheckResult& x : c.checks)
        if (x.kind == CheckKind::Bitwise) {
          CAPTURE(x.detail);
          CHECK(x.passed);
          bitwise = true;
          MESSAGE(k << " " << c.case_id << ": " << x.detail);
        }
      CHECK(bitwise);
      CHECK(c.tier == Tier::Bitwise);
    }
  }
  CHECK(exact >= 2);
}

TEST_CASE("softmax CUDA built-ins: mutation score 100 %") { check_builtins_mutation("softmax", cuda_builtins(Operation::Softmax)); }

}  // namespace fpcert
