// tests/kernels/gemm/f64_gpu_test.cpp — the FP64 GPU subjects (docs/fp64.md): cuBLAS DGEMM, cuBLAS's fixed-point
// emulation and the DMMA kernel pass the fp64 envelope on 53-bit inputs or answer "not supported" (never a crash);
// the DMMA kernel on sm_80+ is required to pass; and a probe of how one DMMA combines its four products with C,
// printed for docs/fp64.md ("The DMMA kernel's order").
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
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

TEST_CASE("DMMA probe: mma.m8n8k4.f64 is a sequential FMA chain in k order, C first (docs/fp64.md)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  if (test::device_sm(*cuda) < 80) {
    MESSAGE("skipped: mma.m8n8k4.f64 needs sm_80 or later");
    return;
  }
  auto k = make_gemm_kernel("gemm_f64_dmma_sm80");
  REQUIRE(k);
  // K = 8: two DMMA steps, the second with the first's D as C. e = 2^-53. Under the declaration (sequential FMA in k
  // order from +0, C first: the host's std::fma chain below), and what other models would give:
  //   (1, e, e, e | 0, 0, 0, 0): 1, then three ties to even: 1.  Exact sum rounded once: 1 + 2^-51. Pairwise: 1 + 2^-52.
  //   (e, e, e, 1 | 0, ...):     1.5 2^-52 exactly, then + 1 is a tie: 1 + 2^-51.  Pairwise: 1 + 2^-52.
  //   (1, 0, 0, 0 | e, e, e, 0): C = 1 first: three ties to even, 1.  C added after the step's products: 1 + 2^-51.
  //   (e, e, e, 0 | 1, 0, 0, 0): 1 + 2^-51 under both.
  // and four rows of random values over 2^-30 .. 2^30 of both signs (every product rounds inside the chain).
  Problem p = test::uniform_problem(8, 8, 8, f64, 1);
  for (double& v : p.a.data) v = 0;
  for (double& v : p.b.data) v = 1;
  const double e = 0x1p-53;
  const double rows[4][8] = {{1, e, e, e, 0, 0, 0, 0}, {e, e, e, 1, 0, 0, 0, 0}, {1, 0, 0, 0, e, e, e, 0}, {e, e, e, 0, 1, 0, 0, 0}};
  std::uint64_t s = 0x9E3779B97F4A7C15ULL;
  auto rnd = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double f = static_cast<double>(s >> 11) * 0x1p-53;  // [0, 1)
    return (s & 1 ? -1 : 1) * (0.5 + f) * std::ldexp(1.0, static_cast<int>((s >> 3) % 61) - 30);
  };
  for (int i = 0; i < 8; ++i)
    for (int q = 0; q < 8; ++q) p.a(i, q) = i < 4 ? rows[i][q] : rnd();
  for (int q = 0; q < 8; ++q)
    for (int j = 1; j < 8; ++j) p.b(q, j) = rnd();
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  RunOptions opt;
  std::vector<double> out;
  opt.output = &out;
  const CaseResult r = test::run_graded(*k, p, ref, *cuda, opt);
  INFO(r.reason);
  REQUIRE(out.size() == 64);
  std::printf("DMMA probe: rows (1,e,e,e|0), (e,e,e,1|0), (1,0,0,0|e,e,e,0), (e,e,e,0|1,0,0,0) -> 1 + {%g, %g, %g, %g} 2^-52 "
              "(sequential fma, C first: 0, 2, 0, 2)\n",
              (out[0] - 1) * 0x1p52, (out[8] - 1) * 0x1p52, (out[16] - 1) * 0x1p52, (out[24] - 1) * 0x1p52);
  int same = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      double c = 0;
      for (int q = 0; q < 8; ++q) c = std::fma(p.a(i, q), p.b(q, j), c);
      CHECK_MESSAGE(out[static_cast<std::size_t>(i * 8 + j)] == c, "element (", i, ", ", j, ")");
      same += out[static_cast<std::size_t>(i * 8 + j)] == c;
    }
  std::printf("DMMA probe: %d of 64 elements equal the host's sequential std::fma chain bit for bit\n", same);
}
