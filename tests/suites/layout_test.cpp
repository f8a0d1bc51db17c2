// tests/suites/layout_test.cpp — GEMMs as libraries call them, slice 1 of issue 37: A, B and C row- or column-major
// (NN/NT/TN/TT, C either way). The layout declarations, the runner's laying out of transposed operands (the exact
// reference reads the logical A and B, whatever the layout), the layout_* cases of the certify suite, the fixture that
// reads the wrong stride on its transposed path (tests/plugin/fixtures/buggy_plugin.cpp) and the transposed_ld fault.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>

#include "generators/generate.hpp"
#include "plugin/loader.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

constexpr Layout R = Layout::RowMajor, C = Layout::ColMajor;
const char* kLayoutCases[] = {"layout_nt", "layout_tn", "layout_tt", "layout_nn_ccol", "layout_tt_ccol"};

void load_buggy() { load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cpu.so"); }

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

/// Run one problem through a kernel in one layout; the output codes decoded (row-major m x n).
std::vector<double> run_in(GemmKernel& k, const Problem& p, const GemmRef& ref, GemmLayout l, CaseStatus* status = nullptr) {
  auto api = make_host_api();
  CaseSetup s;
  s.suite = "test";
  s.case_id = "layout";
  s.problem = &p;
  s.ref = &ref;
  s.layout = l;
  std::vector<double> out;
  RunOptions o;
  o.output = &out;
  const CaseResult r = run_case(k, s, *api, o);
  if (status) *status = r.status;
  INFO(r.reason);
  CHECK(r.layout == (l.row_major() ? "" : to_string(l)));
  return out;
}

bool bitwise_equal(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<std::uint64_t>(x[i]) != std::bit_cast<std::uint64_t>(y[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("GemmLayout: BLAS names, the bit of each combination, the default mask") {
  // Bit (a + 2 b + 4 c), 1 = column-major: nn/c_row is bit 0, nt/c_row bit 2 (b = 1), tn/c_col bit 1 + 4 = 5.
  CHECK(GemmLayout{}.bit() == 1);
  CHECK(GemmLayout{R, C, R}.bit() == 1 << 2);
  CHECK(GemmLayout{C, R, C}.bit() == 1 << 5);
  CHECK(to_string(GemmLayout{R, C, R}) == "nt/c_row");
  CHECK(to_string(GemmLayout{C, C, C}) == "tt/c_col");
  CHECK(describe_layouts(kLayoutsRowMajor) == "nn/c_row");
  CHECK(describe_layouts(kLayoutsAnyAB) == "nn/c_row, tn/c_row, nt/c_row, tt/c_row");
  // Every built-in CPU model but the strided one keeps row-major only.
  CHECK(make_gemm_kernel("model_gemm_f32")->traits().layouts == kLayoutsRowMajor);
  CHECK_FALSE(make_gemm_kernel("model_gemm_f32")->can_implement_layout({C, R, R}).ok);
  CHECK(make_gemm_kernel("model_gemm_f32_strided")->traits().layouts == kLayoutsAll);
}

TEST_CASE("the runner lays out transposed operands: a fixed-order kernel gives the same bits in all 8 layouts") {
  // The strided model sums k ascending by fp32 FMA whatever the layout: its output on one problem must not depend
  // on how A, B and C are stored (an independent property: the layouts only move where elements live), and must
  // equal model_gemm_f32's row-major output bit for bit. M, N, K distinct, inputs that round (uniform fp32 draws).
  const Problem p = generate("uniform:m=13,n=7,k=29,seed=5");
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  auto plain = make_gemm_kernel("model_gemm_f32");
  auto strided = make_gemm_kernel("model_gemm_f32_strided");
  const std::vector<double> want = run_in(*plain, p, ref, {});
  REQUIRE(want.size() == 13 * 7);
  bool nonzero = false;
  for (double v : want) nonzero |= v != 0;
  REQUIRE(nonzero);  // a test that cannot fail proves nothing
  for (Layout a : {R, C})
    for (Layout b : {R, C})
      for (Layout c : {R, C}) {
        const GemmLayout l{a, b, c};
        CaseStatus st{};
        INFO(to_string(l));
        CHECK(bitwise_equal(run_in(*strided, p, ref, l, &st), want));
        CHECK(st == CaseStatus::Pass);
      }
  // model_gemm_f32 does not declare column-major operands: not supported, with the reason.
  CaseStatus st{};
  run_in(*plain, p, ref, {R, C, R}, &st);
  CHECK(st == CaseStatus::NotSupported);
}

TEST_CASE("certify's layout cases: the strided model passes them, row-major-only models are not supported") {
  for (const char* id : kLayoutCases) {
    INFO(id);
    const CaseResult s = certify_case("model_gemm_f32_strided", id);
    CHECK(s.status == CaseStatus::Pass);
    CHECK(!s.layout.empty());
    CHECK(std::find(s.coverage.begin(), s.coverage.end(), "layout.transposes") != s.coverage.end());
    const CaseResult r = certify_case("model_gemm_f32", id);
    CHECK(r.status == CaseStatus::NotSupported);
    CHECK(r.reason.find("the kernel takes nn/c_row") != std::string::npos);
  }
}

TEST_CASE("bug_transposed_stride: passes the row-major cases, fails every case with a transposed operand") {
  load_buggy();
  // The old suite's cases (row-major A, B, C) pass: the bug lives on the transposed path only.
  for (const char* id : {"uniform", "shape_primes", "ld_odd"}) {
    INFO(id);
    CHECK(certify_case("bug_transposed_stride", id).status == CaseStatus::Pass);
  }
  for (const char* id : kLayoutCases) {
    INFO(id);
    CHECK(certify_case("ok_any_layout", id).status == CaseStatus::Pass);
    const CaseResult r = certify_case("bug_transposed_stride", id);
    INFO(r.reason);
    // layout_nn_ccol has no transposed operand (only C column-major): the bug is dormant there.
    CHECK(r.status == (std::string(id) == "layout_nn_ccol" ? CaseStatus::Pass : CaseStatus::Fail));
  }
}

TEST_CASE("transposed_ld: killed on a transposed case, dormant on row-major operands, not applicable to row-major-only kernels") {
  CHECK(find_fault("transposed_ld") != nullptr);
  CHECK_FALSE(fault_not_applicable(Fault::TransposedLd, make_gemm_kernel("model_gemm_f32")->traits()).empty());
  CHECK(fault_not_applicable(Fault::TransposedLd, make_gemm_kernel("model_gemm_f32_strided")->traits()).empty());
  const std::string name = register_gemm_mutant("model_gemm_f32_strided", Fault::TransposedLd);
  reset_fault_activity(name);
  const CaseResult tn = certify_case(name, "layout_tn");
  CHECK(tn.status == CaseStatus::Fail);
  CHECK(fault_activity(name).active > 0);
  reset_fault_activity(name);
  const CaseResult nn = certify_case(name, "layout_nn_ccol");
  CHECK(nn.status == CaseStatus::Pass);
  CHECK(fault_activity(name).runs > 0);
  CHECK(fault_activity(name).active == 0);
}

TEST_CASE("a column-major C: the output-side faults still find their elements (zero_row, write_past_end)") {
  const std::string zr = register_gemm_mutant("model_gemm_f32_strided", Fault::ZeroRow);
  CHECK(certify_case(zr, "layout_tt_ccol").status == CaseStatus::Fail);
  const std::string wp = register_gemm_mutant("model_gemm_f32_strided", Fault::WritePastEnd);
  const CaseResult r = certify_case(wp, "layout_nn_ccol");
  CHECK(r.status == CaseStatus::Fail);
  CHECK(r.metrics.guard_violations > 0);
  const std::string ur = register_gemm_mutant("model_gemm_f32_strided", Fault::UnwrittenRow);
  const CaseResult u = certify_case(ur, "layout_tt_ccol");
  CHECK(u.status == CaseStatus::Fail);
  CHECK(u.metrics.unwritten == u.n);  // exactly the last row: n elements
}
