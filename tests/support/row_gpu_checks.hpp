// tests/support/row_gpu_checks.hpp — the GPU checks every row operation's CUDA built-ins get (softmax_gpu_test.cpp,
// norm_gpu_test.cpp): every case of the operation's suite passes against the host reference with evidence, and the
// mutants (faults in the kernel's own device code) reach a score of 100 %.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

/// The built-in kernels of `op` whose backend is CUDA.
inline std::vector<std::string> cuda_builtins(Operation op) {
  std::vector<std::string> out;
  for (const auto& n : kernel_names(false, op))
    if (const KernelInfo* info = find_kernel_info(n); info && info->backend == Backend::Cuda) out.push_back(n);
  return out;
}

/// Kernel `kernel` on case `case_id` of `suite` alone (the runner's own case run); REQUIREs that exactly that case ran.
inline CaseResult run_one_case(const char* suite, const std::string& kernel, const std::string& case_id) {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  SuiteRunOptions o;
  o.select = [&case_id](const std::string& id, const std::string&) { return id == case_id; };
  const RunResult r = run_suite(*s, {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

/// Every case of `suite` passes on each kernel, printed case by case, and the evidence rule adds no failed case. A case
/// "not supported" counts only where `declined(kernel, case)` says the kernel declares it outside its domain.
inline void check_builtins_pass(Operation op, const char* suite, const std::vector<std::string>& ks,
                                const std::function<bool(const std::string&, const CaseResult&)>& declined = {}) {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  for (const std::string& k : ks) {
    CAPTURE(k);
    RunResult r = run_suite(*s, {k}, SuiteRunOptions{});
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CAPTURE(c.envelope.arithmetic);
      std::printf("%s %s: %s, err/bound %.3g, ulp max %.0f, %.3f ms\n", k.c_str(), c.case_id.c_str(), std::string(to_string(c.status)).c_str(),
                  c.metrics.err_frac_max, c.metrics.ulp_max, c.time_ms_median);
      if (c.status == CaseStatus::NotSupported && declined && declined(k, c)) continue;
      CHECK(c.status == CaseStatus::Pass);
    }
    operation_runner(op).require_evidence(r);
    CHECK(r.cases.back().case_id != "evidence");
  }
}

/// Every mutant of each kernel is killed for its own fault (or not applicable): a score of 100 %.
inline void check_builtins_mutation(const char* suite, const std::vector<std::string>& ks) {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  for (const std::string& k : ks) {
    CAPTURE(k);
    const MutationScore m = run_mutation(*s, k, MutationOptions{});
    for (const MutantResult& x : m.mutants) {
      CAPTURE(x.fault);
      CAPTURE(x.detail);
      std::printf("%s %s: %s (%s)\n", k.c_str(), x.fault.c_str(), std::string(to_string(x.outcome)).c_str(), x.case_id.c_str());
      CHECK((x.outcome == MutantOutcome::Killed || x.outcome == MutantOutcome::NotApplicable));
    }
    CHECK(m.score() == 1.0);
  }
}

}  // namespace fpcert
