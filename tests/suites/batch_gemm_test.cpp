// tests/suites/batch_gemm_test.cpp — strided batched GEMM (issue 37): the batch cases of the certify suite on the CPU
// models and the example plugin, each batch's output bit for bit against a binary32 loop written here on that batch's
// own inputs, the faults batch_stride_ignored and batch_last_dropped, a kernel that assumes packed batches (reads the
// poisoned gaps, writes C's), a kernel that does not declare batches ("not supported"), and the JSON of a case's batches.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "base/codes.hpp"
#include "generators/generate.hpp"
#include "kernels/register.hpp"
#include "plugin/loader.hpp"
#include "results/results_json.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/batch.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/certify_case.hpp"

using namespace fpcert;
using fpcert::test::certify_case;
using fpcert::test::failed;

namespace {

const char* kBatchCases[] = {"batch_strided", "batch_broadcast_b", "batch_broadcast_a", "batch_alpha_beta", "batch_transposed"};

/// model_gemm_f32 as a kernel that never declared batches (KernelTraits::batched false).
class Unbatched final : public GemmKernel {
 public:
  Unbatched() : inner_(make_gemm_kernel("model_gemm_f32")), traits_(inner_->traits()) { traits_.batched = false; }
  const std::string& name() const override { return name_; }
  std::string description() const override { return "model_gemm_f32 without strided batches"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return traits_; }
  void run(const GemmOperands& ops) override { inner_->run(ops); }

 private:
  std::string name_ = "test_unbatched";
  std::unique_ptr<GemmKernel> inner_;
  KernelTraits traits_;
};

/// The bug of a batched kernel that takes the batches as packed (stride = the matrix's rows x ld) whatever the strides
/// say: right for a caller that packs them, wrong with a gap between matrices (it reads A's and B's gaps, writes C's).
class AssumesPacked final : public GemmKernel {
 public:
  AssumesPacked() : inner_(make_gemm_kernel("model_gemm_f32")) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "strided batches taken as packed (stride = rows x ld)"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return inner_->traits(); }
  void run(const GemmOperands& ops) override {
    GemmOperands o = ops;
    if (o.batch > 1) {
      o.stride_a = o.stride_a ? ops.m * ops.lda : 0;  // row-major A: m rows of lda
      o.stride_b = o.stride_b ? ops.k * ops.ldb : 0;
      o.stride_c = ops.m * ops.ldc;
    }
    inner_->run(o);
  }

 private:
  std::string name_ = "test_assumes_packed";
  std::unique_ptr<GemmKernel> inner_;
};

}  // namespace

TEST_CASE("batch_spec: the seed field advanced by the batch index, a spec without a seed refused") {
  CHECK(batch_spec("uniform:m=3,n=4,k=5,seed=260", 0) == "uniform:m=3,n=4,k=5,seed=260");
  CHECK(batch_spec("uniform:m=3,n=4,k=5,seed=260", 4) == "uniform:m=3,n=4,k=5,seed=264");
  CHECK(batch_spec("uniform:seed=7,m=3", 2) == "uniform:seed=9,m=3");
  CHECK_THROWS_AS(batch_spec("ones:m=3", 1), InputError);
}

