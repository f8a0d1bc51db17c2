// tests/suites/block_scaled_test.cpp — block-scaled kernels through the runner: graded against the exact
// product of their quantized operands; honest models pass the block-scaled suite, and every block mutant
// (scale exponent off by one, A/B scales swapped, emax never subtracted, round() for rceil's ceil()) is
// refused, each by the case built for it.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "generators/generate.hpp"
#include "kernels/block/block_scaled.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/verdict/block_reference.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/run_case.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

std::map<std::string, CaseResult> run(const std::string& kernel) {
  const SuiteInfo* suite = find_suite("block-scaled");
  REQUIRE(suite != nullptr);
  SuiteRunOptions o;
  const RunResult r = run_suite(*suite, {kernel}, o);
  std::map<std::string, CaseResult> by_id;
  for (const auto& c : r.cases) by_id[c.case_id] = c;
  return by_id;
}

}  // namespace

TEST_CASE("block-scaled suite: honest models pass with a gate that is not vacuous") {
  for (const std::string k : {"model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc", "model_gemm_mxfp8_e5m2_floor_blocksum_f32acc",
                              "model_gemm_mxfp4_rceil_deqbf16_f32acc", "model_gemm_mxint8_floor_blocksum_f32acc",
                              "model_gemm_nvfp4_even_deqbf16_f32acc", "model_gemm_nvfp4_even_blocksum_f32acc"}) {
    CAPTURE(k);
    // E4M3 products carry 8 bits and their exponents spread over 2 x 17 binades, so an fp32 sum of 512 or 1024
    // of them rounds; E2M1, int8 and E5M2 block sums with shared scales can be exact in fp32, and an exact
    // result is then right, not a test that cannot fail (the quantizer's rounding is what the flag counts).
    const bool rounds = k == "model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc";
    for (const auto& [id, c] : run(k)) {
      CAPTURE(id);
      CAPTURE(c.reason);
      CHECK(c.status == CaseStatus::Pass);
      // The error is measured against the quantized operands' exact product: fp32 accumulation only, so
      // the gate is tight (rtol a few 2^-24 sqrt(K), far below any element format's u).
      CHECK(c.bound.rtol < 1e-4);
      if (rounds) CHECK(c.metrics.max_abs > 0);
      bool flagged = false;
      for (const auto& fl : c.flags) flagged = flagged || fl.rfind("block-scaled:", 0) == 0;
      CHECK(flagged);  // the quantizer rounded these inputs
    }
  }
}

TEST_CASE("block-scaled suite: every block mutant is refused by the case made for it") {
  const std::map<std::string, std::string> caught_by = {
      {"mutant_mxfp8_scale_off_by_one", "uniform"},
      {"mutant_mxfp8_swapped_scales", "span_kb_shift"},
      {"mutant_mxfp8_no_emax", "uniform"},
      {"mutant_mxfp4_rceil_rounds", "normal"},
  };
  for (const auto& [mut, case_id] : caught_by) {
    CAPTURE(mut);
    const auto res = run(mut);
    REQUIRE(res.count(case_id) == 1);
    CHECK(res.at(case_id).status == CaseStatus::Fail);
    CHECK(res.at(case_id).gate_fraction > 10);
  }
  // Swapped scales are invisible where every block of A and B has the same scale: uniform [-1, 1) blocks of
  // 32 all have amax in [1/2, 1) (probability 1 - 2^-32 each). That is why span_kb_shift exists.
  CHECK(run("mutant_mxfp8_swapped_scales").at("uniform").status == CaseStatus::Pass);
}

TEST_CASE("block reference: the dequantized operands and the quantizer's counts") {
  const Problem p = generate("uniform:m=3,n=2,k=40,seed=5");
  const KernelTraits t = block_gemm_traits(mxfp4, ScaleRule::Floor, BlockGemmPath::BlockSum);
  const BlockReference r = block_reference(t, p);
  CHECK(r.elements == 3 * 40 + 40 * 2);
  CHECK(r.blocks == 3 * 2 + 2 * 2);  // blocks of 32 along K = 40: two per line (32 + 8)
  CHECK(r.inexact > r.elements / 2);   // uniform fp32 values round into E2M1
  // |a - deq(a)| <= 2^-2 |a| + X / 4 for E2M1 with X = 2^(floor(log2 amax) - 2) <= amax / 4 (saturation
  // of floor: amax / X < 8 rounds to at most 8 and is clamped to 6, error < 2 X <= amax / 2).
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t q = 0; q < 40; ++q) {
      double amax = 0;
      for (std::int64_t x = (q / 32) * 32; x < std::min<std::int64_t>(40, (q / 32 + 1) * 32); ++x) amax = std::max(amax, std::fabs(p.a(i, x)));
      CHECK(std::fabs(p.a(i, q) - r.a(i, q)) <= amax / 2);
    }
}

TEST_CASE("block-scaled kernels on the certify suite: the operand step is no error source, and a case whose dequantized "
          "operands would round is not supported") {
  // Dequantized MX values are exact in bf16 except below its subnormal spacing (2^-133): MXFP8 E4M3's smallest
  // element 2^-9 times the smallest scale 2^-127 is 2^-136. The runner refuses such a case, as it refuses
  // overflow, so the evidence rule asks no case to show an operand rounding that cannot happen where it grades.
  for (const std::string k : {"model_gemm_mxfp4_floor_deqbf16_f32acc", "model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc"}) {
    CAPTURE(k);
    const auto kernel = make_gemm_kernel(k);
    REQUIRE(kernel);
    for (const std::string& src : error_sources(kernel->traits())) CHECK(src.rfind("operand", 0) != 0);
  }
  const SuiteInfo* certify = find_suite("certify");
  REQUIRE(certify != nullptr);
  SuiteRunOptions o;
  RunResult r = run_suite(*certify, {"model_gemm_mxfp4_floor_deqbf16_f32acc"}, o);
  require_evidence(r);
  int passed = 0;
  for (const auto& c : r.cases) {
    CAPTURE(c.case_id);
    CAPTURE(c.reason);
    CHECK(c.status != CaseStatus::Fail);
    passed += c.status == CaseStatus::Pass;
  }
  CHECK(passed > 20);

  // Blocks of A at the smallest scale with E4M3 subnormal elements (multiples of 2^-136), B large enough that the
  // products stay normal: the kernel would round A's operands, so the case is not for it; the same B times a
  // normal A is graded (and passes).
  const auto kernel = make_gemm_kernel("model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc");
  REQUIRE(kernel);
  const auto api = make_host_api();
  auto run_one = [&](const Problem& p) { return test::run_graded(*kernel, p, gemm_reference(p.a.view(), p.b.view()), *api); };
  Problem p = generate("uniform:m=4,n=4,k=32,seed=7");
  for (double& x : p.a.data) x = std::ldexp(std::nearbyint(std::ldexp(x, 8)), -136);  // |x| <= 2^-128: scale 2^-127
  for (double& x : p.b.data) x = std::ldexp(x, 100);
  const CaseResult tiny = run_one(p);
  CHECK(tiny.status == CaseStatus::NotSupported);
  CHECK(tiny.reason.find("cannot represent exactly") != std::string::npos);
  for (double& x : p.a.data) x = std::ldexp(x, 130);
  const CaseResult fine = run_one(p);
  CAPTURE(fine.reason);
  CHECK(fine.status == CaseStatus::Pass);
}
