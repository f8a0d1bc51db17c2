// tests/suites/layout_gpu_test.cpp — the cuBLAS built-ins on the layout cases of certify (issue 37, slice 1): every
// transpose cuBLAS takes, and C column-major, certified like the row-major cases; the transposed_ld mutant of the
// pedantic fp32 baseline refused on a transposed case. Label gpu (exit 77 without a device).
#include <doctest/doctest.h>

#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

const char* kLayoutCases[] = {"layout_nt", "layout_tn", "layout_tt", "layout_nn_ccol", "layout_tt_ccol"};

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

}  // namespace

TEST_CASE("cuBLAS built-ins declare every layout and pass the layout cases (a compute type this GPU refuses: not supported)") {
  for (const std::string& k : kernel_names()) {
    if (k.rfind("cublas_gemm_", 0) != 0) continue;
    CHECK(make_gemm_kernel(k)->traits().layouts == kLayoutsAll);
    for (const char* id : kLayoutCases) {
      const CaseResult r = certify_case(k, id);
      INFO(k << " " << id << ": " << to_string(r.status) << " " << r.reason);
      CHECK((r.status == CaseStatus::Pass || (r.status == CaseStatus::NotSupported && r.reason.find("answered") != std::string::npos)));
    }
  }
  // The pedantic fp32 baseline runs on every GPU: it must pass, not decline.
  for (const char* id : kLayoutCases) {
    INFO(id);
    CHECK(certify_case("cublas_gemm_f32_pedantic", id).status == CaseStatus::Pass);
  }
}

TEST_CASE("transposed_ld around cuBLAS: refused on a transposed case, dormant on nn/c_col") {
  const std::string name = register_gemm_mutant("cublas_gemm_f32_pedantic", Fault::TransposedLd);
  CHECK(certify_case(name, "layout_tn").status == CaseStatus::Fail);
  CHECK(certify_case(name, "layout_tt_ccol").status == CaseStatus::Fail);
  CHECK(certify_case(name, "layout_nn_ccol").status == CaseStatus::Pass);
}
