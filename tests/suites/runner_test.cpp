// tests/suites/runner_test.cpp — honest models pass, by the runner alone (the faults each check refuses:
// tests/suites/fault_injectors_test.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "base/philox.hpp"
#include "generators/generate.hpp"
#include "kernels/kernel.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

using test::uniform_problem;

CaseResult run(const std::string& kernel, const Problem& p, const GemmRef& ref, BoundVariant v = BoundVariant::Independent,
               int worst_count = 5) {
  auto k = make_gemm_kernel(kernel);
  REQUIRE_MESSAGE(k, kernel);
  auto api = make_host_api();
  CaseSetup s;
  s.suite = "test";
  s.case_id = "c";
  s.problem = &p;
  s.ref = &ref;
  s.variant = v;
  RunOptions o;
  o.worst_count = worst_count;
  return run_case(*k, s, *api, o);
}

}  // namespace

TEST_CASE("honest CPU models pass the independent and worst-case gates; their errors are not zero") {
  const Problem pf32 = uniform_problem(24, 20, 256, f32, test::seed());
  const GemmRef ref = gemm_reference(pf32.a.view(), pf32.b.view());
  for (const auto& info : kernel_registry()) {
    if (info.mutant || info.backend != Backend::Cpu || info.operation != Operation::Gemm) continue;  // CPU GEMM models: no device needed
    const std::string& name = info.name;
    // The stand-ins for cuBLASLt's FP8 call take nt/c_row with M, N, K multiples of 16 only: this row-major 24 x 20
    // problem is "not supported" for them, as declared; the certify suite's FP8-shaped cases grade them (selftest).
    if (const auto k = make_gemm_kernel(name); !(k->traits().layouts & GemmLayout{}.bit()) || k->traits().shape_multiple > 1) {
      CHECK(run(name, pf32, ref).status == CaseStatus::NotSupported);
      continue;
    }
    CAPTURE(name);
    const CaseResult r = run(name, pf32, ref);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    CHECK(r.gate_fraction <= 1.0);
    if (r.kernel_traits.find("quantized to ") != std::string::npos) {
      // Block-scaled kernels are graded against the exact product of their quantized operands, which
      // products of few-bit elements (E2M1, E2M3, E3M2, int8) reach exactly in fp32; the inputs force
      // rounding in the quantizer instead, and the runner's flag counts it (docs/block_formats.md).
      bool rounded = false;
      for (const auto& f : r.flags) rounded = rounded || f.rfind("block-scaled:", 0) == 0;
      CHECK(rounded);
    } else {
      CHECK(r.metrics.max_abs > 0);  // inputs force rounding: a zero error would prove nothing
    }
    // A model that declares run-to-run nondeterminism (tests/suites/nondeterminism_test.cpp) passes with its spread.
    CHECK((r.metrics.deterministic || (r.determinism == "run_to_run" && r.spread)));
    CHECK(r.metrics.unwritten == 0);
    CHECK(r.metrics.guard_violations == 0);
    const CaseResult w = run(name, pf32, ref, BoundVariant::WorstCase);
    CHECK(w.status == CaseStatus::Pass);
  }
}

TEST_CASE("the fp16-exact inputs are flagged as not forcing storage rounding") {
  const Problem p = uniform_problem(8, 8, 64, f16, test::seed() + 3);
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  const CaseResult r = run("model_gemm_f16_f32acc", p, ref);
  REQUIRE(!r.flags.empty());
  CHECK(r.flags[0].find("inputs-do-not-force-rounding") != std::string::npos);
  const Problem p32 = uniform_problem(8, 8, 64, f32, 9);
  const CaseResult r32 = run("model_gemm_f32", p32, gemm_reference(p32.a.view(), p32.b.view()));
  CHECK(r32.flags.empty());  // fp32 kernel on fp32 data: storage equals the source, nothing to force
}

TEST_CASE("a kernel's input domain: cases outside it are not supported, naming the group that breaks it; inside they are graded") {
  // The BF16-on-FP16 fast paths state where their traits hold (kernels/emu/bf16_on_fp16.cpp): one
  // power-of-two scale per tensor / line / K-block is lossless only up to a span of 32 binades, and
  // the direct cast only inside fp16's range. The span tiles make each group span exactly s binades.
  struct Case {
    const char* kernel;
    const char* spec;
    const char* outside;  // nullptr: inside the domain (graded, and these pass); else a phrase of the reason
  };
  const Case cases[] = {
      {"model_gemm_bf16_on_f16_rowcol", "span:m=16,n=16,k=256,s=32,seed=5", nullptr},
      {"model_gemm_bf16_on_f16_rowcol", "span:m=16,n=16,k=256,s=33,seed=5", "of A spans 33 binades"},
      {"model_gemm_bf16_on_f16_tensor", "span:m=16,n=16,k=256,s=40,seed=6", "the nonzero entries of A span"},
      {"model_gemm_bf16_on_f16_kblock64", "span:m=16,n=16,k=256,s=29,block=64,shift=20,seed=7", nullptr},
      {"model_gemm_bf16_on_f16_rowcol", "span:m=16,n=16,k=256,s=29,block=64,shift=20,seed=7", "of A spans"},
      {"model_gemm_bf16_on_f16_kblock64", "span:m=16,n=16,k=256,s=40,block=64,seed=8", "K-block 0 (k = 0..63) spans 40 binades"},
      {"model_gemm_bf16_on_f16_auto", "span:m=16,n=16,k=256,s=40,block=64,seed=8", nullptr},
      {"model_gemm_bf16_on_f16_outlier", "span:m=16,n=16,k=256,s=40,seed=6", nullptr},
      {"model_gemm_bf16_on_f16_cast", "uniform:m=16,n=16,k=64,seed=9,source=bf16", nullptr},
      {"model_gemm_bf16_on_f16_cast", "exp_uniform:m=16,n=16,k=64,emin=-20,emax=20,seed=9,source=bf16", "beyond f16's largest finite value"},
  };
  auto api = make_host_api();
  for (const Case& c : cases) {
    CAPTURE(c.kernel);
    CAPTURE(c.spec);
    const Problem p = generate(c.spec);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    auto k = make_gemm_kernel(c.kernel);
    REQUIRE(k);
    CaseSetup s;
    s.suite = "test";
    s.case_id = "domain";
    s.problem = &p;
    s.ref = &ref;
    s.variant = BoundVariant::Componentwise;
    const CaseResult r = run_case(*k, s, *api, RunOptions{});
    INFO(r.reason);
    if (!c.outside) {
      CHECK(r.status == CaseStatus::Pass);
      continue;
    }
    CHECK(r.status == CaseStatus::NotSupported);
    CHECK(r.reason.find("outside the kernel's input domain") != std::string::npos);
    CHECK(r.reason.find(c.outside) != std::string::npos);
    // A study can grade it anyway: then the verdict is the gate's, not "not supported".
    RunOptions study;
    study.grade_outside_domain = true;
    const CaseResult g = run_case(*k, s, *api, study);
    CHECK(g.status != CaseStatus::NotSupported);
  }
}

