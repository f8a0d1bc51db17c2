// tests/plugin/eltwise_plugin_test.cpp — elementwise math kernels in plugins (ABI minor 11, docs/plugin.md "Elementwise
// kernels"): every malformed declaration refused with its field named; a table of minor 10 (its kernels end before the
// elementwise fields) cannot declare one; the traits read back as declared; the example plugin's kernels checked by the
// elementwise suite (the correct ones pass, the fast exp declared at 1 ulp is refused with an input named).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "plugin/eltwise_plugin.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/plugin_checks.hpp"

using namespace fpcert;
using test::expect_one_problem;
using test::table_problems;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

fpcert_status copy_run(void*, const fpcert_eltwise_args* a, void*, char*, size_t) {
  std::memcpy(a->y, a->x, static_cast<std::size_t>(a->count) * 4);
  return FPCERT_STATUS_OK;
}

fpcert_kernel exp_kernel(const char* name) {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_ELEMENTWISE;
  k.name = name;
  k.memory = FPCERT_MEMORY_HOST;
  k.eltwise.fn = FPCERT_ELTWISE_EXP;
  k.eltwise.in = FPCERT_FORMAT_F32;
  k.eltwise.out = FPCERT_FORMAT_F32;
  k.eltwise.claim = FPCERT_ELTWISE_ULP;
  k.eltwise.ulps = 2;
  k.eltwise.claim_source = "test";
  k.eltwise_run = copy_run;
  return k;
}

}  // namespace

TEST_CASE("elementwise declarations: a valid one validates, each broken field is named") {
  fpcert_kernel k = exp_kernel("ep_valid");
  CHECK(table_problems(&k).empty());
  SUBCASE("run missing") {
    k.eltwise_run = nullptr;
    expect_one_problem(k, {"eltwise_run is NULL"});
  }
  SUBCASE("unknown function, and the versions hint from a newer minor") {
    k.eltwise.fn = 99;
    expect_one_problem(k, {"eltwise.fn", "unknown value 99", "31 fmin"});
    expect_one_problem(k, {"eltwise.fn", "unknown value 99", "this fpcert speaks plugin ABI 1.", "the plugin was built against 1."}, FPCERT_PLUGIN_ABI_MINOR + 1);
  }
  SUBCASE("function 0: required") {
    k.eltwise.fn = 0;
    expect_one_problem(k, {"eltwise.fn", "required"});
  }
  SUBCASE("a format the check does not cover") {
    k.eltwise.in = FPCERT_FORMAT_E4M3;
    expect_one_problem(k, {"eltwise.in, eltwise.out", "e4m3 -> f32", "f32, f16 and bf16"});
  }
  SUBCASE("an unknown format value") {
    k.eltwise.out = 77;
    expect_one_problem(k, {"eltwise.out", "unknown format value 77"});
  }
  SUBCASE("a binary function in f16") {
    k.eltwise.fn = FPCERT_ELTWISE_POW;
    k.eltwise.in = k.eltwise.out = FPCERT_FORMAT_F16;
    expect_one_problem(k, {"pow is binary", "f32 x f32 -> f32"});
  }
  SUBCASE("negative and NaN ulps") {
    k.eltwise.ulps = -1;
    expect_one_problem(k, {"eltwise.ulps must be finite and >= 0", "-1"});
    k.eltwise.ulps = std::numeric_limits<double>::quiet_NaN();
    expect_one_problem(k, {"eltwise.ulps must be finite and >= 0", "nan"});
  }
  SUBCASE("a negative slope") {
    k.eltwise.ulp_slope = -0.5;
    expect_one_problem(k, {"eltwise.ulp_slope must be finite"});
  }
  SUBCASE("an empty domain, a NaN end, ends without has_domain, has_domain 2") {
    k.eltwise.has_domain = 1;
    k.eltwise.lo = 2, k.eltwise.hi = 1;
    expect_one_problem(k, {"eltwise.lo > eltwise.hi", "[2, 1] is empty"});
    k.eltwise.hi = std::numeric_limits<double>::quiet_NaN();
    expect_one_problem(k, {"must be numbers"});
    k.eltwise.has_domain = 0, k.eltwise.lo = -1, k.eltwise.hi = 1;
    expect_one_problem(k, {"must be 0 when has_domain is 0"});
    k.eltwise.has_domain = 2, k.eltwise.lo = k.eltwise.hi = 0;
    expect_one_problem(k, {"eltwise.has_domain"});
  }
  SUBCASE("a claim kind's unused fields nonzero") {
    k.eltwise.bound = 1e-6;  // ULP reads no bound
    expect_one_problem(k, {"eltwise.bound must be 0 for an ULP claim"});
    k.eltwise.bound = 0;
    k.eltwise.claim = FPCERT_ELTWISE_CORRECTLY_ROUNDED;  // ulps 2 left over
    expect_one_problem(k, {"eltwise.ulps must be 0 for a CORRECTLY_ROUNDED claim"});
    k.eltwise.claim = FPCERT_ELTWISE_ABSOLUTE;
    k.eltwise.bound = 0x1p-20, k.eltwise.ulp_slope = 1.173;
    expect_one_problem(k, {"eltwise.ulp_slope must be 0 for an ABSOLUTE claim"});
  }
  SUBCASE("an absolute or relative claim without a bound") {
    k.eltwise.claim = FPCERT_ELTWISE_RELATIVE;
    expect_one_problem(k, {"eltwise.bound must be finite and > 0"});
  }
  SUBCASE("an unknown claim kind") {
    k.eltwise.claim = 5;
    expect_one_problem(k, {"eltwise.claim", "unknown value 5", "4 relative"});
  }
  SUBCASE("unknown flag bits; __fdividef's results for another function") {
    k.eltwise.flags = 0x10;
    expect_one_problem(k, {"eltwise.flags: unknown bits 0x10"});
    k.eltwise.flags = FPCERT_ELTWISE_FDIVIDEF_LARGE;
    expect_one_problem(k, {"DIV only, not exp"});
  }
  SUBCASE("a second operand's domain on a unary function, an inverted one on a binary function") {
    k.eltwise.x2_hi = 1;
    expect_one_problem(k, {"eltwise.x2_lo and eltwise.x2_hi must be 0 for a unary function"});
    k.eltwise.fn = FPCERT_ELTWISE_DIV;
    CHECK(table_problems(&k).empty());  // [0, 1]
    k.eltwise.x2_lo = 2;
    expect_one_problem(k, {"0 <= x2_lo <= x2_hi", "[2, 1]"});
  }
  SUBCASE("no claim source") {
    k.eltwise.claim_source = nullptr;
    expect_one_problem(k, {"eltwise.claim_source is empty"});
    k.eltwise.claim_source = "";
    expect_one_problem(k, {"eltwise.claim_source is empty"});
  }
}

