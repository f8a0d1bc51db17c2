// tests/support/eltwise_cases.hpp — the elementwise tests' runs: a suite on kernels through the runner, a case found by
// kernel and id (tests/suites/eltwise_*_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "suites/run/suite.hpp"

namespace fpcert::test {

inline RunResult run_eltwise(const std::string& suite, const std::vector<std::string>& kernels) {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s != nullptr);
  CHECK(s->operation == Operation::Elementwise);
  SuiteRunOptions opt;
  return run_suite(*s, kernels, opt);
}

inline const CaseResult& find_case(const RunResult& r, const std::string& kernel, const std::string& id) {
  for (const auto& c : r.cases)
    if (c.kernel == kernel && c.case_id == id) return c;
  FAIL("no case " << id << " for " << kernel);
  return r.cases.front();
}

}  // namespace fpcert::test