TEST_CASE("--case: an id, or a prefix ending in *") {
  CHECK(case_matches("uniform", "uniform"));
  CHECK_FALSE(case_matches("uniform", "uniform_positive"));
  CHECK(case_matches("uniform*", "uniform_positive"));
  CHECK(case_matches("order_free_*", "order_free_e4m3"));
  CHECK_FALSE(case_matches("order_free_*", "tiny_f32"));
  CHECK(case_matches("*", "anything"));
  const SuiteInfo* s = find_suite("certify");
  REQUIRE(s);
  SuiteContext ctx;
  const KernelTraits t;
  ctx.traits = &t;
  int n = 0;
  for (const CaseSpec& c : s->cases(ctx)) n += case_matches("order_free_*", c.id);
  CHECK(n == 1);  // one order_free case per kernel, named after its storage format
}

namespace {
/// A device that only answers who it is (the stamp's facts), for run_environment.
class NamedDevice final : public DeviceApi {
 public:
  bool is_device() const override { return true; }
  void* alloc(std::size_t) override { return nullptr; }
  void free(void*) override {}
  void to_device(void*, const void*, std::size_t) override {}
  void to_host(void*, const void*, std::size_t) override {}
  void* stream() override { return nullptr; }
  void synchronize(double) override {}
  void timer_start() override {}
  double timer_stop_ms() override { return 0; }
  DeviceInfo info() const override {
    DeviceInfo d;
    d.name = "Test GPU";
    d.cc_major = 9;
    d.runtime = "13.0";
    return d;
  }
};
}  // namespace

TEST_CASE("run_environment: a part that ran nothing on the device keeps the device this process used") {
  // A --devices worker may hold none of a later suite's cases: its stamp for that suite must still name the device
  // (a child cannot read it once this process has used CUDA; the merge refused the run on the H100 before).
  const NamedDevice dev;
  const Environment first = run_environment("fpcert certify", &dev, true);
  CHECK(first.device == "Test GPU");
  const Environment later = run_environment("fpcert certify again", nullptr, true);
  CHECK(later.device == "Test GPU");
  CHECK(later.compute_capability == "9.0");
  CHECK(later.cuda_runtime == "13.0");
  CHECK(later.command == "fpcert certify again");
  // No device kernel in that part: the host's stamp, as before.
  CHECK(run_environment("fpcert certify", nullptr, false).device == "host CPU");
}

TEST_CASE("the worst elements: the first worst_count of the whole ranking (largest fraction first, then smallest index)") {
  // The grader keeps each chunk's few worst and leaves out, unsorted, an element that cannot rank (suites/verdict/
  // grade.cpp); asking for every element keeps them all, so its first five are the ranking's. 200 x 200: three chunks.
  // Uniform fp16 inputs: distinct fractions; integer inputs into fp32: every error 0, the index alone decides.
  for (const bool ties : {false, true}) {
    CAPTURE(ties);
    const Problem p = ties ? test::integer_problem(200, 200, 16, test::seed()) : uniform_problem(200, 200, 64, f32, test::seed());
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    const char* kernel = ties ? "model_gemm_f32" : "model_gemm_f16_f32acc";
    const CaseResult five = run(kernel, p, ref, BoundVariant::Independent, 5);
    const CaseResult all = run(kernel, p, ref, BoundVariant::Independent, 200 * 200);
    REQUIRE(five.worst.size() == 5);
    REQUIRE(all.worst.size() == 200 * 200);
    for (std::size_t q = 1; q < all.worst.size(); ++q) {  // the whole ranking, in order
      const double prev = all.worst[q - 1].err / all.worst[q - 1].allowed, cur = all.worst[q].err / all.worst[q].allowed;
      const std::int64_t pi = all.worst[q - 1].i * 200 + all.worst[q - 1].j, ci = all.worst[q].i * 200 + all.worst[q].j;
      if (all.worst[q - 1].err == 0 && all.worst[q].err == 0) REQUIRE(pi < ci);
      else REQUIRE((prev > cur || (prev == cur && pi < ci)));
    }
    for (std::size_t q = 0; q < 5; ++q) {
      CHECK(five.worst[q].i == all.worst[q].i);
      CHECK(five.worst[q].j == all.worst[q].j);
      CHECK(five.worst[q].err == all.worst[q].err);
    }
    if (ties) CHECK(all.worst[4].err == 0);
    else CHECK(all.worst[0].err > 0);
  }
}
