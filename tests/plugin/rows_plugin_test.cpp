// tests/plugin/rows_plugin_test.cpp — softmax and normalisation kernels in plugins (ABI minor 6, docs/plugin.md "Softmax
// and normalisation kernels"): every malformed declaration refused with its kernel and field named, the other kernels
// of the table untouched; a table of minor 5 (its kernels end before the new fields) still loads and cannot declare
// either operation; the traits read back as declared; the example plugin's correct kernels pass every case of their
// suite while its buggy ones (no max subtraction, one-pass variance under a two-pass declaration) are refused on the
// cases that expose them; a kernel returning an error status is reported, not crashed into; the black-box faults kill.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "oracle/math/expf_ops.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "plugin/rows_plugin.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/norm/norm_faults.hpp"
#include "suites/ops/softmax/softmax_faults.hpp"
#include "suites/run/suite.hpp"
#include "tests/plugin/fixtures/rows_descriptors.hpp"
#include "tests/support/plugin_checks.hpp"

using namespace fpcert;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

fpcert_status softmax_ok(void*, const fpcert_softmax_args*, void*, char*, size_t) { return FPCERT_STATUS_OK; }
fpcert_status norm_ok(void*, const fpcert_norm_args*, void*, char*, size_t) { return FPCERT_STATUS_OK; }
fpcert_status softmax_fails(void*, const fpcert_softmax_args*, void*, char* message, size_t capacity) {
  fpcert_plugin_set_message(message, capacity, "scratch allocation of 9 TB refused");
  return FPCERT_STATUS_INTERNAL;
}
fpcert_status norm_declines(void*, int64_t, int64_t cols, char* message, size_t capacity) {
  if (cols <= 64) return FPCERT_STATUS_OK;
  fpcert_plugin_set_message(message, capacity, "rows longer than 64 are not implemented");
  return FPCERT_STATUS_NOT_SUPPORTED;
}

/// A shifted fp32 softmax as the bitwise tier emulates it (oracle/softmax/softmax_emulate.cpp): z = RN(scale x) + mask, the
/// max by fmaxf, e_j = exp(z_j - max), the row sum sequential from +0, e_j / S; exp is expf_ops (kExact) or glibc's
/// exp rounded to fp32 (a kernel whose declaration of expf_ops is wrong about that one step).
template <bool kExact>
fpcert_status softmax_expf_ops(void*, const fpcert_softmax_args* a, void*, char*, size_t) {
  const auto* x = static_cast<const float*>(a->x);
  const auto* mask = static_cast<const float*>(a->mask);
  auto* out = static_cast<float*>(a->out);
  auto ex = [](float d) { return kExact ? math::expf_ops(d) : static_cast<float>(std::exp(static_cast<double>(d))); };
  for (std::int64_t r = 0; r < a->rows; ++r) {
    auto z = [&](std::int64_t j) {
      const float v = a->scale == 1.0f ? x[r * a->ldx + j] : a->scale * x[r * a->ldx + j];
      return mask ? v + mask[r * a->ldm + j] : v;
    };
    float m = -std::numeric_limits<float>::infinity(), s = 0.0f;
    bool nan = false;
    for (std::int64_t j = 0; j < a->cols; ++j) m = std::fmax(m, z(j)), nan = nan || std::isnan(z(j));
    for (std::int64_t j = 0; j < a->cols; ++j) s = m == -std::numeric_limits<float>::infinity() && !nan ? 0.0f : s + ex(z(j) - m);
    for (std::int64_t j = 0; j < a->cols; ++j) out[r * a->ldo + j] = s == 0.0f ? 0.0f : ex(z(j) - m) / s;  // s = 0: fully masked
  }
  return FPCERT_STATUS_OK;
}

fpcert_kernel softmax_kernel(const char* name) { return f32_softmax_descriptor(name, FPCERT_MEMORY_HOST, FPCERT_ELEM_FN_LIBM_F32, softmax_ok); }
fpcert_kernel norm_kernel(const char* name) {
  return f32_layernorm_descriptor(name, FPCERT_MEMORY_HOST, {FPCERT_ELEM_FN_STATED, 0, 1.5, 0, 0, "our rsqrt: 1.5 ulp, measured exhaustively"},
                                  norm_ok);
}

