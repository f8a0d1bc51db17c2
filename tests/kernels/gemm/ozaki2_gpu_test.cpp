// tests/kernels/gemm/ozaki2_gpu_test.cpp — gemm_f64_ozaki2_int8 (kernels/gemm/cuda/ozaki2.cu, docs/fp64.md): bit for bit
// the CPU model's arithmetic (ozaki2::gemm with 20 moduli) on in-domain data through the runner (which also grades it
// by fp64's envelope), on wide-exponent cancelling data outside the domain (called directly) where the scheme's own
// bound must hold on every element, and on K = 2^17 + 1 (past one int32 block), with the times printed.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "oracle/refvalue.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/gemm_call.hpp"
#include "tests/support/ozaki2_data.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// C = A B by the device kernel, called directly (no domain check; tests/support/gemm_call.hpp), as doubles.
std::vector<double> run_direct(GemmKernel& k, DeviceApi& api, const std::vector<double>& a, const std::vector<double>& b, std::int64_t m,
                               std::int64_t n, std::int64_t kk) {
  const std::vector<std::uint64_t> codes = test::gemm_call(k, api, test::GemmInputs{m, n, kk, a, b});
  std::vector<double> c(codes.size());
  for (std::size_t x = 0; x < c.size(); ++x) c[x] = std::bit_cast<double>(codes[x]);
  return c;
}

int differing(const std::vector<double>& x, const std::vector<double>& y) {
  int d = 0;
  for (std::size_t q = 0; q < x.size(); ++q) d += std::bit_cast<std::uint64_t>(x[q]) != std::bit_cast<std::uint64_t>(y[q]);
  return d;
}

}  // namespace

TEST_CASE("gemm_f64_ozaki2_int8: the CPU model's bits, fp64's envelope in the domain, the scheme's bound outside it") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  if (test::device_sm(*cuda) < 80) return;  // can_implement declines below sm_80 (INT8 mma.sync m16n8k32)
  const ozaki2::Plan pl = ozaki2::make_plan(20);
  auto k = make_gemm_kernel("gemm_f64_ozaki2_int8");
  REQUIRE(k);
  // In the domain: uniform [-1, 1) with 53 random bits, odd shape, K = 515; graded by the runner, its output kept.
  const Problem p = test::uniform_problem(131, 137, 515, f64, test::seed() + 392);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  std::vector<double> out;
  const CaseResult r = test::run_graded(*k, p, ref, *cuda, [&] {
    RunOptions o;
    o.output = &out;
    return o;
  }());
  INFO(r.reason);
  std::printf("gemm_f64_ozaki2_int8 on 131 x 137 x 515 uniform: %.4f ms; correct bits %d..53 (median %g); err/allowed %.3g\n",
              r.time_ms_median, r.metrics.correct_bits_min, r.metrics.correct_bits_median, r.metrics.err_frac_max);
  CHECK(r.status == CaseStatus::Pass);
  CHECK(r.metrics.max_abs > 0);
  CHECK(r.metrics.deterministic);
  const std::vector<double> model = ozaki2::gemm(pl, p.a.data.data(), p.b.data.data(), p.m, p.n, p.k);
  REQUIRE(out.size() == model.size());
  CHECK(differing(out, model) == 0);

  // Outside the domain (lines spanning 2^-20 .. 2^21, cancelling rows): the model's bits and the scheme's bound.
  const std::int64_t m = 67, n = 45, kk = 200;
  std::vector<double> a, b;
  test::wide_cancelling(m, n, kk, 40, test::seed() + 393, a, b);
  const std::vector<double> got = run_direct(*k, *cuda, a, b, m, n, kk);
  ozaki2::Scaling sc;
  const std::vector<double> want = ozaki2::gemm(pl, a.data(), b.data(), m, n, kk, &sc);
  CHECK(differing(got, want) == 0);
  const GemmRef wref = gemm_reference(MatrixView::row_major(a.data(), m, kk), MatrixView::row_major(b.data(), kk, n));
  std::vector<double> exact_abs(got.size());
  for (std::size_t x = 0; x < got.size(); ++x) exact_abs[x] = std::fabs(wref.c[x].hi);
  const std::vector<double> bnd = ozaki2::bound(sc, a.data(), b.data(), exact_abs, m, n, kk);
  int beyond = 0;
  for (std::size_t x = 0; x < got.size(); ++x) beyond += !(std::fabs((got[x] - wref.c[x].hi) - wref.c[x].lo) <= bnd[x]);
  CHECK(beyond == 0);

  // K = 2^17 + 1 past one int32 block (the device's blocks are 131,040), every residue of modulus 256 equal to -128
  // (tests/support/ozaki2_data.hpp, headroom_operands): the model's bits, and RN of the exact product.
  const std::int64_t m2 = 3, n2 = 5;
  std::vector<double> a2, b2;
  test::headroom_operands(m2, n2, test::seed() + 394, a2, b2);
  const std::vector<double> g2 = run_direct(*k, *cuda, a2, b2, m2, n2, test::kHeadroomK);
  CHECK(differing(g2, ozaki2::gemm(pl, a2.data(), b2.data(), m2, n2, test::kHeadroomK)) == 0);
  const GemmRef ref2 = gemm_reference(MatrixView::row_major(a2.data(), m2, test::kHeadroomK), MatrixView::row_major(b2.data(), test::kHeadroomK, n2));
  for (std::size_t x = 0; x < g2.size(); ++x)
    CHECK(std::bit_cast<std::uint64_t>(g2[x]) == round_ref(f64, ref2.c[x], Rounder::nearest(f64)).code);
}

