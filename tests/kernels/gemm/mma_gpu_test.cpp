// tests/kernels/gemm/mma_gpu_test.cpp — the mma.sync tensor-core GEMMs on the device: exact fragment layouts
// (integer inputs, so the result is the exact integer GEMM whatever the MMA's internal order), the
// tf32 input rounding (cvt.rna: ties away from zero), the runner's checks with inputs that force
// rounding, and FP8 promotion at K = 4096.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
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

const char* const kMmaKernels[] = {
    "gemm_f16_f32acc_mma_sm80",  "gemm_bf16_f32acc_mma_sm80",           "gemm_tf32_f32acc_mma_sm80",
    "gemm_e4m3_f32acc_mma_sm89", "gemm_e5m2_f32acc_mma_sm89",           "gemm_e4m3_f32acc_mma_sm89_promote128",
    "gemm_e5m2_f32acc_mma_sm89_promote128"};

using test::device_sm;
bool is_fp8(const std::string& name) { return name.find("e4m3") != std::string::npos || name.find("e5m2") != std::string::npos; }
/// The SM the kernel's instructions need (its name says it).
int needed_sm(const std::string& name) { return is_fp8(name) ? 89 : 80; }

CaseResult run(GemmKernel& k, const Problem& p, const GemmRef& ref, DeviceApi& api, RunOptions opt = {},
               BoundVariant v = BoundVariant::Independent) {
  return test::run_graded(k, p, ref, api, opt, v);
}

/// The FP8 kernel with promotion every N products (N chosen at construction).
std::unique_ptr<GemmKernel> fp8_kernel(const Format& f, int every) {
#if defined(FPCERT_HAVE_CUDA)
  return make_fp8_mma_kernel(f, every);
#else
  (void)f, (void)every;
  return nullptr;  // unreachable: without CUDA the GPU tests exit 77 before running
#endif
}

std::unique_ptr<GemmKernel> make(const std::string& name) {
  auto k = make_gemm_kernel(name);
  REQUIRE_MESSAGE(k, "kernel " << name << " is not registered");
  return k;
}

}  // namespace

TEST_CASE("mma: exact fragment layouts - integer inputs give the exact integer GEMM bit for bit (odd m n k and ldc > n)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const int sm = device_sm(*cuda);
  // Shapes: partial 128x128 tiles and several blocks in M and N, K tails inside a stage and inside
  // one MMA, K = 1, a single element, K = 0 (C must be written as zeros), and whole tiles with rows
  // of A and B 16-byte aligned for every format (lda = k, ldb = n multiples of 16), which take the
  // vector-load paths; the odd shapes take the element-wise gathers.
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{131, 137, 203}, {67, 45, 37}, {200, 9, 256}, {1, 1, 1},
                          {3, 257, 7},     {33, 17, 0},  {128, 256, 192}, {96, 48, 64}};
  std::vector<std::unique_ptr<GemmKernel>> kernels;
  for (const char* name : kMmaKernels) kernels.push_back(make(name));
  // Promotion counts other than the registered 128 (the constructor's N): every MMA, and every 2.
  kernels.push_back(fp8_kernel(e4m3, 32));
  kernels.push_back(fp8_kernel(e5m2, 64));
  for (const auto& k : kernels) {
    CAPTURE(k->name());
    for (const Shape& s : shapes) {
      CAPTURE(s.m);
      CAPTURE(s.n);
      CAPTURE(s.k);
      const Problem p = test::integer_problem(s.m, s.n, s.k, test::seed() + static_cast<std::uint64_t>(s.m * 1000 + s.k));
      const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
      RunOptions opt;
      opt.warmups = 0;
      opt.timed = 1;    // plus the checked run: two runs compared bit for bit
      opt.ldc_pad = 3;  // ldc = n + 3: odd, rows not 8-byte aligned; the padding holds guard bytes
      const CaseResult r = run(*k, p, ref, *cuda, opt);
      INFO(r.reason);
      if (sm < needed_sm(k->name())) {
        CHECK(r.status == CaseStatus::NotSupported);
        continue;
      }
      REQUIRE(r.status == CaseStatus::Pass);
      test::check_exact_result(r, s.k);
    }
  }
}