using test::expect_one_problem;
using test::Tally;
using test::tally_suite;

std::vector<std::string> problems(const fpcert_kernel* ks, std::uint32_t count = 1) { return test::table_problems(ks, count); }
void expect_one(const fpcert_kernel& k, std::initializer_list<const char*> fragments) { expect_one_problem(k, fragments); }
Tally run(const std::string& suite, const std::vector<std::string>& kernels, const std::string& only_case = "") {
  return tally_suite(suite, kernels, only_case);
}
bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("softmax declarations: a valid one validates, each broken field is named") {
  fpcert_kernel k = softmax_kernel("rw_smx_valid");
  CHECK(problems(&k).empty());
  SUBCASE("run missing") {
    k.softmax_run = nullptr;
    expect_one(k, {"softmax_run is NULL"});
  }
  SUBCASE("unknown fn") {
    k.softmax.fn = 9;
    expect_one(k, {"softmax.fn: unknown value 9 (valid in ABI minor 6: 1 softmax, 2 log_softmax)"});
  }
  SUBCASE("shift not stated") {
    k.softmax.shift = 0;
    expect_one(k, {"softmax.shift", "required"});
  }
  SUBCASE("a zero format") {
    k.softmax.sum_format = FPCERT_FORMAT_NONE;
    expect_one(k, {"softmax.sum_format: required"});
  }
  SUBCASE("a compute format without Inf") {
    k.softmax.compute_format = FPCERT_FORMAT_E4M3;
    k.softmax.exp = {FPCERT_ELEM_FN_STATED, 0, 1, 0, 0, "stated"};
    expect_one(k, {"softmax.compute_format", "no Inf"});
  }
  SUBCASE("masked-row policy not stated") {
    k.softmax.masked_rows = 0;
    expect_one(k, {"softmax.masked_rows: required, got value 0 (valid in ABI minor 6: 1 nan, 2 zero)"});
  }
  SUBCASE("an online softmax without its block") {
    k.softmax.shift = FPCERT_SOFTMAX_ONLINE;
    expect_one(k, {"softmax.sum_order must be BLOCKED"});
  }
  SUBCASE("a warp tree of 48 lanes") {
    k.softmax.sum_order = FPCERT_REDUCE_ORDER_WARP_TREE;
    k.softmax.sum_lanes = 48;
    expect_one(k, {"softmax.sum_lanes", "power of two"});
  }
  SUBCASE("an unknown exp implementation") {
    k.softmax.exp.implementation = 42;
    expect_one(k, {"softmax.exp.implementation", "unknown value 42"});
  }
  SUBCASE("a log preset for exp") {
    k.softmax.exp.implementation = FPCERT_ELEM_FN_CUDA_LOGF;
    expect_one(k, {"softmax.exp.implementation 5 is not an implementation of exp"});
  }
  SUBCASE("a preset with numbers of its own") {
    k.softmax.exp.ulps = 0.5;
    expect_one(k, {"softmax.exp", "preset implementation states no numbers"});
  }
  SUBCASE("a stated exp better than correctly rounded, without its source") {
    k.softmax.exp = {FPCERT_ELEM_FN_STATED, 0, 0.25, 0, 0, nullptr};
    const auto e = problems(&k);
    REQUIRE(e.size() == 2);
    CHECK(e[0].find("softmax.exp.ulps must be finite and >= 0.5") != std::string::npos);
    CHECK(e[1].find("softmax.exp.source is required") != std::string::npos);
  }
  SUBCASE("a preset with an fp16 compute format") {
    k.softmax.compute_format = FPCERT_FORMAT_F16;
    expect_one(k, {"presets are fp32 implementations", "f16"});
  }
  SUBCASE("a softmax with a log") {
    k.softmax.log.implementation = FPCERT_ELEM_FN_LIBM_F32;
    expect_one(k, {"softmax.log must be all zero for SOFTMAX"});
  }
  SUBCASE("a log-softmax without one") {
    k.softmax.fn = FPCERT_SOFTMAX_FN_LOG_SOFTMAX;
    expect_one(k, {"softmax.log.implementation", "required"});
  }
  SUBCASE("a log-softmax through a reciprocal") {
    k.softmax.fn = FPCERT_SOFTMAX_FN_LOG_SOFTMAX;
    k.softmax.log.implementation = FPCERT_ELEM_FN_LIBM_F32;
    k.softmax.reciprocal = 1;
    expect_one(k, {"softmax.reciprocal must be 0 for LOG_SOFTMAX"});
  }
  SUBCASE("accepts_mask not a boolean") {
    k.softmax.accepts_mask = 2;
    expect_one(k, {"softmax.accepts_mask must be 0 or 1"});
  }
}

