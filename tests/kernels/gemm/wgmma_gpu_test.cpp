// tests/kernels/gemm/wgmma_gpu_test.cpp — the Hopper wgmma + TMA GEMMs (issue 43) on the device: the shared-memory
// layouts, the TMA's zero fill and the fragment map checked exactly (integer inputs, so any summation order gives
// the exact integer GEMM bit for bit) over partial tiles, K tails, every storage layout, misaligned operands and
// odd ldc; the tf32 kernel's operand reading (the 13 low bits ignored, as its traits declare); and every kernel
// through the runner on inputs that force rounding, K long enough for the stage ring to wrap many times. Label gpu:
// "not supported" is checked on any device other than sm_90 (the kernels are sm_90a code).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/philox.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/register.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

const char* const kWgmmaKernels[] = {"gemm_f16_f32acc_wgmma_sm90", "gemm_bf16_f32acc_wgmma_sm90", "gemm_tf32_f32acc_wgmma_sm90",
                                     "gemm_e4m3_f32acc_wgmma_sm90", "gemm_e5m2_f32acc_wgmma_sm90",
                                     "gemm_e4m3_f32acc_wgmma_sm90_promote128", "gemm_e5m2_f32acc_wgmma_sm90_promote128"};

std::unique_ptr<GemmKernel> make(const std::string& name) {
  auto k = make_gemm_kernel(name);
  REQUIRE_MESSAGE(k, "kernel " << name << " is not registered");
  return k;
}

/// Integer problem p through the runner with layout l (misaligned operands, ldc padding and run counts from opt), and
/// the checks of an exact result: "not supported" off sm_90, else the exact integer GEMM bit for bit, every element
/// written and finite, the guards intact, the runs equal.
void check_exact(GemmKernel& k, const Problem& p, const GemmRef& ref, DeviceApi& api, int sm, const GemmLayout& l, bool misaligned,
                 const RunOptions& opt) {
  const CaseResult r = test::run_graded(k, p, ref, api, opt, BoundVariant::Independent, l, misaligned);
  INFO(r.reason);
  if (sm != 90) {
    CHECK(r.status == CaseStatus::NotSupported);
    return;
  }
  REQUIRE(r.status == CaseStatus::Pass);
  test::check_exact_result(r, p.k);
}

}  // namespace

TEST_CASE("wgmma: exact layouts - integer inputs give the exact integer GEMM bit for bit (tails, every layout, misaligned)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const int sm = test::device_sm(*cuda);
  struct Shape {
    std::int64_t m, n, k;
  };
  // Partial 128 x 256 tiles and several of them, K tails inside a stage and inside one wgmma k-step, K = 1, one
  // element, K = 0 (C written as zeros), whole tiles, and K = 256 (two to eight stages: the ring wraps for fp16).
  const Shape shapes[] = {{131, 263, 203}, {67, 45, 37}, {200, 9, 256}, {1, 1, 1}, {3, 257, 7}, {33, 17, 0}, {128, 256, 192}, {256, 512, 256}};
  const GemmLayout layouts[] = {{},
                                {Layout::RowMajor, Layout::ColMajor, Layout::RowMajor},
                                {Layout::ColMajor, Layout::RowMajor, Layout::RowMajor},
                                {Layout::ColMajor, Layout::ColMajor, Layout::ColMajor},
                                {Layout::RowMajor, Layout::RowMajor, Layout::ColMajor}};
  for (const char* name : kWgmmaKernels) {
    auto k = make(name);
    CAPTURE(name);
    CHECK(k->traits().layouts == kLayoutsAll);
    for (const Shape& s : shapes)
      for (const GemmLayout& l : layouts)
        for (const bool misaligned : {false, true}) {
          if (misaligned && (s.k == 0 || !l.row_major())) continue;
          CAPTURE(s.m);
          CAPTURE(s.n);
          CAPTURE(s.k);
          CAPTURE(to_string(l));
          CAPTURE(misaligned);
          const Problem p = test::integer_problem(s.m, s.n, s.k, test::seed() + static_cast<std::uint64_t>(s.m * 1000 + s.k));
          const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
          RunOptions opt;
          opt.warmups = 0;
          opt.timed = 1;
          opt.ldc_pad = 3;  // ldc = n + 3: odd, rows not 8-byte aligned (the scalar stores); guards in the padding
          check_exact(*k, p, ref, *cuda, sm, l, misaligned, opt);
        }
  }
}

