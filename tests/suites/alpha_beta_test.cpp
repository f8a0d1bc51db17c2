// tests/suites/alpha_beta_test.cpp — GEMMs as libraries call them, slice 2 of issue 37: D = alpha (A B) + beta C.
// The epilogue's per-element allowance (against binary32 arithmetic done here, independently of fpcert's rounding
// code), the CPU models' epilogue bit for bit against a float loop written here, the ab_* cases of the certify suite,
// the faults beta0_reads_c and beta_ignored, and a kernel that passes the old suite and fails the new one (it
// writes D before it reads C: right out of place, wrong in place).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "base/codes.hpp"
#include "generators/generate.hpp"
#include "kernels/register.hpp"
#include "oracle/round.hpp"
#include "plugin/loader.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/alpha_beta.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"
#include "tests/suites/tc_bitwise_support.hpp"  // card_of, cards, Installed

using namespace fpcert;

namespace {

const char* kAbCases[] = {"ab_general", "ab_beta0", "ab_alpha0", "ab_beta1", "ab_inplace"};

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

bool failed(const CaseResult& r, CheckKind k) {
  return std::any_of(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return c.kind == k && !c.passed; });
}

/// The bug of a library that writes D = alpha acc first and adds beta C afterwards, reading C from c_in: right when C
/// has a buffer of its own, wrong in place (C's buffer then holds alpha acc already). Host memory, fp32 C.
class WritesDFirst final : public GemmKernel {
 public:
  WritesDFirst() : inner_(make_gemm_kernel("model_gemm_f32_strided")) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "writes alpha AB into D, then adds beta C read from c_in"; }
  Backend backend() const override { return Backend::Cpu; }
  const KernelTraits& traits() const override { return inner_->traits(); }
  void run(const GemmOperands& ops) override {
    GemmOperands o = ops;
    o.beta = 0;
    o.c_in = nullptr;
    inner_->run(o);  // D = RN(alpha acc)
    if (ops.beta == 0) return;
    auto* d = static_cast<float*>(ops.c);
    const auto* c = static_cast<const float*>(ops.c_in);
    for (std::int64_t i = 0; i < ops.m; ++i)
      for (std::int64_t j = 0; j < ops.n; ++j) {
        const std::int64_t x = ops.c_layout == Layout::RowMajor ? i * ops.ldc + j : j * ops.ldc + i;
        d[x] = d[x] + static_cast<float>(ops.beta) * c[x];
      }
  }

 private:
  std::string name_ = "test_writes_d_first";
  std::unique_ptr<GemmKernel> inner_;
};

}  // namespace

TEST_CASE("the epilogue's allowance: a hand value, and binary32 RN(RN(alpha acc) + RN(beta c)) and its fma forms within it") {
  // Hand value: E = 0, |ref'| = 1, |c| = 1, alpha = 0.5, beta = 2, no output rounding: X = (2u + u^2) (0.5 + 2) + 2 eta.
  const double u = 0x1p-24, eta = 0x1p-149;
  const double want = ((2 * u + u * u) * 2.5 + 2 * eta) * (1 + 0x1p-48);
  CHECK(alpha_beta_allowed(0.5, 2, 0, 1, 1, 2.5, u, eta, 0, 0) == want);
  // beta = 0: C (NaN here) takes no part.
  CHECK(alpha_beta_allowed(0.5, 0, 0, 1, NAN, 0.5, u, eta, 0, 0) == ((2 * u + u * u) * 0.5 + 2 * eta) * (1 + 0x1p-48));
  // The float arithmetic of this file (IEEE binary32, round to nearest) against the exact alpha acc + beta c (a
  // double two-sum of two exact products of 24-bit values: exact as hi + lo). E = 0: acc is the centre itself.
  std::mt19937 g(7);
  std::uniform_real_distribution<float> d(-1, 1);
  double worst = 0;
  for (int it = 0; it < 200000; ++it) {
    const float acc = d(g) * std::ldexp(1.0f, static_cast<int>(g() % 20) - 10), c = d(g);
    const float alpha = d(g) * 3, beta = d(g) * 3;
    const double p = static_cast<double>(alpha) * acc, q = static_cast<double>(beta) * c;  // exact
    const double hi = p + q, lo = (p - (hi - (hi - p))) + (q - (hi - p));                  // two-sum: exact = hi + lo
    const float sep = (alpha * acc) + (beta * c);  // binary32 RN(RN(alpha acc) + RN(beta c)): the build has -ffp-contract=off
    const float f1 = std::fma(alpha, acc, beta * c), f2 = std::fma(beta, c, alpha * acc);
    const double allowed = alpha_beta_allowed(alpha, beta, 0, std::fabs(acc), std::fabs(c), std::fabs(hi), u, eta, 0, 0);
    for (float got : {sep, f1, f2}) {
      const double err = std::fabs((static_cast<double>(got) - hi) - lo);
      CHECK_MESSAGE(err <= allowed, "alpha ", alpha, " acc ", acc, " beta ", beta, " c ", c);
      worst = std::max(worst, err / allowed);
    }
  }
  // Not vacuous: the worst case uses a good part of the allowance (the bound is 2u-ish, the roundings reach ~1u).
  CHECK(worst > 0.25);
}