TEST_CASE("norm declarations: a valid one validates, each broken field is named") {
  fpcert_kernel k = norm_kernel("rw_norm_valid");
  CHECK(problems(&k).empty());
  SUBCASE("run missing") {
    k.norm_run = nullptr;
    expect_one(k, {"norm_run is NULL"});
  }
  SUBCASE("unknown kind") {
    k.norm.kind = 3;
    expect_one(k, {"norm.kind", "unknown value 3"});
  }
  SUBCASE("unknown variance") {
    k.norm.variance = 7;
    expect_one(k, {"norm.variance", "unknown value 7"});
  }
  SUBCASE("combined Welford without its parts, and parts without combined Welford") {
    k.norm.variance = FPCERT_NORM_VARIANCE_WELFORD_COMBINED;
    expect_one(k, {"norm.welford_parts must be 1 .. 2^20", "got 0"});
    k.norm.variance = FPCERT_NORM_VARIANCE_TWO_PASS;
    k.norm.welford_parts = 32;
    expect_one(k, {"norm.welford_parts must be 0 unless"});
  }
  SUBCASE("combined Welford over a warp's lanes") {
    k.norm.variance = FPCERT_NORM_VARIANCE_WELFORD_COMBINED;
    k.norm.welford_parts = 32;
    CHECK(problems(&k).empty());
    const NormTraits t = norm_traits_from_abi(k);
    CHECK(t.arith.variance == NormVariance::WelfordCombined);
    REQUIRE(t.arith.welford.size() == 1);
    CHECK(t.arith.welford[0].parts == 32);
    CHECK(t.arith.welford[0].vec == 1);
  }
  SUBCASE("an RMSNorm with a variance algorithm") {
    k.norm.kind = FPCERT_NORM_RMSNORM;
    expect_one(k, {"norm.variance must be 0 for RMSNORM"});
  }
  SUBCASE("eps outside the square root") {
    k.norm.eps_placement = FPCERT_NORM_EPS_OUTSIDE_SQRT;
    expect_one(k, {"norm.eps_placement OUTSIDE_SQRT", "another function"});
  }
  SUBCASE("eps placement not stated") {
    k.norm.eps_placement = 0;
    expect_one(k, {"norm.eps_placement", "required"});
  }
  SUBCASE("every format zero") {
    k.norm.x_input = k.norm.compute_format = k.norm.acc_format = k.norm.out_format = FPCERT_FORMAT_NONE;
    CHECK(problems(&k).size() == 4);
  }
  SUBCASE("an rsqrt stated with an argument-dependent term") {
    k.norm.rsqrt.ulps_per_x = 1;
    expect_one(k, {"norm.rsqrt", "by ulps alone"});
  }
  SUBCASE("an exp preset for the rsqrt") {
    k.norm.rsqrt = {FPCERT_ELEM_FN_CUDA_EXPF, 0, 0, 0, 0, nullptr};
    expect_one(k, {"norm.rsqrt.implementation 3 is not an implementation of rsqrt"});
  }
}

