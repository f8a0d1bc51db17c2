// tests/plugin/ozaki2_plugin_test.cpp — a plugin FP64 GEMM declaring the order ozaki2:moduli=N (fpcert.toml's [orders],
// certify's --order: the ABI has no such kind) gets the scheme's input domain as the built-in kernels of that order do:
// finite inputs only, lines wider than the moduli keep within fp64's envelope graded by the scheme's own bound. A
// correct Ozaki-II plugin then passes the wide-exponent case the envelope alone refuses, and one computing with fewer
// moduli than it declares is refused.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "generators/generate.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "oracle/gemm_ref.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "tests/support/plugin_checks.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// C = A B by the Ozaki-II scheme with *user_data moduli (the kernel's route: division residues and Garner), fp64 in and
/// out, row-major with the leading dimensions given.
fpcert_status run_ozaki2(void* ud, const fpcert_gemm_args* g, void*, size_t, void*, char*, size_t) {
  const int moduli = *static_cast<const int*>(ud);
  const std::int64_t m = g->shape.m, n = g->shape.n, k = g->shape.k;
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < k; ++q) a[static_cast<std::size_t>(i * k + q)] = static_cast<const double*>(g->a)[i * g->lda + q];
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) b[static_cast<std::size_t>(q * n + j)] = static_cast<const double*>(g->b)[q * g->ldb + j];
  const std::vector<double> c = ozaki2::gemm(ozaki2::make_plan(moduli), a.data(), b.data(), m, n, k, nullptr, ozaki2::Route::Kernel);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) static_cast<double*>(g->c)[i * g->ldc + j] = c[static_cast<std::size_t>(i * n + j)];
  return FPCERT_STATUS_OK;
}

fpcert_kernel kernel(const char* name, int* moduli) {
  return test::host_gemm_kernel(name, FPCERT_FORMAT_F64, FPCERT_FORMAT_F64, FPCERT_FORMAT_F64, run_ozaki2, moduli,
                                "Ozaki-II on INT8 residues, exact CRT, one rounding");
}

}  // namespace

TEST_CASE("a plugin declaring ozaki2:moduli=N gets the scheme's domain, and is held to it") {
  static int twenty = 20, eight = 8;
  static fpcert_kernel ks[] = {kernel("oz2_plugin_honest", &twenty), kernel("oz2_plugin_short", &eight)};
  static const fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "ozaki2", "0", 2, 0, ks};
  REQUIRE(validate_plugin_info(&info, "t").empty());
  register_plugin_info(&info, "ozaki2");
  // Before the order is stated: unknown order, no domain (the envelope alone).
  CHECK_FALSE(make_gemm_kernel("oz2_plugin_honest")->traits().domain.restricted());
  for (const char* name : {"oz2_plugin_honest", "oz2_plugin_short"}) declare_plugin_order(name, SummationOrder::ozaki2(20));
  auto honest = make_gemm_kernel("oz2_plugin_honest");
  const InputDomain d = honest->traits().domain, built_in = ozaki2_traits(20).domain;
  CHECK(d.finite_only);
  CHECK(d.span_scope == SpanScope::Line);
  CHECK(d.max_span == built_in.max_span);
  CHECK(d.max_span > 0);
  CHECK(d.span_scheme_graded);

  auto api = make_host_api();
  const std::string seed = std::to_string(test::seed());
  // Exponents across [-490, 490] in every row and column (the suite's f64_exp_wide): beyond the span, graded by the
  // bitwise emulation and the scheme's own bound; and 53-bit uniform values, inside it.
  for (const std::string& spec : {"exp_uniform:m=24,n=20,k=96,emin=-490,emax=490,source=f64,seed=" + seed,
                                 "uniform:m=24,n=20,k=96,source=f64,seed=" + seed}) {
    CAPTURE(spec);
    const Problem p = generate(spec);
    const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
    const CaseResult ok = test::run_graded(*honest, p, ref, *api, RunOptions{}, BoundVariant::Componentwise);
    CHECK_MESSAGE(ok.status == CaseStatus::Pass, ok.reason);
    auto short_moduli = make_gemm_kernel("oz2_plugin_short");
    const CaseResult bad = test::run_graded(*short_moduli, p, ref, *api, RunOptions{}, BoundVariant::Componentwise);
    CHECK(bad.status == CaseStatus::Fail);
  }
  // Inf and NaN have no residues: such a case is outside the declared domain, not supported.
  const Problem sp = generate("specials:m=16,n=16,k=64,target=f64,acc=f64,source=f64,seed=" + seed);
  const CaseResult ns = test::run_graded(*honest, sp, gemm_reference(sp.a.view(), sp.b.view()), *api, RunOptions{}, BoundVariant::Componentwise);
  CHECK(ns.status == CaseStatus::NotSupported);
}
