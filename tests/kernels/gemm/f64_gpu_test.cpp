// tests/kernels/gemm/f64_gpu_test.cpp — the FP64 GPU subjects (docs/fp64.md): cuBLAS DGEMM, cuBLAS's fixed-point
// emulation and the DMMA kernel pass the fp64 envelope on 53-bit inputs or answer "not supported" (never a crash);
// the DMMA kernel on sm_80+ is required to pass; and a probe of how one DMMA combines its four products with C,
// printed for docs/fp64.md ("The DMMA kernel's order").
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

TEST_CASE("fp64 GPU subjects: each passes the fp64 envelope or is not supported, and prints its correct bits") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const bool sm80 = test::device_sm(*cuda) >= 80;
  // Uniform [-1, 1) with 53 random bits, odd shape, K = 515: every product and sum rounds in fp64.
  const Problem p = test::uniform_problem(131, 137, 515, f64, test::seed() + 641);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : {"cublas_gemm_f64", "cublas_gemm_f64_emulated_fixedpoint", "gemm_f64_dmma_sm80"}) {
    auto k = make_gemm_kernel(name);
    REQUIRE_MESSAGE(k, name << " is not registered");
    CAPTURE(name);
    const CaseResult r = test::run_graded(*k, p, ref, *cuda);
    INFO(r.reason);
    std::printf("%-38s %-13s max|err| %.4g  err/allowed %.4g  correct bits min %d median %g  %.4f ms  (%s)\n", name,
                std::string(to_string(r.status)).c_str(), r.metrics.max_abs, r.metrics.err_frac_max, r.metrics.correct_bits_min,
                r.metrics.correct_bits_median, r.time_ms_median, r.reason.c_str());
    CHECK((r.status == CaseStatus::Pass || r.status == CaseStatus::NotSupported));
    if (sm80 && std::string(name) != "cublas_gemm_f64_emulated_fixedpoint") CHECK(r.status == CaseStatus::Pass);
    if (r.status != CaseStatus::Pass) continue;
    CHECK(r.metrics.max_abs > 0);  // fp64 roundings happened: the test can fail
    CHECK(r.metrics.guard_violations == 0);
    CHECK(r.metrics.deterministic);
  }
}

TEST_CASE("DMMA probe: how mma.m8n8k4.f64 combines its four products with C (printed, docs/fp64.md)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  if (test::device_sm(*cuda) < 80) return;
  auto k = make_gemm_kernel("gemm_f64_dmma_sm80");
  REQUIRE(k);
  // One K-step (K = 4, so C enters as +0): row (1, 2^-53, 2^-53, 2^-53) of A against a column of ones.
  //   sequential FMA in k order: 1, then three ties to even: 1.
  //   exact sum rounded once:    1 + 1.5 2^-52, a tie: 1 + 2^-51 (even).
  //   pairwise ((p0 + p1) + (p2 + p3)): 1 + 2^-52.
  // Row 1 reverses it, (2^-53, 2^-53, 2^-53, 1): sequential FMA sums 1.5 2^-52 exactly, then + 1 is the tie: 1 + 2^-51;
  //   exact then one rounding: 1 + 2^-51; pairwise: 2^-52 + (2^-53 + 1 -> 1) = 1 + 2^-52.
  Problem p = test::uniform_problem(8, 8, 4, f64, 1);
  for (double& v : p.a.data) v = 0;
  for (double& v : p.b.data) v = 1;
  const double r0[4] = {1, 0x1p-53, 0x1p-53, 0x1p-53}, r1[4] = {0x1p-53, 0x1p-53, 0x1p-53, 1};
  for (int q = 0; q < 4; ++q) {
    p.a(0, q) = r0[q];
    p.a(1, q) = r1[q];
  }
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  RunOptions opt;
  std::vector<double> out;
  opt.output = &out;
  const CaseResult r = test::run_graded(*k, p, ref, *cuda, opt);
  INFO(r.reason);
  REQUIRE(out.size() == 64);
  auto val = [&](int i) { return out[static_cast<std::size_t>(i * 8)]; };
  std::printf("DMMA probe: row (1, e, e, e) -> 1 + %.17g * 2^-52 ; row (e, e, e, 1) -> 1 + %.17g * 2^-52 "
              "(sequential fma: 0 and 2; exact then one rounding: 2 and 2; pairwise: 1 and 1)\n",
              (val(0) - 1) * 0x1p52, (val(1) - 1) * 0x1p52);
  // Whatever the model, each result is one of the fp64 neighbours of the exact 1 + 1.5 2^-52.
  CHECK((val(0) == 1.0 || val(0) == 1 + 0x1p-52 || val(0) == 1 + 0x1p-51));
  CHECK((val(1) == 1.0 || val(1) == 1 + 0x1p-52 || val(1) == 1 + 0x1p-51));
}
