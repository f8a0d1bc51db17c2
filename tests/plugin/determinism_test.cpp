// tests/plugin/determinism_test.cpp — the determinism declaration of the plugin ABI (minor 2): required (0 refused),
// kernels of minors 0 and 1 read as deterministic; RUN_TO_RUN needs an order family (unknown, or split-K with the
// atomic combine), an atomic combine needs RUN_TO_RUN; an unknown value is refused by name; fpcert.toml's
// [determinism] (declare_plugin_determinism) states it for a plugin that cannot.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/plugin_checks.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

using namespace fpcert;

namespace {

fpcert_status run_ones(void*, const fpcert_gemm_args* a, void*, size_t, void*, char*, size_t) {
  auto* c = static_cast<float*>(a->c);
  for (std::int64_t i = 0; i < a->shape.m; ++i)
    for (std::int64_t j = 0; j < a->shape.n; ++j) c[i * a->ldc + j] = 1.0f;
  return FPCERT_STATUS_OK;
}

fpcert_kernel kernel(const std::string& name) {
  return test::host_gemm_kernel(name.c_str(), FPCERT_FORMAT_F32, FPCERT_FORMAT_F32, FPCERT_FORMAT_F32, run_ones, nullptr,
                                "split-K in 4, partials added with atomicAdd");
}

/// A host split-K plugin kernel: 4 chunks, each by fp32 FMA from +0; the partials added into C (+0 first) in an order
/// that rotates with every call (what atomics do between runs).
fpcert_status run_splitk(void* ud, const fpcert_gemm_args* a, void*, size_t, void*, char*, size_t) {
  auto* calls = static_cast<int*>(ud);
  const int first = (*calls)++ % 4;
  const auto* A = static_cast<const float*>(a->a);
  const auto* B = static_cast<const float*>(a->b);
  auto* C = static_cast<float*>(a->c);
  const std::int64_t m = a->shape.m, n = a->shape.n, k = a->shape.k, len = (k + 3) / 4;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float part[4];
      for (int s = 0; s < 4; ++s) {
        const std::int64_t k0 = std::min(k, s * len), k1 = std::min(k, k0 + len);
        float acc = 0.0f;
        for (std::int64_t q = k0; q < k1; ++q) acc = std::fma(A[i * a->lda + q], B[q * a->ldb + j], acc);
        part[s] = acc;
      }
      float c = 0.0f;
      for (int s = 0; s < 4; ++s) c += part[(first + s + static_cast<int>(i + j)) % 4];
      C[i * a->ldc + j] = c;
    }
  return FPCERT_STATUS_OK;
}

fpcert_plugin_info table(const fpcert_kernel* ks) { return fpcert_plugin_info{FPCERT_PLUGIN_INFO_HEADER, "determinism", "0", 1, 0, ks}; }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST_CASE("ABI minor 2: the determinism field, its values and its coherence with the order") {
  CHECK(FPCERT_PLUGIN_ABI_MINOR >= 2);  // the determinism field exists from minor 2 on
  CHECK(FPCERT_KERNEL_SIZE_MINOR1 < sizeof(fpcert_kernel));
  static const std::string name = "det_plugin_gemm";
  fpcert_kernel k = kernel(name);
  const fpcert_plugin_info info = table(&k);
  SUBCASE("required: 0 is refused, DETERMINISTIC is valid") {
    k.determinism = 0;
    const auto e = validate_plugin_info(&info, "t");
    INFO(joined(e));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("determinism: required, got 0") != std::string::npos);
    k.determinism = FPCERT_DETERMINISTIC;
    CHECK(validate_plugin_info(&info, "t").empty());
  }
  SUBCASE("an unknown value is refused by name") {
    k.determinism = 7;
    const auto e = validate_plugin_info(&info, "t");
    INFO(joined(e));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("determinism: unknown value 7") != std::string::npos);
  }
  SUBCASE("RUN_TO_RUN with a fixed order is incoherent") {
    k.determinism = FPCERT_RUN_TO_RUN;
    k.gemm_order.kind = FPCERT_ORDER_SEQUENTIAL;
    k.gemm_order.step = FPCERT_STEP_FMA;
    const auto e = validate_plugin_info(&info, "t");
    INFO(joined(e));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("no fixed order") != std::string::npos);
  }
  SUBCASE("an atomic combine needs RUN_TO_RUN, and is valid with it") {
    k.gemm_order.kind = FPCERT_ORDER_SPLIT_K;
    k.gemm_order.step = FPCERT_STEP_FMA;
    k.gemm_order.splits = 4;
    k.gemm_order.outer = FPCERT_COMBINE_ATOMIC;
    const auto e = validate_plugin_info(&info, "t");
    INFO(joined(e));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("declare determinism run_to_run") != std::string::npos);
    k.determinism = FPCERT_RUN_TO_RUN;
    CHECK(validate_plugin_info(&info, "t").empty());
  }
  SUBCASE("an atomic combine belongs to split-K") {
    k.determinism = FPCERT_RUN_TO_RUN;
    k.gemm_order.kind = FPCERT_ORDER_BLOCKED_K;
    k.gemm_order.step = FPCERT_STEP_FMA;
    k.gemm_order.block = 32;
    k.gemm_order.inner = FPCERT_COMBINE_SEQUENTIAL;
    k.gemm_order.outer = FPCERT_COMBINE_ATOMIC;
    CHECK(joined(validate_plugin_info(&info, "t")).find("gemm_order.outer") != std::string::npos);
  }
}