TEST_CASE("a softmax kernel of the current minor whose struct_size ends before its fields: both problems named") {
  fpcert_kernel k = softmax_kernel("rw_short");
  k.struct_size = FPCERT_KERNEL_SIZE_MINOR5;
  const auto e = problems(&k);
  REQUIRE(e.size() == 2);
  CHECK(e[0].find("struct_size is " + std::to_string(FPCERT_KERNEL_SIZE_MINOR5)) != std::string::npos);
  CHECK(e[1].find("operation: 4 (softmax) but struct_size " + std::to_string(FPCERT_KERNEL_SIZE_MINOR5) +
                  " ends before the softmax and normalisation fields") != std::string::npos);
}

TEST_CASE("a malformed kernel is refused by name; the table's other kernels raise nothing") {
  fpcert_kernel ks[3] = {softmax_kernel("rw_tab_a"), softmax_kernel("rw_tab_bad"), norm_kernel("rw_tab_c")};
  ks[1].softmax.fn = 77;
  ks[1].softmax.exp.implementation = 0;
  const auto e = problems(ks, 3);
  REQUIRE(e.size() == 2);
  for (const auto& s : e) CHECK(s.find("kernel #1 'rw_tab_bad'") != std::string::npos);
}

TEST_CASE("ABI minor 5 tables: their kernels end before the softmax and norm fields; a softmax or norm there needs minor 6") {
  static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR5, 0);
  fpcert_kernel k = softmax_kernel("rw_minor5");
  k.struct_size = FPCERT_KERNEL_SIZE_MINOR5;
  std::memcpy(bytes.data(), &k, FPCERT_KERNEL_SIZE_MINOR5);
  fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 1, 0, reinterpret_cast<const fpcert_kernel*>(bytes.data())};
  info.abi_minor = 5;
  info.kernel_struct_size = FPCERT_KERNEL_SIZE_MINOR5;
  auto e = validate_plugin_info(&info, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("operation: 4 (softmax) needs plugin ABI minor 6; the plugin was built against 1.5") != std::string::npos);
  // A minor 5 reduction (fields of minor 3) in the same short table validates: older operations lose nothing.
  fpcert_kernel r{};
  r.struct_size = FPCERT_KERNEL_SIZE_MINOR5;
  r.operation = FPCERT_OPERATION_REDUCTION;
  r.name = "rw_minor5_sum";
  r.memory = FPCERT_MEMORY_HOST;
  r.reduce = {FPCERT_REDUCE_SUM, FPCERT_FORMAT_F32, FPCERT_FORMAT_NONE, FPCERT_ROUNDING_NEAREST_EVEN, FPCERT_FORMAT_F32,
              FPCERT_ROUNDING_NEAREST_EVEN, 1, FPCERT_REDUCE_ORDER_SEQUENTIAL, 0, 0, 0, FPCERT_FORMAT_F32, 0, 0, FPCERT_DETERMINISTIC, 0};
  r.reduce_run = [](void*, const fpcert_reduce_args*, void*, char*, size_t) -> fpcert_status { return FPCERT_STATUS_OK; };
  std::memcpy(bytes.data(), &r, FPCERT_KERNEL_SIZE_MINOR5);
  CHECK(validate_plugin_info(&info, "t").empty());
  // The stride says the minor: a minor 5 stride in a table of the current minor is refused.
  info.abi_minor = FPCERT_PLUGIN_ABI_MINOR;
  CHECK(!validate_plugin_info(&info, "t").empty());
  CHECK(FPCERT_KERNEL_SIZE_MINOR5 < sizeof(fpcert_kernel));
  CHECK(FPCERT_KERNEL_SIZE_MINOR5 >= FPCERT_KERNEL_SIZE_MINOR4 + sizeof(std::uint32_t) + sizeof(std::int32_t));
}

