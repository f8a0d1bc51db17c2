// tests/suites/alpha_beta_gpu_test.cpp — the cuBLAS built-ins on the alpha/beta cases of certify (issue 37, slice 2):
// cublasGemmEx given alpha, beta and C (apart: copied into D's buffer first; in place), every ab_* case certified; the
// beta0_reads_c and beta_ignored mutants of the pedantic fp32 baseline refused. Label gpu (exit 77 without a device).
#include <doctest/doctest.h>

#include "suites/mutation/faults.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

namespace {

const char* kAbCases[] = {"ab_general", "ab_beta0", "ab_alpha0", "ab_beta1", "ab_inplace"};

CaseResult certify_case(const std::string& kernel, const std::string& id) {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite("certify"), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

}  // namespace

TEST_CASE("cuBLAS built-ins declare alpha/beta and pass the ab_* cases (a compute type this GPU refuses: not supported)") {
  for (const std::string& k : kernel_names()) {
    if (k.rfind("cublas_gemm_", 0) != 0) continue;
    CHECK(make_gemm_kernel(k)->traits().alpha_beta);
    for (const char* id : kAbCases) {
      const CaseResult r = certify_case(k, id);
      INFO(k << " " << id << ": " << to_string(r.status) << " " << r.reason);
      // Not supported only where the GPU declines the compute type, or where the runner cannot grade the format yet
      // (fp64: alpha a and beta c are not exact in double; docs/fp64.md).
      CHECK((r.status == CaseStatus::Pass ||
             (r.status == CaseStatus::NotSupported &&
              (r.reason.find("answered") != std::string::npos || r.reason.find("at most 26 significant bits") != std::string::npos))));
    }
  }
  for (const char* id : kAbCases) {
    INFO(id);
    CHECK(certify_case("cublas_gemm_f32_pedantic", id).status == CaseStatus::Pass);
  }
}

TEST_CASE("beta0_reads_c and beta_ignored around cuBLAS: refused where they act, dormant elsewhere") {
  const std::string rc = register_gemm_mutant("cublas_gemm_f32_pedantic", Fault::Beta0ReadsC);
  CHECK(certify_case(rc, "ab_beta0").status == CaseStatus::Fail);
  CHECK(certify_case(rc, "ab_general").status == CaseStatus::Pass);
  const std::string bi = register_gemm_mutant("cublas_gemm_f32_pedantic", Fault::BetaIgnored);
  CHECK(certify_case(bi, "ab_general").status == CaseStatus::Fail);
  CHECK(certify_case(bi, "ab_inplace").status == CaseStatus::Fail);
  CHECK(certify_case(bi, "ab_beta0").status == CaseStatus::Pass);
}