TEST_CASE("the CPU models' epilogue equals a binary32 loop written here, bit for bit") {
  const Problem p = generate("uniform:m=9,n=7,k=33,seed=3");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto k = make_gemm_kernel("model_gemm_f32_strided");
  CaseSetup s;
  s.suite = "alpha_beta_test_suite";
  s.case_id = "alpha_beta_model_bits";
  s.problem = &p;
  s.ref = &ref;
  for (const bool in_place : {false, true}) {
    s.alpha_beta = AlphaBetaCase{true, 0.7, -1.3, in_place, 99};
    std::vector<double> out;
    RunOptions o;
    o.output = &out;
    auto api = make_host_api();
    const CaseResult r = run_case(*k, s, *api, o);
    INFO(r.reason);
    CHECK(r.status == CaseStatus::Pass);
    REQUIRE(out.size() == 63);
    AlphaBetaCase ab = s.alpha_beta;
    const std::vector<double> c = alpha_beta_c(ab, f32, 9, 7);
    const float alpha = 0.7f, beta = -1.3f;  // the scalars rounded to fp32, as the runner gives them
    for (std::int64_t i = 0; i < 9; ++i)
      for (std::int64_t j = 0; j < 7; ++j) {
        float acc = 0;
        for (std::int64_t t = 0; t < 33; ++t) acc = std::fma(static_cast<float>(p.a(i, t)), static_cast<float>(p.b(t, j)), acc);
        const float t1 = alpha * acc, t2 = beta * static_cast<float>(c[static_cast<std::size_t>(i * 7 + j)]);
        const float want = t1 + t2;
        CHECK(std::bit_cast<std::uint32_t>(static_cast<float>(out[static_cast<std::size_t>(i * 7 + j)])) == std::bit_cast<std::uint32_t>(want));
      }
  }
}

TEST_CASE("certify's alpha/beta cases: the declaring models pass, the others are not supported") {
  for (const char* id : kAbCases) {
    INFO(id);
    for (const char* kn : {"model_gemm_f32_strided", "model_gemm_f16_f32acc", "model_gemm_bf16_f32acc"}) {
      const CaseResult s = certify_case(kn, id);
      INFO(kn, ": ", s.reason);
      CHECK(s.status == CaseStatus::Pass);
      CHECK_FALSE(s.vacuous);
      CHECK(std::find(s.coverage.begin(), s.coverage.end(), "epilogue.alpha_beta") != s.coverage.end());
    }
    const CaseResult r = certify_case("model_gemm_f32", id);
    CHECK(r.status == CaseStatus::NotSupported);
    CHECK(r.reason.find("does not declare alpha/beta") != std::string::npos);
  }
}