TEST_CASE("declared traits read back: presets as fpcert holds them, stated numbers as given") {
  fpcert_kernel k = softmax_kernel("rw_traits_smx");
  k.softmax.fn = FPCERT_SOFTMAX_FN_LOG_SOFTMAX;
  k.softmax.shift = FPCERT_SOFTMAX_ONLINE;
  k.softmax.sum_order = FPCERT_REDUCE_ORDER_BLOCKED;
  k.softmax.sum_block = 32;
  k.softmax.x_input = k.softmax.out_format = FPCERT_FORMAT_F16;
  k.softmax.masked_rows = FPCERT_MASKED_ROWS_NAN;
  k.softmax.exp.implementation = FPCERT_ELEM_FN_CUDA_FAST_EXPF;
  k.softmax.log = {FPCERT_ELEM_FN_STATED, 0, 3, 0, 1e-30, "our log: 3 ulp"};
  REQUIRE(problems(&k).empty());
  const SoftmaxTraits t = softmax_traits_from_abi(k);
  CHECK(t.arith.fn == SoftmaxFn::LogSoftmax);
  CHECK(t.arith.shift == SoftmaxShift::Online);
  CHECK(t.arith.block == 32);
  CHECK(t.arith.sum_order == ReduceOrder::blocked(32));
  CHECK(*t.x_input == f16);
  CHECK(*t.arith.out == f16);
  CHECK(t.masked_rows == MaskedRowPolicy::Nan);
  CHECK(t.arith.exp.ulps == exp_error_cuda_fast().ulps);
  CHECK(t.arith.exp.ulps_per_x == exp_error_cuda_fast().ulps_per_x);
  CHECK(t.arith.log.ulps == 3);
  CHECK(t.arith.log.abs == 1e-30);
  CHECK(t.arith.log.source.find("our log: 3 ulp") == 0);
  const fpcert_kernel n = norm_kernel("rw_traits_norm");
  const NormTraits nt = norm_traits_from_abi(n);
  CHECK(nt.arith.kind == NormKind::LayerNorm);
  CHECK(nt.arith.variance == NormVariance::TwoPass);
  CHECK(nt.arith.rsqrt_ulps == 1.5);
}

TEST_CASE("the example plugin: correct kernels pass every case of their suites, the buggy ones are refused where exposed") {
  const PluginSummary& s = load_plugin(kDir + "/libexample_rows_plugin.so");
  CHECK(s.softmax_kernels.size() == 3);
  CHECK(s.norm_kernels.size() == 3);
  const auto smx = make_softmax_kernel("example_softmax_f32_shifted");
  REQUIRE(smx);
  CHECK(smx->backend() == Backend::Plugin);
  CHECK(smx->softmax_traits().masked_rows == MaskedRowPolicy::Zero);
  REQUIRE(make_norm_kernel("example_layernorm_f32_twopass"));

  const Tally good_smx = run("softmax", {"example_softmax_f32_shifted", "example_log_softmax_f32_shifted"});
  CHECK(good_smx.fail == 0);
  CHECK(good_smx.other == 0);
  CHECK(good_smx.pass >= 20);
  const Tally good_norm = run("norm", {"example_layernorm_f32_twopass", "example_rmsnorm_f32"});
  CHECK(good_norm.fail == 0);
  CHECK(good_norm.other == 0);
  CHECK(good_norm.pass >= 20);

  // exp(z) without the max overflows fp32 for logits near 95 (exp(88.7) is fp32's largest): NaN rows.
  const Tally nomax = run("softmax", {"example_softmax_f32_nomax"});
  CHECK(has(nomax.failed, "near_overflow"));
  // E[x^2] - E[x]^2 with mean 1e4 and spread 4: the cancellation the two-pass declaration rules out.
  const Tally onepass = run("norm", {"example_layernorm_f32_onepass"});
  CHECK(has(onepass.failed, "mean_large"));
}

TEST_CASE("a plugin kernel's error status is the case's failure with its message; NOT_SUPPORTED is its own verdict") {
  static fpcert_kernel ks[2] = {softmax_kernel("rw_status_smx"), norm_kernel("rw_declines_norm")};
  ks[0].softmax_run = softmax_fails;
  ks[1].norm_can_implement = norm_declines;
  static fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "status").empty());
  register_plugin_info(&info, "status");
  const SuiteInfo* suite = find_suite("softmax_quick");
  REQUIRE(suite);
  SuiteRunOptions o;
  o.only_case = "uniform_n33";
  const RunResult r = run_suite(*suite, {"rw_status_smx"}, o);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].status == CaseStatus::Crashed);
  CHECK(r.cases[0].reason.find("softmax_run() returned INTERNAL (3): scratch allocation of 9 TB refused") != std::string::npos);
  const SuiteInfo* norm = find_suite("norm_quick");
  REQUIRE(norm);
  o.only_case = "uniform_n1000";
  const RunResult d = run_suite(*norm, {"rw_declines_norm"}, o);
  REQUIRE(d.cases.size() == 1);
  CHECK(d.cases[0].status == CaseStatus::NotSupported);
  CHECK(d.cases[0].reason.find("rows longer than 64") != std::string::npos);
}

