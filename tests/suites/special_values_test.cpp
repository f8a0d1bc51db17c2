// tests/suites/special_values_test.cpp — the values.special class (docs/suites.md, "values.special"): the
// built-in models that take Inf and NaN pass their special_<storage> case in its strongest tier, the
// finite-only ones are "not supported" (never a pass), and the output faults it was written for are refused
// by the special_values check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "generators/generate.hpp"
#include "kernels/kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

/// The id of the certify suite's special-values case for this kernel (special_<storage>).
std::string special_case_id(const std::string& kernel) {
  const auto k = make_gemm_kernel(kernel);
  REQUIRE(k);
  SuiteContext ctx;
  ctx.traits = &k->traits();
  ctx.all = {ctx.traits};
  for (const CaseSpec& c : find_suite("certify")->cases(ctx))
    if (c.id.rfind("special_", 0) == 0) return c.id;
  FAIL("no special_ case for " << kernel);
  return "";
}

CaseResult run_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

const CheckResult& check(const CaseResult& c, CheckKind k) {
  const CheckResult* x = find_check(c, k);
  REQUIRE(x);
  return *x;
}

}  // namespace

TEST_CASE("models that take Inf and NaN pass special_<storage>, element by element as IEEE says") {
  for (const char* name : {"model_gemm_f32", "model_gemm_f32_pairwise", "model_gemm_f32_splitk4", "model_gemm_f32_muladd",
                           "model_gemm_tf32_f32acc", "model_gemm_f16_f32acc", "model_gemm_f16_f16acc", "model_gemm_bf16_f32acc",
                           "model_gemm_e4m3_f32acc", "model_gemm_e4m3_lpacc", "model_gemm_e5m2_f32acc", "model_gemm_1xbf16"}) {
    const std::string id = special_case_id(name);
    const CaseResult r = run_case(name, id);
    CHECK_MESSAGE(r.status == CaseStatus::Pass, name, " ", id, ": ", r.reason);
    CHECK_MESSAGE(check(r, CheckKind::SpecialValues).passed, name);
    CHECK_MESSAGE(r.metrics.ref_overflow > 0, name);  // non-finite references exist: the case can fail
  }
}

TEST_CASE("partial sums that overflow: the sequential fp16 accumulator gives +Inf, bitwise, where the exact sum is finite") {
  // special_f16 for an fp16 accumulator plants products 24576 x (+, +, +, -, -): 49152 fits fp16, 73728 does not.
  const std::string id = special_case_id("model_gemm_f16_f16acc");
  CHECK(id == "special_f16");
  const CaseResult r = run_case("model_gemm_f16_f16acc", id);
  REQUIRE_MESSAGE(r.status == CaseStatus::Pass, r.reason);
  CHECK(r.tier == Tier::Bitwise);
  CHECK(r.achieved.at("overflow_elements") == 2);
  CHECK(check(r, CheckKind::Nonfinite).passed);
  const bool flagged = std::any_of(r.flags.begin(), r.flags.end(), [](const std::string& f) { return f.rfind("partial-sum-overflow", 0) == 0; });
  CHECK(flagged);
}

TEST_CASE("finite-only kernels: special values are not supported, never a pass, and the special-value faults not applicable") {
  for (const char* name : {"model_gemm_3xtf32", "model_gemm_6xbf16", "model_gemm_mxfp8_e4m3_floor_deqbf16_f32acc",
                           "model_gemm_bf16_on_f16_rowcol"}) {
    const auto k = make_gemm_kernel(name);
    REQUIRE_MESSAGE(k, name);
    CHECK(k->traits().domain.finite_only);
    const CaseResult r = run_case(name, special_case_id(name));
    CHECK_MESSAGE(r.status == CaseStatus::NotSupported, name, ": ", to_string(r.status));
    CHECK_MESSAGE(r.reason.find("finite inputs only") != std::string::npos, r.reason);
    CHECK_FALSE(fault_not_applicable(Fault::NanToZero, k->traits()).empty());
    CHECK_FALSE(fault_not_applicable(Fault::InfToMax, k->traits()).empty());
  }
  // e4m3 holds NaN but no Inf, and 2^31 x 448^2 stays far inside fp32: no output can be infinite.
  const auto e4 = make_gemm_kernel("model_gemm_e4m3_f32acc");
  CHECK(fault_not_applicable(Fault::NanToZero, e4->traits()).empty());
  CHECK_FALSE(fault_not_applicable(Fault::InfToMax, e4->traits()).empty());
  const auto f16 = make_gemm_kernel("model_gemm_f16_f32acc");
  CHECK(fault_not_applicable(Fault::InfToMax, f16->traits()).empty());
}

TEST_CASE("nan_to_zero and inf_to_max are refused by the special_values check of special_<storage>") {
  for (const char* name : {"model_gemm_f32", "model_gemm_f16_f16acc", "model_gemm_bf16_f32acc"}) {
    const std::string id = special_case_id(name);
    for (Fault f : {Fault::NanToZero, Fault::InfToMax}) {
      const std::string m = register_mutant(name, f);
      const CaseResult r = run_case(m, id);
      CHECK_MESSAGE(r.status == CaseStatus::Fail, m);
      const CheckResult& sv = check(r, CheckKind::SpecialValues);
      CHECK_FALSE_MESSAGE(sv.passed, m);
      CHECK(sv.first_index >= 0);
    }
  }
}
