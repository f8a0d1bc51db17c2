// tests/plugin/reduce_plugin_test.cpp — reduction kernels in plugins (ABI minor 3, docs/plugin.md "Reduction
// kernels"): every malformed reduction declaration refused with the field named; a table of minor 2 (its kernels end
// before the reduction fields) still loads and cannot declare a reduction; the example plugin's kernels certified on
// the reduce suites (correct ones pass, the one that drops each vector's last element fails); the traits read back
// as declared.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/reduce/reduce_kernel.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "plugin/reduce_plugin.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

fpcert_status sum_run(void*, const fpcert_reduce_args* a, void*, char*, size_t) {
  auto* out = static_cast<float*>(a->out);
  for (std::int64_t v = 0; v < a->count; ++v) out[v] = 0.0f;
  return FPCERT_STATUS_OK;
}

fpcert_kernel sum_kernel(const char* name) {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_REDUCTION;
  k.name = name;
  k.memory = FPCERT_MEMORY_HOST;
  k.reduce.kind = FPCERT_REDUCE_SUM;
  k.reduce.x_input = FPCERT_FORMAT_F32;
  k.reduce.y_input = FPCERT_FORMAT_NONE;
  k.reduce.input_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.reduce.acc_format = FPCERT_FORMAT_F32;
  k.reduce.acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.reduce.exact_products = 1;
  k.reduce.order = FPCERT_REDUCE_ORDER_SEQUENTIAL;
  k.reduce.out_format = FPCERT_FORMAT_F32;
  k.reduce.determinism = FPCERT_DETERMINISTIC;
  k.reduce_run = sum_run;
  return k;
}

std::vector<std::string> problems(const fpcert_kernel& k, std::uint32_t minor = FPCERT_PLUGIN_ABI_MINOR,
                                  std::uint32_t stride = sizeof(fpcert_kernel)) {
  fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 1, 0, &k};
  info.abi_minor = minor;
  info.kernel_struct_size = stride;
  return validate_plugin_info(&info, "t");
}

/// Exactly one problem, mentioning every fragment.
void expect_one(const fpcert_kernel& k, std::initializer_list<const char*> fragments) {
  const auto e = problems(k);
  std::string all;
  for (const auto& s : e) all += s + "\n";
  INFO(all);
  REQUIRE(e.size() == 1);
  for (const char* f : fragments) CHECK(e[0].find(f) != std::string::npos);
}

}  // namespace

TEST_CASE("reduction declarations: a valid one validates, each broken field is named") {
  fpcert_kernel k = sum_kernel("rp_valid");
  CHECK(problems(k).empty());
  SUBCASE("run missing") {
    k.reduce_run = nullptr;
    expect_one(k, {"reduce_run is NULL"});
  }
  SUBCASE("unknown kind") {
    k.reduce.kind = 9;
    expect_one(k, {"reduce.kind", "unknown value 9"});
  }
  SUBCASE("a sum with a second operand") {
    k.reduce.y_input = FPCERT_FORMAT_F32;
    expect_one(k, {"reduce.y_input must be FPCERT_FORMAT_NONE"});
  }
  SUBCASE("a dot without one") {
    k.reduce.kind = FPCERT_REDUCE_DOT;
    expect_one(k, {"reduce.y_input: required"});
  }
  SUBCASE("blocked without a block size") {
    k.reduce.order = FPCERT_REDUCE_ORDER_BLOCKED;
    expect_one(k, {"reduce.block must be >= 1"});
  }
  SUBCASE("a warp tree of 48 lanes") {
    k.reduce.order = FPCERT_REDUCE_ORDER_WARP_TREE;
    k.reduce.lanes = 48;
    expect_one(k, {"power of two"});
  }
  SUBCASE("stochastic accumulation") {
    k.reduce.acc_rounding = FPCERT_ROUNDING_STOCHASTIC;
    expect_one(k, {"reduce.acc_rounding", "stochastic"});
  }
  SUBCASE("nrm2 without its scaling and specials") {
    k.reduce.kind = FPCERT_REDUCE_NRM2;
    const auto e = problems(k);
    CHECK(e.size() == 2);
  }
  SUBCASE("run to run with a fixed order: the declarations contradict each other") {
    k.reduce.determinism = FPCERT_RUN_TO_RUN;
    expect_one(k, {"contradict"});
  }
  SUBCASE("determinism missing") {
    k.reduce.determinism = 0;
    expect_one(k, {"reduce.determinism: required"});
  }
}

TEST_CASE("ABI minor 2 tables: their kernels end before the reduction fields and still load; a reduction needs minor 3") {
  static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR2, 0);
  fpcert_kernel k = sum_kernel("rp_minor2");
  k.struct_size = FPCERT_KERNEL_SIZE_MINOR2;
  std::memcpy(bytes.data(), &k, FPCERT_KERNEL_SIZE_MINOR2);
  const auto* k2 = reinterpret_cast<const fpcert_kernel*>(bytes.data());
  fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 1, 0, k2};
  info.abi_minor = 2;
  info.kernel_struct_size = FPCERT_KERNEL_SIZE_MINOR2;
  const auto e = validate_plugin_info(&info, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("needs plugin ABI minor 3") != std::string::npos);
  // The example CPU plugin's GEMM and conversions are of the current minor; a minor 2 stride with the current
  // minor is refused (the stride says which minor a table is).
  fpcert_kernel g = sum_kernel("rp_stride");
  CHECK(!problems(g, FPCERT_PLUGIN_ABI_MINOR, FPCERT_KERNEL_SIZE_MINOR2).empty());
  CHECK(FPCERT_KERNEL_SIZE_MINOR2 < sizeof(fpcert_kernel));
}

TEST_CASE("the example reduction plugin: declared traits read back, correct kernels pass the reduce suite, droplast fails") {
  const PluginSummary& s = load_plugin(kDir + "/libexample_reduce_plugin.so");
  CHECK(s.reduction_kernels.size() == 4);
  const auto bf16 = make_reduce_kernel("example_sum_bf16_blocked64");
  REQUIRE(bf16);
  CHECK(bf16->reduce_traits().order == ReduceOrder::blocked(64));
  CHECK(*bf16->reduce_traits().x_input == fpcert::bf16);
  CHECK(bf16->backend() == Backend::Plugin);
  const SuiteInfo* suite = find_suite("reduce_quick");
  REQUIRE(suite);
  SuiteRunOptions o;
  const RunResult ok = run_suite(*suite, {"example_sum_f32_seq", "example_dot_f32_fma_seq", "example_sum_bf16_blocked64"}, o);
  int pass = 0, bitwise = 0, bad = 0;
  for (const CaseResult& c : ok.cases) {
    INFO(c.kernel << " " << c.case_id << " " << to_string(c.status) << " " << c.reason);
    CHECK((c.status == CaseStatus::Pass || c.status == CaseStatus::NotSupported));
    pass += c.status == CaseStatus::Pass;
    bitwise += c.tier == Tier::Bitwise && c.status == CaseStatus::Pass;
  }
  CHECK(pass >= 10);
  CHECK(bitwise >= 10);  // declared orders: graded bit for bit
  const RunResult drop = run_suite(*suite, {"example_sum_f32_droplast"}, o);
  for (const CaseResult& c : drop.cases) bad += c.status == CaseStatus::Fail;
  CHECK(bad >= 1);
}