TEST_CASE("faults on plugin kernels: the black-box injectors kill, the faults inside a closed kernel are not applicable") {
  (void)load_plugin(kDir + "/libexample_rows_plugin.so");
  const auto smx = make_softmax_kernel("example_softmax_f32_shifted");
  const auto ln = make_norm_kernel("example_layernorm_f32_twopass");
  REQUIRE(smx);
  REQUIRE(ln);
  CHECK(softmax_fault_not_applicable(Fault::SmxNoMaxShift, *smx).find("closed kernel") != std::string::npos);
  CHECK(softmax_fault_not_applicable(Fault::SmxZeros, *smx).empty());
  CHECK(softmax_fault_not_applicable(Fault::SmxNanMaskedRows, *smx).empty());
  CHECK(norm_fault_not_applicable(Fault::NormOnePassVariance, *ln).find("closed kernel") != std::string::npos);
  CHECK(norm_fault_not_applicable(Fault::NormAffineSwapped, *ln).empty());
  const std::string zeros = register_softmax_mutant("example_softmax_f32_shifted", Fault::SmxZeros);
  const std::string nan_rows = register_softmax_mutant("example_softmax_f32_shifted", Fault::SmxNanMaskedRows);
  CHECK(run("softmax_quick", {zeros}).fail >= 1);
  CHECK(has(run("softmax_quick", {nan_rows}).failed, "mask_rows"));
  const std::string swapped = register_norm_mutant("example_layernorm_f32_twopass", Fault::NormAffineSwapped);
  CHECK(run("norm_quick", {swapped}).fail >= 1);
}

TEST_CASE("a plugin softmax declaring expf_ops is graded bit for bit; one whose exp is not expf_ops is refused by that check") {
  static fpcert_kernel ks[2] = {f32_softmax_descriptor("rw_expf_ops", FPCERT_MEMORY_HOST, FPCERT_ELEM_FN_EXPF_OPS, softmax_expf_ops<true>),
                                f32_softmax_descriptor("rw_expf_ops_wrong", FPCERT_MEMORY_HOST, FPCERT_ELEM_FN_EXPF_OPS, softmax_expf_ops<false>)};
  static fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "expf_ops").empty());
  register_plugin_info(&info, "expf_ops");
  const auto k = make_softmax_kernel("rw_expf_ops");
  REQUIRE(k);
  CHECK(k->softmax_traits().arith.exp_exact == SoftmaxExpExact::ExpfOps);
  CHECK(k->softmax_traits().arith.exp.ulps == exp_error_expf_ops().ulps);
  const SuiteInfo* suite = find_suite("softmax_quick");
  REQUIRE(suite);
  int bitwise = 0, refused_bitwise = 0;
  for (const CaseResult& c : run_suite(*suite, {"rw_expf_ops", "rw_expf_ops_wrong"}, SuiteRunOptions{}).cases) {
    INFO(c.kernel << " " << c.case_id << " " << to_string(c.status) << " " << c.reason);
    if (c.kernel == "rw_expf_ops") {
      CHECK(c.status == CaseStatus::Pass);
      bitwise += c.tier == Tier::Bitwise;
    } else {
      for (const auto& ch : c.checks) refused_bitwise += ch.kind == CheckKind::Bitwise && !ch.passed;
    }
  }
  CHECK(bitwise >= 4);          // every case of the shifted fp32 softmax is emulable
  CHECK(refused_bitwise >= 1);  // glibc's exp differs from expf_ops in some last bit on a thousand-column row
}
