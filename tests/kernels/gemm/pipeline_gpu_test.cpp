// tests/kernels/gemm/pipeline_gpu_test.cpp — the three-pipeline CUDA kernels equal their CPU models bit for bit
// (same order along K), pass the runner's checks, and report guards, NaN pre-fill and timing.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

std::vector<std::uint8_t> encode(const std::vector<double>& v, const Format& f) {
  std::vector<std::uint8_t> out(v.size() * static_cast<std::size_t>(container_bytes(f)));
  for (std::size_t i = 0; i < v.size(); ++i)
    store_code(out.data(), static_cast<std::int64_t>(i), container_bytes(f),
               to_container(f, round_double(f, v[i], Rounder::nearest(f)).code));
  return out;
}

/// Run a kernel (host or device) on a problem and return C's codes (ldc = n).
std::vector<std::uint64_t> run_raw(GemmKernel& k, const Problem& p, DeviceApi& api) {
  const KernelTraits& t = k.traits();
  const auto a = encode(p.a.data, *t.a_input), b = encode(p.b.data, *t.b_input);
  const std::size_t cbytes = static_cast<std::size_t>(p.m * p.n * container_bytes(*t.out));
  void* dA = api.alloc(a.size());
  void* dB = api.alloc(b.size());
  void* dC = api.alloc(cbytes);
  api.to_device(dA, a.data(), a.size());
  api.to_device(dB, b.data(), b.size());
  GemmOperands ops{p.m, p.n, p.k, dA, p.k, Layout::RowMajor, dB, p.n, Layout::RowMajor, dC, p.n, api.stream()};
  k.run(ops);
  api.synchronize(60000);
  std::vector<std::uint8_t> c(cbytes);
  api.to_host(c.data(), dC, cbytes);
  api.free(dA);
  api.free(dB);
  api.free(dC);
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(p.m * p.n));
  for (std::size_t i = 0; i < codes.size(); ++i)
    codes[i] = from_container(*t.out, load_code(c.data(), static_cast<std::int64_t>(i), container_bytes(*t.out)));
  return codes;
}

}  // namespace

TEST_CASE("three-pipeline kernels equal their CPU models bit for bit (K not a multiple of the tile)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  auto host = make_host_api();
  for (const auto& [gpu, model] : {std::pair{"gemm_f32_tiled", "model_gemm_f32"},
                                   std::pair{"gemm_f16_f32acc_tiled", "model_gemm_f16_f32acc"},
                                   std::pair{"gemm_f16_f16acc_tiled", "model_gemm_f16_f16acc"}}) {
    CAPTURE(gpu);
    auto kg = make_gemm_kernel(gpu);
    auto km = make_gemm_kernel(model);
    REQUIRE(kg);
    REQUIRE(km);
    for (std::int64_t K : {1, 37, 256, 1000}) {
      const Problem p = test::uniform_problem(67, 45, K, f32, test::seed() + static_cast<std::uint64_t>(K));
      const auto g = run_raw(*kg, p, *cuda);
      const auto h = run_raw(*km, p, *host);
      std::size_t diff = 0, first = 0;
      for (std::size_t i = 0; i < g.size(); ++i)
        if (g[i] != h[i] && diff++ == 0) first = i;
      CHECK_MESSAGE(diff == 0, "K=" << K << ": " << diff << " elements differ, first at " << first << " gpu " << g[first]
                                    << " model " << h[first]);
    }
  }
}

TEST_CASE("runner on the device: guards intact, every element written, deterministic, timed with events") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const Problem p = test::uniform_problem(129, 65, 512, f32, test::seed());
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : {"gemm_f32_tiled", "gemm_f16_f32acc_tiled", "gemm_f16_f16acc_tiled"}) {
    auto k = make_gemm_kernel(name);
    CaseSetup s;
    s.suite = "gpu-test";
    s.case_id = "uniform";
    s.problem = &p;
    s.ref = &ref;
    const CaseResult r = run_case(*k, s, *cuda, RunOptions{});
    CAPTURE(name);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    CHECK(r.metrics.guard_violations == 0);
    CHECK(r.metrics.unwritten == 0);
    CHECK(r.metrics.deterministic);
    CHECK(r.timed_runs == 10);
    CHECK(r.time_ms_median > 0);
    CHECK(r.metrics.max_abs > 0);
  }
}
