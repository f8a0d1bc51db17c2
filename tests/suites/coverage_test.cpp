// tests/suites/coverage_test.cpp — the certify suite's coverage classes (docs/suites.md, "Coverage
// classes"): each bug of tests/plugin/fixtures/buggy_plugin.cpp passes the case the old suite had and
// fails the case of its class, while the correct kernel beside it passes both; and the floating-point
// environment fpcert computes in stays pinned whatever a plugin leaves behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfenv>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "base/fpenv.hpp"
#include "generators/generate.hpp"
#include "plugin/loader.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

void load_buggy() { load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cpu.so"); }

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

bool covers(const CaseResult& c, const std::string& cls) {
  return std::find(c.coverage.begin(), c.coverage.end(), cls) != c.coverage.end();
}

/// Set what a careless plugin might leave: round toward zero, and FTZ/DAZ where the CPU has them.
void break_fp_env() {
  std::fesetround(FE_TOWARDZERO);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | 0x8040u);
#endif
}

}  // namespace

TEST_CASE("every certify case names at least one coverage class, and every class of docs/suites.md has a case") {
  const auto kernel = make_gemm_kernel("model_gemm_f16_f32acc");
  REQUIRE(kernel);
  SuiteContext ctx;
  ctx.traits = &kernel->traits();
  const auto cases = find_suite("certify")->cases(ctx);
  std::vector<std::string> classes;
  for (const auto& c : cases) {
    CHECK_MESSAGE(!c.covers.empty(), c.id);
    classes.insert(classes.end(), c.covers.begin(), c.covers.end());
  }
  for (const char* want : {"shape.one", "shape.prime", "shape.tile_edge", "shape.tall_skinny", "shape.k_threshold", "shape.large_k",
                           "values.exact_storage", "values.all_positive", "values.subnormal", "values.signed_zero", "values.special",
                           "determinism.fill_device", "determinism.every_run", "layout.padded_ld", "layout.guards_ab",
                           "layout.inputs_unchanged", "layout.misaligned", "layout.poisoned_padding", "layout.misaligned_vector",
                           "layout.transposes", "epilogue.alpha_beta", "batch.strided"})
    CHECK_MESSAGE(std::find(classes.begin(), classes.end(), want) != classes.end(), want);
}

TEST_CASE("K tail read past the row: the old suite's K = 512 passes it, partial K tiles fail it, the correct tiled kernel passes") {
  load_buggy();
  CHECK(certify_case("bug_ktail_tiled16", "uniform").status == CaseStatus::Pass);  // the old suite: K a multiple of 16
  for (const char* id : {"tile16_pm1", "shape_primes", "shape_k1"}) {
    const CaseResult bad = certify_case("bug_ktail_tiled16", id);
    CHECK_MESSAGE(bad.status == CaseStatus::Fail, id, ": ", bad.reason);
    CHECK(covers(bad, std::string(id) == "shape_k1" ? "shape.one" : std::string(id) == "shape_primes" ? "shape.prime" : "shape.tile_edge"));
    const CaseResult good = certify_case("ok_tiled16", id);
    CHECK_MESSAGE(good.status == CaseStatus::Pass, id, ": ", good.reason);
  }
}

TEST_CASE("lda and ldb ignored: the runner's padded leading dimensions fail it on any case; the correct kernel passes") {
  load_buggy();
  // The old runner passed lda = k and ldb = n, so this kernel was right there by construction.
  const CaseResult bad = certify_case("bug_ignores_ld", "uniform");
  CHECK_MESSAGE(bad.status == CaseStatus::Fail, bad.reason);
  CHECK(covers(bad, "layout.padded_ld"));
  const CaseResult good = certify_case("ok_tiled16", "uniform");
  CHECK_MESSAGE(good.status == CaseStatus::Pass, good.reason);
  const CheckResult* in = find_check(good, CheckKind::InputsModified);
  REQUIRE(in);
  CHECK(in->passed);
  const CheckResult* g = find_check(good, CheckKind::GuardInputs);
  REQUIRE(g);
  CHECK(g->passed);
  const CaseResult mis = certify_case("ok_tiled16", "misaligned");
  CHECK_MESSAGE(mis.status == CaseStatus::Pass, mis.reason);
}

TEST_CASE("missing __syncthreads (stale K tile once the device is oversubscribed): small products pass, fill_device fails") {
  load_buggy();
  CHECK(certify_case("bug_racy_tile", "uniform").status == CaseStatus::Pass);  // 32 x 32: 4 output tiles, all resident
  const CaseResult bad = certify_case("bug_racy_tile", "fill_device");
  CHECK_MESSAGE(bad.status == CaseStatus::Fail, bad.reason);
  CHECK(covers(bad, "determinism.fill_device"));
  const CaseResult good = certify_case("ok_tiled16", "fill_device");
  CHECK_MESSAGE(good.status == CaseStatus::Pass, good.reason);
  CHECK(good.metrics.deterministic);
}