TEST_CASE("ABI minor 10 tables: their kernels end before the elementwise fields; an elementwise kernel needs minor 11") {
  static std::vector<unsigned char> bytes;
  const fpcert_plugin_info info = test::older_table(exp_kernel("ep_minor10"), 10, FPCERT_KERNEL_SIZE_MINOR10, bytes);
  const auto e = validate_plugin_info(&info, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("operation: 8 (elementwise) needs plugin ABI minor 11; the plugin was built against 1.10") != std::string::npos);
  CHECK(FPCERT_KERNEL_SIZE_MINOR10 < sizeof(fpcert_kernel));
}

TEST_CASE("elementwise declarations: the traits read back as declared, function values are fpcert's own") {
  fpcert_kernel k = exp_kernel("ep_traits");
  k.eltwise.fn = FPCERT_ELTWISE_DIV;
  k.eltwise.claim = FPCERT_ELTWISE_ULP;
  k.eltwise.ulps = 2, k.eltwise.ulp_slope = 0;
  k.eltwise.x2_lo = 0x1p-126, k.eltwise.x2_hi = 0x1p126;
  k.eltwise.flags = FPCERT_ELTWISE_FDIVIDEF_LARGE | FPCERT_ELTWISE_FTZ;
  REQUIRE(table_problems(&k).empty());
  EltwiseTraits t = eltwise_traits_from_abi(k);
  CHECK(t.fn == math::Fn::Div);
  CHECK(t.claim.kind == math::ClaimKind::Ulp);
  CHECK(t.claim.ulps == 2);
  CHECK(std::isinf(t.claim.lo));  // has_domain 0: every input
  CHECK(t.x2_lo == 0x1p-126);
  CHECK(t.x2_hi == 0x1p126);
  CHECK(t.fdividef_large_x2);
  CHECK(t.ftz);
  CHECK(!t.daz);
  k = exp_kernel("ep_traits2");
  k.eltwise.fn = FPCERT_ELTWISE_LOG;
  k.eltwise.claim = FPCERT_ELTWISE_ABSOLUTE;
  k.eltwise.bound = 0x1p-21, k.eltwise.ulps = 3;
  k.eltwise.has_domain = 1, k.eltwise.lo = 0.5, k.eltwise.hi = 2;
  REQUIRE(table_problems(&k).empty());
  t = eltwise_traits_from_abi(k);
  CHECK(t.claim.kind == math::ClaimKind::Absolute);
  CHECK(t.claim.lo == 0.5);
  CHECK(t.claim.hi == 2);
  CHECK(t.claim.ulps == 3);
  CHECK(t.x2_hi == std::numeric_limits<double>::infinity());  // both 0: every x2
  // Every function has one value and back; 0 is none.
  for (math::Fn f : math::kAllFns) CHECK(eltwise_fn_from_abi(eltwise_fn_to_abi(f)) == f);
  for (math::Fn f : math::kBinaryFns) CHECK(eltwise_fn_from_abi(eltwise_fn_to_abi(f)) == f);
  CHECK(!eltwise_fn_from_abi(0));
  CHECK(eltwise_fn_to_abi(math::Fn::GeluTanh) == FPCERT_ELTWISE_GELU_TANH);
}

TEST_CASE("the example elementwise plugin: the correct kernels pass the elementwise suite, the fast exp is refused naming an input") {
  const PluginSummary& s = load_plugin(kDir + "/libexample_eltwise_plugin.so");
  CHECK(s.eltwise_kernels.size() == 6);
  const auto e16 = make_eltwise_kernel("example_expf_f16");
  REQUIRE(e16);
  CHECK(e16->backend() == Backend::Plugin);
  CHECK(e16->eltwise_traits().in == &f16);
  const test::Tally ok = test::tally_suite("elementwise", {"example_expf_f32", "example_expf_f16", "example_sqrtf_f16", "example_gelu_tanh_f32",
                                                           "example_powf_f32"});
  CHECK(ok.pass == 8);  // f32: special and sample; f16: all_f16; pow: special_pairs and sample_pairs
  CHECK(ok.fail + ok.other == 0);
  const SuiteInfo* suite = find_suite("elementwise");
  REQUIRE(suite);
  const RunResult bad = run_suite(*suite, {"example_expf_fast_f32"}, SuiteRunOptions{});
  REQUIRE(!bad.cases.empty());
  for (const CaseResult& c : bad.cases) {
    INFO(c.case_id << " " << c.reason);
    CHECK(c.status == CaseStatus::Fail);
    CHECK(c.reason.find("at x = 0x") != std::string::npos);
  }
}
