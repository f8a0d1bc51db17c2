// tests/suites/fault_injectors_gpu_test.cpp — fault injectors around CUDA kernels (a SIMT kernel and an
// mma.sync tensor-core kernel): every buffer and edit in device memory through the DeviceApi. Each
// mutant equals the unmutated kernel on inputs changed by hand, the accumulator fault equals an MPFR
// recomputation from the kernel's own one-product calls, and the runtime faults fail run_case with the
// check of their kind; a mutation run on the device kills them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/gemm_call.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;
using test::GemmInputs;

namespace {

DeviceApi& device() {
  static const auto api = make_cuda_api();
  REQUIRE(api);
  return *api;
}

std::unique_ptr<GemmKernel> kernel(const std::string& name) {
  auto k = make_gemm_kernel(name);
  REQUIRE_MESSAGE(k, name);
  const Support s = k->can_implement(19, 18, 64);
  REQUIRE_MESSAGE(s.ok, name << ": " << s.reason);
  return k;
}

std::vector<std::uint64_t> honest(const std::string& name, const GemmInputs& in, std::int64_t lda = 0) {
  return test::gemm_call(*kernel(name), device(), in, lda);
}

std::vector<std::uint64_t> mutated(const std::string& name, Fault f, const GemmInputs& in, std::int64_t lda = 0) {
  auto m = make_fault_injector(kernel(name), f);
  REQUIRE(m->memory() == MemorySpace::Device);
  return test::gemm_call(*m, device(), in, lda);
}

const char* const kKernels[] = {"gemm_f32_tiled", "gemm_f16_f32acc_mma_sm80"};

}  // namespace

TEST_CASE("device: output faults change exactly the claimed elements") {
  for (const char* name : kKernels) {
    CAPTURE(name);
    const GemmInputs in = test::uniform_gemm_inputs(19, 18, 64, f32, test::seed());
    const auto h = honest(name, in);
    const auto z = mutated(name, Fault::ZeroRow, in);
    const auto u = mutated(name, Fault::OutputUlp, in);
    const auto w = mutated(name, Fault::WritesNan, in);
    for (std::int64_t i = 0; i < in.m; ++i)
      for (std::int64_t j = 0; j < in.n; ++j) {
        const auto x = static_cast<std::size_t>(i * in.n + j);
        CHECK(z[x] == (i == in.m - 1 ? 0 : h[x]));
        CHECK(w[x] == (x == 0 ? f32.canonical_nan_code() : h[x]));
        if (i == in.m / 2 && j == in.n / 2) CHECK((u[x] & f32.magnitude_mask()) == (h[x] & f32.magnitude_mask()) + 1);
        else CHECK(u[x] == h[x]);
      }
  }
}

TEST_CASE("device: input faults equal the kernel on inputs changed by hand") {
  for (const char* name : kKernels) {
    CAPTURE(name);
    const GemmInputs in = test::uniform_gemm_inputs(19, 18, 40, f32, test::seed() + 1);
    GemmInputs drop = in, trans = in, tail = in, rot = in, stride = in;
    const std::int64_t lda = 45;
    for (std::int64_t i = 0; i < in.m; ++i) {
      drop.A(i, in.k - 1) = 0;
      for (std::int64_t p = 0; p < in.k; ++p) {
        if (i >= 16) tail.A(i, p) = 0;
        rot.A(i, p) = in.A(i, (p + 1) % in.k);
        const std::int64_t off = i * in.k + p, row = off / lda, col = off % lda;
        stride.A(i, p) = col < in.k ? in.A(row, col) : 0.75;
      }
    }
    for (std::int64_t p = 0; p < in.k; ++p)
      for (std::int64_t j = 0; j < in.n; ++j) {
        trans.B(p, j) = in.b[static_cast<std::size_t>(j * in.k + p)];
        if (j >= 16) tail.B(p, j) = 0;
        rot.B(p, j) = in.B((p + 1) % in.k, j);
      }
    CHECK(mutated(name, Fault::DropLastProduct, in) == honest(name, drop));
    CHECK(mutated(name, Fault::TransposedB, in) == honest(name, trans));
    CHECK(mutated(name, Fault::TailTile, in) == honest(name, tail));
    CHECK(mutated(name, Fault::LdaIgnored, in, lda) == honest(name, stride));
    auto m = make_fault_injector(kernel(name), Fault::OneRunInN);
    CHECK(test::gemm_call(*m, device(), in) == honest(name, in));
    CHECK(test::gemm_call(*m, device(), in) == honest(name, rot));
  }
}