TEST_CASE("registered plugin kernels carry what they declare; minor 1 kernels read as deterministic") {
  static const std::string rtr = "det_plugin_run_to_run";
  static fpcert_kernel k = kernel(rtr);
  k.determinism = FPCERT_RUN_TO_RUN;
  k.gemm_order.kind = FPCERT_ORDER_SPLIT_K;
  k.gemm_order.step = FPCERT_STEP_FMA;
  k.gemm_order.splits = 4;
  k.gemm_order.outer = FPCERT_COMBINE_ATOMIC;
  static const fpcert_plugin_info info = table(&k);
  REQUIRE(validate_plugin_info(&info, "t").empty());
  register_plugin_info(&info, "det");
  const KernelTraits t = make_gemm_kernel(rtr)->traits();
  CHECK(t.determinism == Determinism::RunToRun);
  CHECK(t.sum_order.kind == OrderKind::SplitK);
  CHECK(t.sum_order.outer == Combine::Atomic);
  CHECK(describe_traits(t).find("nondeterministic run to run") != std::string::npos);

  // A minor-1 table: its kernels end before `determinism` (whatever bytes follow are never read).
  static const std::string old = "det_plugin_minor1";
  static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR1, 0);
  fpcert_kernel k1 = kernel(old);
  k1.struct_size = FPCERT_KERNEL_SIZE_MINOR1;
  std::memcpy(bytes.data(), &k1, FPCERT_KERNEL_SIZE_MINOR1);
  static fpcert_plugin_info info1 = table(reinterpret_cast<const fpcert_kernel*>(bytes.data()));
  info1.abi_minor = 1;
  info1.kernel_struct_size = FPCERT_KERNEL_SIZE_MINOR1;
  INFO(joined(validate_plugin_info(&info1, "t")));
  REQUIRE(validate_plugin_info(&info1, "t").empty());
  register_plugin_info(&info1, "minor1");
  CHECK(make_gemm_kernel(old)->traits().determinism == Determinism::Deterministic);
  info1.kernel_struct_size = sizeof(fpcert_kernel);  // a minor 1 table cannot have minor 2's stride
  CHECK(joined(validate_plugin_info(&info1, "t")).find("for ABI 1.1") != std::string::npos);

  // fpcert.toml's [determinism]: a plugin that cannot say it (order unknown), stated from outside.
  declare_plugin_determinism(old, Determinism::RunToRun);
  CHECK(make_gemm_kernel(old)->traits().determinism == Determinism::RunToRun);
  CHECK_THROWS_AS(declare_plugin_determinism(rtr, Determinism::Deterministic), InputError);  // contradicts its plugin
  CHECK_THROWS_AS(declare_plugin_determinism("model_gemm_f32", Determinism::RunToRun), InputError);  // a built-in
  CHECK_THROWS_AS(declare_plugin_determinism("no_such_kernel", Determinism::RunToRun), InputError);
}

TEST_CASE("a plugin kernel declaring RUN_TO_RUN passes through the runner with its spread; undeclared it fails") {
  static int calls = 0;
  static const std::string declared_name = "det_plugin_splitk_atomic", plain_name = "det_plugin_splitk_undeclared";
  static fpcert_kernel ks[2] = {kernel(declared_name), kernel(plain_name)};
  for (fpcert_kernel& k : ks) {
    k.user_data = &calls;
    k.gemm_run = run_splitk;
    k.gemm_order.kind = FPCERT_ORDER_SPLIT_K;
    k.gemm_order.step = FPCERT_STEP_FMA;
    k.gemm_order.splits = 4;
    k.gemm_order.outer = FPCERT_COMBINE_ATOMIC;
    k.determinism = FPCERT_RUN_TO_RUN;
  }
  ks[1].gemm_order = {};  // the undeclared one: order unknown, deterministic (a false claim)
  ks[1].gemm_order.kind = FPCERT_ORDER_UNKNOWN;
  ks[1].determinism = FPCERT_DETERMINISTIC;
  static fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "determinism-run", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "t").empty());
  register_plugin_info(&info, "det-run");
  const Problem p = test::uniform_problem(24, 20, 256, f32, test::seed());
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto api = make_host_api();
  CaseSetup s;
  s.suite = "test";
  s.case_id = "uniform";
  s.problem = &p;
  s.ref = &ref;
  auto k = make_gemm_kernel(declared_name);
  const CaseResult r = run_case(*k, s, *api, RunOptions{});
  INFO(r.reason);
  CHECK(r.status == CaseStatus::Pass);
  REQUIRE(r.spread);
  CHECK(r.spread->differing_runs == 1);  // the two runs rotate the order: uniform data shows it somewhere
  CHECK(r.spread->max_frac <= 1);
  auto u = make_gemm_kernel(plain_name);
  const CaseResult f = run_case(*u, s, *api, RunOptions{});
  CHECK(f.status == CaseStatus::Fail);
  const CheckResult* nd = find_check(f, CheckKind::Nondeterministic);
  REQUIRE(nd);
  CHECK_FALSE(nd->passed);
}
