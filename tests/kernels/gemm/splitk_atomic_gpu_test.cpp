// tests/kernels/gemm/splitk_atomic_gpu_test.cpp — gemm_f32_splitk4_atomic on the device: two runs, each element of
// each equal to one of the 4! arrival orders of its four partials (computed here on the host by the declared chunk
// arithmetic, fp32 FMA from +0), each run within the envelope around the exact reference, the two runs within the
// spread bound of each other; C pre-filled with NaN is zeroed by the kernel itself. Then the runner: the kernel
// passes with its run-to-run spread measured (printed: the figures the issue asks for).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// One run of the kernel on p (row-major, ld = k and n, ldc = n), C pre-filled with a NaN pattern; C's codes.
std::vector<std::uint32_t> run_once(GemmKernel& k, const Problem& p, DeviceApi& api) {
  std::vector<float> a(p.a.data.begin(), p.a.data.end()), b(p.b.data.begin(), p.b.data.end());  // fp32 values: exact
  std::vector<std::uint32_t> c(static_cast<std::size_t>(p.m * p.n), 0x7FC5A5A5u);
  void* dA = api.alloc(a.size() * 4);
  void* dB = api.alloc(b.size() * 4);
  void* dC = api.alloc(c.size() * 4);
  api.to_device(dA, a.data(), a.size() * 4);
  api.to_device(dB, b.data(), b.size() * 4);
  api.to_device(dC, c.data(), c.size() * 4);
  GemmOperands ops{p.m, p.n, p.k, dA, p.k, Layout::RowMajor, dB, p.n, Layout::RowMajor, dC, p.n, api.stream()};
  k.run(ops);
  api.synchronize(60000);
  api.to_host(c.data(), dC, c.size() * 4);
  api.free(dA);
  api.free(dB);
  api.free(dC);
  return c;
}

}  // namespace

TEST_CASE("gemm_f32_splitk4_atomic: every element is one arrival order of its partials, within the envelope, in each of two runs") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  auto k = make_gemm_kernel("gemm_f32_splitk4_atomic");
  REQUIRE(k);
  const KernelTraits& t = k->traits();
  REQUIRE(t.determinism == Determinism::RunToRun);
  for (std::int64_t K : {1, 3, 37, 1000, 4099}) {
    CAPTURE(K);
    const Problem p = test::uniform_problem(67, 45, K, f32, test::seed() + static_cast<std::uint64_t>(K));
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    const auto r1 = run_once(*k, p, *cuda), r2 = run_once(*k, p, *cuda);
    // The envelope around the exact reference (the inputs are fp32: ref' = ref), for each run.
    const EnvelopeModel env = make_envelope(t, K);
    const std::vector<double> row(static_cast<std::size_t>(p.m), 0.0), col(static_cast<std::size_t>(p.n), 0.0);  // no operand terms (fp32 in fp32)
    const SpreadModel sm = make_spread_model(t, K);
    REQUIRE(sm.atomic);
    const std::int64_t len = (K + 3) / 4;
    std::int64_t not_an_order = 0, differ = 0, beyond_spread = 0;
    for (const auto* run : {&r1, &r2}) {
      std::vector<std::uint64_t> codes(run->begin(), run->end());
      const EnvelopeVerdict v = evaluate_envelope(env, f32, p.m, p.n, ref, codes, row, col);
      CHECK_MESSAGE(v.exceed == 0, "max |c - ref| / allowed = " << v.worst << " at " << v.worst_index);
      CHECK(v.graded == p.m * p.n);
    }
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        // The four partials by the declared chunk arithmetic (fp32 FMA from +0, k ascending), then every order.
        std::array<float, 4> part{};
        for (int s = 0; s < 4; ++s) {
          const std::int64_t k0 = std::min<std::int64_t>(K, s * len), k1 = std::min<std::int64_t>(K, k0 + len);
          float acc = 0.0f;
          for (std::int64_t q = k0; q < k1; ++q) acc = std::fma(static_cast<float>(p.a(i, q)), static_cast<float>(p.b(q, j)), acc);
          part[static_cast<std::size_t>(s)] = acc;
        }
        std::vector<std::uint32_t> admissible;
        std::array<int, 4> idx{0, 1, 2, 3};
        do {
          float c = 0.0f;
          for (int s : idx) c += part[static_cast<std::size_t>(s)];
          admissible.push_back(std::bit_cast<std::uint32_t>(c));
        } while (std::next_permutation(idx.begin(), idx.end()));
        const auto x = static_cast<std::size_t>(i * p.n + j);
        for (const auto* run : {&r1, &r2})
          not_an_order += std::find(admissible.begin(), admissible.end(), (*run)[x]) == admissible.end();
        if (r1[x] != r2[x]) {
          ++differ;
          const double d = std::fabs(static_cast<double>(std::bit_cast<float>(r1[x])) - std::bit_cast<float>(r2[x]));
          beyond_spread += d > spread_allowed(sm, std::fabs(ref.c[x].hi), ref.abs_sum[x]);
        }
      }
    CHECK(not_an_order == 0);
    CHECK(beyond_spread == 0);
    MESSAGE("K = " << K << ": " << differ << " of " << p.m * p.n << " elements differ between the two runs");
  }
}

TEST_CASE("gemm_f32_splitk4_atomic through the runner: passes, its spread measured over every run") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  auto k = make_gemm_kernel("gemm_f32_splitk4_atomic");
  REQUIRE(k);
  const Problem p = test::uniform_problem(256, 256, 4096, f32, test::seed());
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  CaseSetup s;
  s.suite = "test";
  s.case_id = "uniform_256x256x4096";
  s.problem = &p;
  s.ref = &ref;
  const CaseResult r = run_case(*k, s, *cuda, RunOptions{});
  CAPTURE(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  CHECK(r.determinism == "run_to_run");
  REQUIRE(r.spread);
  CHECK(r.spread->runs >= 2);
  CHECK(r.spread->max_frac <= 1);
  CHECK(r.spread->envelope_exceed == 0);
  const CheckResult* sp = find_check(r, CheckKind::Spread);
  REQUIRE(sp);
  MESSAGE(sp->detail);
}