TEST_CASE("GPU Ozaki-II residue GEMMs (the bitwise tier's device route) give the host's C bit for bit") {
  // ExactGemmEngine::residue_gemms on the CUDA engine: 16 x 16 tiles, K staged 64 at a time. Partial tiles, K not a
  // multiple of 64, K blocks of 7 (the host reduces after each, the device as well) and of the default size, 8/14/20
  // moduli, on wide cancelling data; C through ozaki2::gemm with and without the engine compared bit for bit.
  std::string why;
  const std::shared_ptr<CudaExactGemmEngine> engine = make_cuda_exact_gemm_engine(&why);
  INFO(why);
  REQUIRE(engine);
  struct Shape {
    std::int64_t m, n, k, kblock;
  };
  int jobs = 0;
  for (const Shape& sh : {Shape{67, 53, 200, 7}, Shape{130, 70, 600, ozaki2::kMaxKBlock}, Shape{16, 16, 64, 64}, Shape{1, 300, 1000, 33}})
    for (const int moduli : {8, 14, 20}) {
      CAPTURE(sh.m);
      CAPTURE(sh.k);
      CAPTURE(moduli);
      std::vector<double> a, b;
      test::wide_cancelling(sh.m, sh.n, sh.k, 30, test::seed() + 501 + static_cast<std::uint64_t>(moduli), a, b);
      const ozaki2::Plan pl = ozaki2::make_plan(moduli, sh.kblock);
      const std::vector<double> host = ozaki2::gemm(pl, a.data(), b.data(), sh.m, sh.n, sh.k);
      ResidueGemms probe;  // the job ozaki2::gemm gives the engine: that the device takes it
      probe.count = moduli, probe.moduli = pl.m, probe.m = sh.m, probe.n = sh.n, probe.k = sh.k, probe.kblock = sh.kblock;
      std::vector<std::int8_t> zeros(static_cast<std::size_t>(moduli * (sh.m + sh.n) * sh.k), 0);
      std::vector<std::uint8_t> out(static_cast<std::size_t>(moduli * sh.m * sh.n), 1);
      probe.ops = zeros.data();
      REQUIRE(engine->residue_gemms(probe, out.data()));
      CHECK(std::count(out.begin(), out.end(), std::uint8_t{0}) == static_cast<std::ptrdiff_t>(out.size()));
      const std::vector<double> dev = ozaki2::gemm(pl, a.data(), b.data(), sh.m, sh.n, sh.k, nullptr, ozaki2::Route::Host, engine.get());
      CHECK(differing(dev, host) == 0);
      ++jobs;
    }
  MESSAGE(jobs << " Ozaki-II GEMMs with their residue GEMMs on the device, bit for bit the host's");
}