TEST_CASE("stack_batches: matrices one after another, gap rows of the fill between them, none after the last") {
  const std::vector<std::vector<std::uint8_t>> mats = {{1, 2, 3, 4}, {5, 6, 7, 8}};  // 2 x 2 of 1 byte each
  CHECK(stack_batches(mats, 2, 2, 1, 1, 0xEE) == std::vector<std::uint8_t>{1, 2, 3, 4, 0xEE, 0xEE, 5, 6, 7, 8});
  CHECK(stack_batches(mats, 2, 2, 1, 0, 0xEE) == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(batch_stride(2, 5, 1) == 15);
}

TEST_CASE("each batch's D equals a binary32 FMA loop on that batch's own inputs, bit for bit; the batches differ") {
  // model_gemm_f32: C[i][j] = fma(a, b, C) along K from +0 in fp32, the order the loop below writes out.
  const Problem p = generate("uniform:m=7,n=9,k=31,seed=5");
  for (const BatchCase bc : {BatchCase{4, 2, false, false}, BatchCase{3, 1, true, false}, BatchCase{3, 0, false, true}}) {
    const BatchProblems bp = batch_problems(p, bc);
    REQUIRE(bp.problems.size() == static_cast<std::size_t>(bc.count));
    // Not a test that cannot fail: A (unless broadcast) and B (unless broadcast) differ between batches, and the fp32
    // sums round (counted below: elements whose loop result is not the exact reference).
    CHECK((bp.problems[1].a.data != p.a.data) == !bc.broadcast_a);
    CHECK((bp.problems[1].b.data != p.b.data) == !bc.broadcast_b);
    int rounded = 0;
    auto k = make_gemm_kernel("model_gemm_f32");
    REQUIRE(k->traits().batched);
    CaseSetup s;
    s.suite = "batch_gemm_test_suite";
    s.case_id = "batch_model_bits";
    s.problem = &p;
    s.ref = &bp.refs[0];
    s.batch = bc;
    s.batch_problems = &bp.problems;
    s.batch_refs = &bp.refs;
    std::vector<double> out;
    RunOptions o;
    o.output = &out;
    auto api = make_host_api();
    const CaseResult r = run_case(*k, s, *api, o);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    REQUIRE(r.batches.size() == static_cast<std::size_t>(bc.count));
    REQUIRE(out.size() == static_cast<std::size_t>(bc.count * 63));
    for (std::int64_t b = 0; b < bc.count; ++b) {
      CHECK(r.batches[static_cast<std::size_t>(b)].passed);
      const Problem& q = bp.problems[static_cast<std::size_t>(b)];
      for (std::int64_t i = 0; i < 7; ++i)
        for (std::int64_t j = 0; j < 9; ++j) {
          float acc = 0;
          for (std::int64_t t = 0; t < 31; ++t) acc = std::fma(static_cast<float>(q.a(i, t)), static_cast<float>(q.b(t, j)), acc);
          const double got = out[static_cast<std::size_t>(b * 63 + i * 9 + j)];
          CHECK(std::bit_cast<std::uint32_t>(static_cast<float>(got)) == std::bit_cast<std::uint32_t>(acc));
          const RefValue& exact = bp.refs[static_cast<std::size_t>(b)].c[static_cast<std::size_t>(i * 9 + j)];
          rounded += static_cast<double>(acc) != exact.hi || exact.lo != 0;
        }
    }
    CHECK(rounded > 100);  // of 63 x batches elements: the reference is the oracle's, the loop's sums round
  }
}

TEST_CASE("certify's batch cases: the CPU models pass every batch, a kernel without batches is not supported") {
  register_kernel("test_unbatched", Backend::Cpu, false, [] { return std::make_unique<Unbatched>(); });
  for (const char* id : kBatchCases) {
    INFO(id);
    for (const char* kn : {"model_gemm_f32_strided", "model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_bf16_f32acc"}) {
      const CaseResult s = certify_case(kn, id);
      INFO(kn, ": ", s.reason);
      const KernelTraits t = make_gemm_kernel(kn)->traits();
      if ((std::string(id) == "batch_transposed" && t.layouts == kLayoutsRowMajor) || (std::string(id) == "batch_alpha_beta" && !t.alpha_beta)) {
        CHECK(s.status == CaseStatus::NotSupported);
        continue;
      }
      CHECK(s.status == CaseStatus::Pass);
      CHECK_FALSE(s.vacuous);
      CHECK(s.batches.size() >= 3);
      CHECK(std::all_of(s.batches.begin(), s.batches.end(), [](const BatchOutcome& b) { return b.passed && b.max_abs > 0; }));
      CHECK(std::find(s.coverage.begin(), s.coverage.end(), "batch.strided") != s.coverage.end());
    }
    const CaseResult r = certify_case("test_unbatched", id);
    CHECK(r.status == CaseStatus::NotSupported);
    // (batch_alpha_beta and batch_transposed: refused first for alpha/beta and the layout, which it lacks too)
    if (std::string(id) != "batch_alpha_beta" && std::string(id) != "batch_transposed")
      CHECK(r.reason.find("does not declare strided batches") != std::string::npos);
  }
  // The kernel without batches passes the plain cases: only the batch cases are beyond it.
  CHECK(certify_case("test_unbatched", "uniform").status == CaseStatus::Pass);
}

TEST_CASE("batch_stride_ignored and batch_last_dropped: refused by the batch cases, dormant elsewhere, not applicable without batches") {
  register_kernel("test_unbatched", Backend::Cpu, false, [] { return std::make_unique<Unbatched>(); });
  for (Fault f : {Fault::BatchStrideIgnored, Fault::BatchLastDropped}) {
    CHECK_FALSE(fault_not_applicable(f, make_gemm_kernel("test_unbatched")->traits()).empty());
    CHECK(fault_not_applicable(f, make_gemm_kernel("model_gemm_f32_strided")->traits()).empty());
    REQUIRE(find_fault(std::string(fault_info(f).id)));
  }
  const std::string si = register_gemm_mutant("model_gemm_f32_strided", Fault::BatchStrideIgnored);
  // One matrix per call (the old suite, alpha/beta, layouts) and a broadcast A: the fault never shows.
  for (const char* id : {"uniform", "shape_primes", "ab_general", "layout_tn", "batch_broadcast_a"}) {
    const CaseResult r = certify_case(si, id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
  for (const char* id : {"batch_strided", "batch_broadcast_b", "batch_alpha_beta", "batch_transposed"}) {
    const CaseResult r = certify_case(si, id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Fail);
    CHECK(std::any_of(fault_info(Fault::BatchStrideIgnored).expected.begin(), fault_info(Fault::BatchStrideIgnored).expected.end(),
                      [&](CheckKind k) { return failed(r, k); }));
    REQUIRE(r.batches.size() >= 3);
    CHECK(r.batches[0].passed);  // batch 0's A is the one every batch used
    CHECK_FALSE(r.batches[1].passed);
    CHECK(r.reason.starts_with("batch 1: "));
  }
  const std::string ld = register_gemm_mutant("model_gemm_f32_strided", Fault::BatchLastDropped);
  for (const char* id : {"uniform", "ab_general", "layout_tn"}) CHECK(certify_case(ld, id).status == CaseStatus::Pass);
  for (const char* id : kBatchCases) {
    const CaseResult r = certify_case(ld, id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Fail);
    CHECK(failed(r, CheckKind::Unwritten));
    REQUIRE(r.batches.size() >= 3);
    CHECK_FALSE(r.batches.back().passed);
    CHECK(std::all_of(r.batches.begin(), r.batches.end() - 1, [](const BatchOutcome& b) { return b.passed; }));
  }
}

TEST_CASE("a kernel that takes the batches as packed: passes one matrix per call, fails with gaps between batches") {
  register_kernel("test_assumes_packed", Backend::Cpu, false, [] { return std::make_unique<AssumesPacked>(); });
  for (const char* id : {"uniform", "shape_primes", "shape_k1"}) {  // one matrix per call: right
    const CaseResult r = certify_case("test_assumes_packed", id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
  const CaseResult r = certify_case("test_assumes_packed", "batch_strided");
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Fail);
  CHECK(failed(r, CheckKind::GuardOutput));  // it wrote into C's gap rows
  CHECK(std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) {
    return c.kind == CheckKind::GuardOutput && c.detail.find("gap between batches") != std::string::npos;
  }));
  CHECK_FALSE(r.batches[1].passed);  // batch 1 read A's and B's poisoned gaps (NaN) or batch 0's rows
}

TEST_CASE("the example CPU plugin (ABI minor 7) declares batches and passes every batch case") {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libfpcert_example_cpu_plugin.so");
  REQUIRE(make_gemm_kernel("example_gemm_f16_f32acc"));
  CHECK(make_gemm_kernel("example_gemm_f16_f32acc")->traits().batched);
  for (const char* id : kBatchCases) {
    const CaseResult r = certify_case("example_gemm_f16_f32acc", id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
}

TEST_CASE("a case's batches go through its JSON and back") {
  CaseResult c;
  c.suite = "certify";
  c.case_id = "batch_strided";
  c.kernel = "k";
  c.batches = {{true, 1.5e-7, 0.25, ""}, {false, 3.0, 7.5, "envelope exceeded"}};
  const CaseResult back = case_from_json(to_json(c));
  REQUIRE(back.batches.size() == 2);
  CHECK(back.batches[0].passed);
  CHECK(back.batches[0].max_abs == 1.5e-7);
  CHECK_FALSE(back.batches[1].passed);
  CHECK(back.batches[1].max_fraction == 7.5);
  CHECK(back.batches[1].reason == "envelope exceeded");
}