TEST_CASE("mma: the tf32 kernel rounds its fp32 inputs to tf32 nearest with ties away from zero (cvt.rna)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  auto k = make("gemm_tf32_f32acc_mma_sm80");
  REQUIRE(k->can_implement(64, 64, 64).ok == (device_sm(*cuda) >= 80));
  if (device_sm(*cuda) < 80) return;
  // C = X * I (and I * X): every output is one exact product, so C shows the operand as the tensor
  // core saw it. X holds exact ties 1 + 2^-11 (rna: 1 + 2^-10; rne and truncation: 1), values just
  // above a tie (all nearest modes round up, truncation down), and random fp32 values.
  const std::int64_t n = 40;
  std::vector<double> x(static_cast<std::size_t>(n * n));
  std::uint64_t ctr = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto w = philox_4x32(test::seed(), 11, ctr++);
    const double sign = (w[1] & 1) ? -1.0 : 1.0;
    const int e = static_cast<int>(w[2] % 8) - 4;
    switch (i % 4) {
      case 0: x[i] = sign * std::ldexp(1.0 + std::ldexp(1.0, -11), e); break;                      // tie, even below: rne != rna
      case 1: x[i] = sign * std::ldexp(1.0 + 3 * std::ldexp(1.0, -11), e); break;                  // tie, odd below: rne = rna
      case 2: x[i] = sign * std::ldexp(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -23), e); break;  // above a tie
      default: x[i] = sign * std::ldexp(1.0 + static_cast<double>(w[0] >> 9) * 0x1p-23, e); break;    // random fp32
    }
  }
  const Rounder rna{Rounding::NearestAway, Saturation::Inf, NanPayload::Preserve};
  for (const bool x_left : {true, false}) {
    CAPTURE(x_left);
    const Problem p = test::identity_product_problem(x, n, x_left, x_left ? "test-tf32-rounding: X * I" : "test-tf32-rounding: I * X");
    // The expected C: X rounded to tf32 with ties away, computed by the oracle.
    Problem q = p;
    for (double& v : (x_left ? q.a : q.b).data) v = to_double(tf32, round_double(tf32, v, rna).code);
    const GemmRef want = gemm_reference(q.a.view(), q.b.view());
    RunOptions opt;
    opt.warmups = 0;
    opt.timed = 1;
    const CaseResult r = run(*k, q, want, *cuda, opt);  // q: the runner hands the kernel the rounded values...
    REQUIRE(r.status == CaseStatus::Pass);
    CHECK(r.metrics.max_abs == 0.0);
    const GemmRef exact = gemm_reference(p.a.view(), p.b.view());
    const CaseResult r2 = run(*k, p, want, *cuda, opt);  // ...and here the unrounded fp32 values
    INFO(r2.reason);
    CHECK_MESSAGE(r2.metrics.max_abs == 0.0, "the kernel's tf32 rounding differs from cvt.rna at index "
                                                 << r2.worst_index << " (max diff " << r2.metrics.max_abs << ")");
    // Against the unrounded product the ties must show: rna moves them by 2^-11 relative.
    const CaseResult r3 = run(*k, p, exact, *cuda, opt);
    CHECK(r3.metrics.max_abs > 0.0);
  }
}