TEST_CASE("beta0_reads_c and beta_ignored: killed by the cases that see them, dormant elsewhere, not applicable without alpha/beta") {
  for (Fault f : {Fault::Beta0ReadsC, Fault::BetaIgnored}) {
    CHECK_FALSE(fault_not_applicable(f, make_gemm_kernel("model_gemm_f32")->traits()).empty());
    CHECK(fault_not_applicable(f, make_gemm_kernel("model_gemm_f32_strided")->traits()).empty());
    // fp64 with alpha/beta declared (cuBLAS DGEMM): the ab_* cases are not supported for it, so neither fault can show
    KernelTraits f64ab = make_gemm_kernel("model_gemm_f64")->traits();
    f64ab.alpha_beta = true;
    CHECK(!alpha_beta_unsupported(f64ab).empty());
    CHECK(fault_not_applicable(f, f64ab).find("at most 26 significant bits") != std::string::npos);
  }
  const std::string rc = register_gemm_mutant("model_gemm_f32_strided", Fault::Beta0ReadsC);
  // The old suite's call (alpha 1, beta 0, no C) and beta != 0: the fault never shows.
  CHECK(certify_case(rc, "uniform").status == CaseStatus::Pass);
  CHECK(certify_case(rc, "ab_general").status == CaseStatus::Pass);
  const CaseResult b0 = certify_case(rc, "ab_beta0");
  CHECK(b0.status == CaseStatus::Fail);
  CHECK(failed(b0, CheckKind::Nonfinite));
  const std::string bi = register_gemm_mutant("model_gemm_f32_strided", Fault::BetaIgnored);
  CHECK(certify_case(bi, "uniform").status == CaseStatus::Pass);
  CHECK(certify_case(bi, "ab_beta0").status == CaseStatus::Pass);
  for (const char* id : {"ab_general", "ab_alpha0", "ab_beta1", "ab_inplace"}) {
    const CaseResult r = certify_case(bi, id);
    INFO(id);
    CHECK(r.status == CaseStatus::Fail);
    CHECK(failed(r, CheckKind::Envelope));
  }
}