TEST_CASE("special values: a clamping epilogue and a NaN guard pass the old suite, values.special fails them by index; the correct "
          "kernel passes") {
  load_buggy();
  const CaseResult good = certify_case("ok_tiled16", "special_f32");
  REQUIRE_MESSAGE(good.status == CaseStatus::Pass, good.reason);
  CHECK(covers(good, "values.special"));
  const CheckResult* gs = find_check(good, CheckKind::SpecialValues);
  REQUIRE(gs);
  CHECK(gs->passed);
  // The case can fail: it holds NaN and infinite references, and elements whose fp32 partial sums overflow.
  CHECK(good.metrics.ref_overflow > 0);
  CHECK(good.achieved.at("special_inf_inputs") > 0);
  CHECK(good.achieved.at("special_nan_inputs") > 0);
  CHECK(good.achieved.at("overflow_elements") == 2);
  CHECK(good.tier == Tier::Bitwise);  // the sequential FMA kernel: +Inf where 3P overflows, bit for bit
  for (const char* bug : {"bug_clamp_epilogue", "bug_skip_nonfinite"}) {
    for (const char* old : {"uniform", "normal", "exp_uniform"})
      CHECK_MESSAGE(certify_case(bug, old).status == CaseStatus::Pass, bug, " ", old);  // the old suite: finite data only
    const CaseResult bad = certify_case(bug, "special_f32");
    CHECK_MESSAGE(bad.status == CaseStatus::Fail, bug);
    CHECK(covers(bad, "values.special"));
    const CheckResult* sv = find_check(bad, CheckKind::SpecialValues);
    REQUIRE(sv);
    CHECK_FALSE(sv->passed);
    CHECK(sv->first_index >= 0);  // the first offending element, by index
    CHECK_MESSAGE(sv->detail.find("should be") != std::string::npos, sv->detail);
  }
}

TEST_CASE("the FP environment: references and verdicts are the same after a plugin set FTZ/DAZ and round toward zero") {
  load_buggy();
  REQUIRE(fp_env_state().pinned());
  // The environment matters: the same spec generated under round toward zero differs (uniform values
  // would not: lo + (hi - lo) u is exact for [-1, 1); nor fp32 sources: the rounding into them is integer code).
  const std::string spec = "normal:m=8,n=8,k=100,seed=5,source=f64";  // polar method, detmath log: double roundings
  const Problem rn = generate(spec);
  break_fp_env();
  CHECK_FALSE(fp_env_state().pinned());
  const Problem rz = generate(spec);
  pin_fp_env();
  CHECK(fp_env_state().pinned());
  CHECK(rn.a.data != rz.a.data);

  const SuiteInfo suite{"fpenv", "", [](const SuiteContext&) {
                          return std::vector<CaseSpec>{
                              {"uniform", "uniform:m=16,n=16,k=100,seed=4", BoundVariant::Independent, ""},
                              {"sweep", "exp_sweep:m=16,n=16,k=64,seed=3,target=f32,b=identity", BoundVariant::Componentwise, ""}};
                        }};
  const RunResult before = run_suite(suite, {"ok_tiled16"}, {});
  // The plugin sets FTZ/DAZ and round toward zero on its way out; its call is wrapped, so nothing leaks.
  const RunResult mixed = run_suite(suite, {"fpenv_breaker", "ok_tiled16"}, {});
  CHECK(fp_env_state().pinned());
  // And whatever the thread's environment is when a suite starts, each case pins it.
  break_fp_env();
  const RunResult after = run_suite(suite, {"ok_tiled16"}, {});
  const FpEnvState left = fp_env_state();
  pin_fp_env();
  CHECK(left.pinned());
  REQUIRE(before.cases.size() == 2);
  REQUIRE(mixed.cases.size() == 4);
  REQUIRE(after.cases.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const CaseResult& b = before.cases[i];
    CHECK(b.status == CaseStatus::Pass);
    for (const CaseResult* o : {&mixed.cases[2 * i], &mixed.cases[2 * i + 1], &after.cases[i]}) {
      CHECK(o->status == CaseStatus::Pass);
      CHECK(o->metrics.max_abs == b.metrics.max_abs);  // bit for bit: same inputs, references and arithmetic
      CHECK(o->metrics.ref_max_abs == b.metrics.ref_max_abs);
      CHECK(o->gate_fraction == b.gate_fraction);
    }
  }
}