TEST_CASE("device: acc_rz on the tensor-core kernel is an fp32 round-toward-zero sum of its exact one-product results") {
  // fp16 operands: each one-product call of the mma kernel returns a*b exactly (22 bits in fp32), so the
  // mutant is acc = RZ_24(acc + a b) for k ascending; MPFR recomputes it.
  const GemmInputs in = test::uniform_gemm_inputs(17, 16, 48, f32, test::seed() + 2);
  const auto got = mutated("gemm_f16_f32acc_mma_sm80", Fault::AccTowardZero, in);
  const auto h = honest("gemm_f16_f32acc_mma_sm80", in);
  int differ = 0;
  for (std::int64_t i = 0; i < in.m; ++i)
    for (std::int64_t j = 0; j < in.n; ++j) {
      double acc = 0;
      for (std::int64_t p = 0; p < in.k; ++p) acc = test::mpfr_sum(acc, quantize(f16, in.A(i, p)) * quantize(f16, in.B(p, j)), 24, MPFR_RNDZ);
      const auto x = static_cast<std::size_t>(i * in.n + j);
      CHECK(to_double(f32, got[x]) == acc);
      differ += got[x] != h[x];
    }
  CHECK(differ > 0);
}

TEST_CASE("device: memory faults act on the caller's device buffers and fail run_case with their check") {
  const GemmInputs in = test::uniform_gemm_inputs(8, 8, 16, f32, test::seed() + 3);
  std::vector<std::uint8_t> after;
  auto clobber = make_fault_injector(kernel("gemm_f32_tiled"), Fault::ClobbersA);
  test::gemm_call(*clobber, device(), in, 0, &after);
  CHECK(to_double(f32, load_code(after.data(), 0, 4)) == -static_cast<double>(static_cast<float>(in.a[0])));

  const Problem p = test::uniform_problem(24, 24, 64, f32, test::seed() + 4);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  CaseSetup s;
  s.suite = "test";
  s.case_id = "device";
  s.problem = &p;
  s.ref = &ref;
  for (const auto& [f, kind] : {std::pair{Fault::UnwrittenRow, CheckKind::Unwritten}, std::pair{Fault::WritePastEnd, CheckKind::GuardOutput},
                                std::pair{Fault::OneRunInN, CheckKind::Nondeterministic}}) {
    CAPTURE(fault_info(f).id);
    auto m = make_fault_injector(kernel("gemm_f16_f32acc_mma_sm80"), f);
    const CaseResult r = run_case(*m, s, device(), RunOptions{});
    const auto fired = failed_checks(r);
    CHECK_MESSAGE(std::find(fired.begin(), fired.end(), kind) != fired.end(), r.reason);
  }
}

TEST_CASE("device: a mutation run on a CUDA kernel kills the runtime faults for their own fault") {
  const SuiteInfo suite{"mini", "one small case", [](const SuiteContext&) {
                          return std::vector<CaseSpec>{{"u", "uniform:m=64,n=64,k=128,seed=5", BoundVariant::Independent, ""}};
                        }};
  MutationOptions o;
  o.faults = {Fault::ZeroRow, Fault::WritesNan, Fault::UnwrittenRow, Fault::WritePastEnd, Fault::OneRunInN};
  const MutationScore s = run_mutation(suite, "gemm_f16_f32acc_mma_sm80", o);
  CHECK(s.invalid_cases.empty());
  for (const MutantResult& m : s.mutants) {
    CAPTURE(m.fault);
    INFO(m.detail);
    CHECK(m.outcome == MutantOutcome::Killed);
  }
}