TEST_CASE("a kernel that writes D before it reads C: passes the old suite and C apart, fails in place") {
  register_kernel("test_writes_d_first", Backend::Cpu, false, [] { return std::make_unique<WritesDFirst>(); });
  for (const char* id : {"uniform", "shape_primes", "layout_tn", "ab_general", "ab_beta0", "ab_alpha0"}) {
    const CaseResult r = certify_case("test_writes_d_first", id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
  const CaseResult r = certify_case("test_writes_d_first", "ab_inplace");
  CHECK(r.status == CaseStatus::Fail);
  CHECK(failed(r, CheckKind::Envelope));
}

TEST_CASE("the example CPU plugin (ABI minor 5) declares alpha/beta and passes every ab_* case") {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libfpcert_example_cpu_plugin.so");
  REQUIRE(make_gemm_kernel("example_gemm_f16_f32acc"));
  CHECK(make_gemm_kernel("example_gemm_f16_f32acc")->traits().alpha_beta);
  for (const char* id : kAbCases) {
    const CaseResult r = certify_case("example_gemm_f16_f32acc", id);
    INFO(id, ": ", r.reason);
    CHECK(r.status == CaseStatus::Pass);
  }
}

TEST_CASE("alpha/beta grades use the installed tensor-core cards: cuBLASLt's FP8 answer at (119, 10) of ab_general_nt_aligned") {
  // The device's answer (cublaslt_e4m3_scaled_bf16out on an H200 and an H100, docs/epilogue.md, "FP8 accumulation on the
  // H200"): bf16 0x3ecb at (119, 10) of the case at its device shape, where the exact D = 0.3995 rounds to 0x3ecd. The
  // declared arithmetic gives it too: blocks of 32 products + C with the Hopper FP8 card (MMA-Sim: 13 alignment bits,
  // block results to 13 bits toward zero), promoted to fp32 every 128 products, the epilogue RN(RN(alpha acc) + RN(beta
  // c)) in fp32, RN into bf16. Graded with fp32's nominal bits (what the alpha/beta grader used before it applied the
  // cards, as the plain grader does) that element is 1.48 x beyond the envelope; with the installed cards it passes.
  const Problem p = generate("uniform:m=128,n=80,k=256,seed=235");
  const std::int64_t m = p.m, n = p.n, k = p.k;
  KernelTraits t;  // what cuBLASLt's FP8 subjects declare (kernels/gemm/cublaslt/cublaslt_gemm.cu, lt_traits)
  t.a_input = t.b_input = t.a_operand = t.b_operand = &e4m3;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &bf16;
  t.promote_every = 128;
  t.promote_format = &f32;
  t.alpha_beta = true;
  t.sum_order.block_model.instruction = tc::tc_instructions_for(e4m3, f32);
  REQUIRE(t.sum_order.kind == OrderKind::Unknown);
  const AlphaBetaCase ab{true, 0.7, -1.3, false, 335};
  const std::vector<double> c = alpha_beta_c(ab, bf16, m, n);
  const double alpha = alpha_beta_scalar(ab.alpha, t), beta = alpha_beta_scalar(ab.beta, t);
  const FusedDotParams card = *tc::mma_sim_hopper(*tc::find_instruction("wgmma_e4m3_f32"));
  REQUIRE(card.align_bits == 13);
  const auto code = [](const Format& f, double v) { return static_cast<std::uint32_t>(round_double(f, v, Rounder::nearest(f)).code); };
  std::vector<std::uint64_t> d(static_cast<std::size_t>(m * n));
  std::vector<std::uint32_t> a(static_cast<std::size_t>(k)), b(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t q = 0; q < k; ++q) a[static_cast<std::size_t>(q)] = code(e4m3, p.a(i, q)), b[static_cast<std::size_t>(q)] = code(e4m3, p.b(q, j));
      float acc = 0;
      std::uint64_t blk = 0;  // the tensor core's accumulator, fp32 codes, from +0 after every promotion
      for (std::int64_t q = 0; q < k; q += 32) {
        blk = fused_dot(card, a.data() + q, b.data() + q, 32, blk);
        if ((q + 32) % 128 == 0) acc += std::bit_cast<float>(static_cast<std::uint32_t>(blk)), blk = 0;
      }
      const float z = static_cast<float>(alpha) * acc + static_cast<float>(beta) * static_cast<float>(c[static_cast<std::size_t>(i * n + j)]);
      d[static_cast<std::size_t>(i * n + j)] = code(bf16, z);
    }
  CHECK(d[119 * 80 + 10] == 0x3ecb);  // the device's answer, from the declared arithmetic
  AlphaBetaGrade g;
  g.problem = &p;
  g.traits = &t;
  g.alpha = alpha;
  g.beta = beta;
  g.c = &c;
  g.codes = &d;
  CaseResult nominal;
  grade_alpha_beta(g, nominal);
  CHECK(failed(nominal, CheckKind::Envelope));  // no cards installed: fp32's nominal bits
  CaseResult carded;
  {
    const test_tc::Installed on(test_tc::cards({test_tc::card_of("mma_e4m3_f32", card), test_tc::card_of("wgmma_e4m3_f32", card)}));
    grade_alpha_beta(g, carded);
  }
  CHECK_FALSE(failed(carded, CheckKind::Envelope));
  CHECK(std::any_of(carded.checks.begin(), carded.checks.end(), [](const CheckResult& x) { return x.kind == CheckKind::Envelope && x.passed; }));
  CHECK(std::any_of(carded.flags.begin(), carded.flags.end(), [](const std::string& f) { return f.find("the coarsest of the behaviour cards") != std::string::npos; }));
}