TEST_CASE("wgmma: the persistent schedule - more tiles than SMs, the ring running on across a block's tiles") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const int sm = test::device_sm(*cuda);
  // 17 x 9 = 153 tiles of 128 x 256 (306 of 128 x 128): more than the 132 SMs of an H100 or H200, so some blocks
  // compute two or three tiles. K = 300 is 5 stages of fp16/bf16, 10 of tf32, 3 of fp8: none a multiple of the
  // ring's 4 or 6 slots, so a block's second tile starts mid-ring with the other phase. Integer inputs: any order
  // gives the exact GEMM, so a tile computed from another tile's stages, or a stage read before it is filled, shows.
  const Problem p = test::integer_problem(17 * 128 - 5, 9 * 256 - 3, 300, test::seed() + 4242);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : kWgmmaKernels) {
    auto k = make(name);
    CAPTURE(name);
    for (const GemmLayout& l : {GemmLayout{}, GemmLayout{Layout::RowMajor, Layout::ColMajor, Layout::RowMajor}}) {
      CAPTURE(to_string(l));
      RunOptions opt;
      opt.warmups = 0;
      opt.timed = 2;  // a second run: the schedule is bitwise reproducible
      check_exact(*k, p, ref, *cuda, sm, l, false, opt);
    }
  }
}

TEST_CASE("wgmma: the tf32 kernel reads its fp32 operands truncated to tf32 (the 13 low bits ignored)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  auto k = make("gemm_tf32_f32acc_wgmma_sm90");
  const bool here = test::device_sm(*cuda) == 90;
  REQUIRE(k->can_implement(64, 64, 64).ok == here);
  if (!here) {
    MESSAGE("skipped: no sm_90 device (the kernel is sm_90a code)");
    return;
  }
  CHECK(k->traits().input_rounding == Rounding::TowardZero);
  // C = X I and I X: each output is one exact product, the operand as the tensor core read it. X: values just below
  // a tf32 rounding boundary (RZ keeps the lower value, every nearest mode rounds up), ties, and random fp32.
  const std::int64_t n = 40;
  std::vector<double> x(static_cast<std::size_t>(n * n));
  std::uint64_t ctr = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto w = philox_4x32(test::seed(), 13, ctr++);
    const double sign = (w[1] & 1) ? -1.0 : 1.0;
    const int e = static_cast<int>(w[2] % 8) - 4;
    switch (i % 3) {
      case 0: x[i] = sign * std::ldexp(2.0 - std::ldexp(1.0, -23), e); break;                          // RZ: 2 - 2^-10; RN: 2
      case 1: x[i] = sign * std::ldexp(1.0 + std::ldexp(1.0, -11), e); break;                          // a tie
      default: x[i] = sign * std::ldexp(1.0 + static_cast<double>(w[0] >> 9) * 0x1p-23, e); break;    // random fp32
    }
  }
  const Rounder rz{Rounding::TowardZero, Saturation::Inf, NanPayload::Preserve};
  for (const bool x_left : {true, false}) {
    CAPTURE(x_left);
    const Problem p = test::identity_product_problem(x, n, x_left, x_left ? "test-tf32-reading: X * I" : "test-tf32-reading: I * X");
    Problem q = p;  // X truncated to tf32 by the oracle: what the traits say the kernel computes
    for (double& v : (x_left ? q.a : q.b).data) v = to_double(tf32, round_double(tf32, v, rz).code);
    const GemmRef want = gemm_reference(q.a.view(), q.b.view());
    RunOptions opt;
    opt.warmups = 0;
    opt.timed = 1;
    const CaseResult r = test::run_graded(*k, p, want, *cuda, opt);
    INFO(r.reason);
    CHECK_MESSAGE(r.metrics.max_abs == 0.0, "the tensor core's tf32 reading differs from truncation at index " << r.worst_index
                                                                                                              << " (max diff " << r.metrics.max_abs << ")");
    const CaseResult r2 = test::run_graded(*k, p, gemm_reference(p.a.view(), p.b.view()), *cuda, opt);
    CHECK(r2.metrics.max_abs > 0.0);  // the test can fail: X itself is not what the kernel sees
  }
}

TEST_CASE("wgmma: every kernel through the runner on uniform inputs that force rounding (K = 2000: the stage ring wraps)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const int sm = test::device_sm(*cuda);
  const Problem p = test::uniform_problem(300, 520, 2000, f32, test::seed() + 103);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : kWgmmaKernels) {
    auto k = make(name);
    CAPTURE(name);
    const CaseResult r = test::run_graded(*k, p, ref, *cuda);
    INFO(r.reason);
    if (sm != 90) {
      CHECK(r.status == CaseStatus::NotSupported);
      continue;
    }
    CHECK(r.status == CaseStatus::Pass);
    CHECK(r.metrics.max_abs > 0.0);  // the inputs forced rounding
    CHECK(r.metrics.unwritten == 0);
    CHECK(r.metrics.guard_violations == 0);
    CHECK(r.metrics.deterministic);
  }
}