TEST_CASE("mma: every kernel through the runner on uniform inputs that force rounding (guards and NaN pre-fill and timing)") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  const int sm = device_sm(*cuda);
  // Uniform [-1, 1) fp32 values: none is exact in f16/bf16/tf32/e4m3/e5m2 storage (the runner
  // rounds them), so the error is non-zero; the independent gate is rtol = max(2^-23,
  // 4 (sqrt(K)(u_A + u_B) + acc)), the reference course's gate for each storage format.
  const Problem p = test::uniform_problem(131, 137, 1000, f32, test::seed() + 101);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  for (const char* name : kMmaKernels) {
    auto k = make(name);
    CAPTURE(name);
    const CaseResult r = run(*k, p, ref, *cuda);
    INFO(r.reason);
    if (sm < needed_sm(name)) {
      CHECK(r.status == CaseStatus::NotSupported);
      continue;
    }
    std::printf("%-40s max|err| %.4g  gate fraction %.4g  median %.4f ms over %d runs\n", name, r.metrics.max_abs,
                r.gate_fraction, r.time_ms_median, r.timed_runs);
    CHECK(r.status == CaseStatus::Pass);
    CHECK(r.metrics.guard_violations == 0);
    CHECK(r.metrics.unwritten == 0);
    CHECK(r.metrics.nonfinite == 0);
    CHECK(r.metrics.deterministic);
    CHECK(r.timed_runs == 10);
    CHECK(r.time_ms_median > 0);
    CHECK(r.metrics.max_abs > 0);  // inputs forced rounding: the test can fail
  }
}

TEST_CASE("mma: FP8 promotion to fp32 every 128 products at K = 4096 is not less accurate than no promotion") {
  auto cuda = make_cuda_api();
  REQUIRE(cuda);
  if (device_sm(*cuda) < 89) {
    CHECK_FALSE(make("gemm_e4m3_f32acc_mma_sm89")->can_implement(64, 64, 4096).ok);
    return;
  }
  const std::int64_t K = 4096;
  for (const Format* fmt : {&e4m3, &e5m2}) {
    CAPTURE(fmt->tag);
    auto plain = fp8_kernel(*fmt, 0);
    auto promoted = fp8_kernel(*fmt, 128);
    // (1) Inputs exact in the FP8 format: the reference is the exact product of the values the
    // tensor cores see, so the error is the accumulation's alone. (2) fp32 inputs (storage rounding
    // on top, identical for both kernels): printed.
    const Problem exact_in = test::uniform_problem(128, 128, K, *fmt, test::seed() + 17);
    const Problem f32_in = test::uniform_problem(128, 128, K, f32, test::seed() + 17);
    for (const Problem* p : {&exact_in, &f32_in}) {
      const GemmRef ref = gemm_reference(p->a.view(), p->b.view());
      const CaseResult u = run(*plain, *p, ref, *cuda);
      const CaseResult q = run(*promoted, *p, ref, *cuda);
      REQUIRE(u.status == CaseStatus::Pass);
      REQUIRE(q.status == CaseStatus::Pass);
      std::printf("%s inputs %-5s K=%lld: max|err| without promotion %.6g, promoted every 128: %.6g (ratio %.3g)\n",
                  std::string(fmt->tag).c_str(), std::string(p->source->tag).c_str(), static_cast<long long>(K), u.metrics.max_abs, q.metrics.max_abs,
                  q.metrics.max_abs / u.metrics.max_abs);
      if (p != &exact_in) continue;
      // On sm_89 the FP8 MMA keeps ~13 fraction bits, truncated; on sm_90 mma.sync FP8 runs as fp16
      // MMAs on the fp32 accumulator, which truncates too (docs/kernels.md). Either way the unpromoted
      // running sum collects truncation over K/16 or K/32 MMAs, and promotion every 128 products
      // limits that to 8 (or 4) MMAs on a small partial sum: the promoted error must not be larger.
      // Should a device's accumulator round to nearest in full fp32, the unpromoted error stays within
      // the probabilistic fp32 bound 4 sqrt(K) 2^-24 max|ref|, promotion has nothing to repair, and
      // only that bound is checked for the promoted kernel.
      const double fp32_level = 4 * std::sqrt(static_cast<double>(K)) * 0x1p-24 * u.metrics.ref_max_abs;
      if (u.metrics.max_abs <= fp32_level) {
        MESSAGE("the unpromoted FP8 accumulation is at fp32 level on this device: promotion has nothing to repair");
        CHECK(q.metrics.max_abs <= fp32_level);
      } else {
        CHECK(q.metrics.max_abs <= u.metrics.max_abs);
      }
    }
  }
}
