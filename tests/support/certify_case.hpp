// tests/support/certify_case.hpp — one case of a suite on one kernel through run_suite, as `fpcert certify --case ID`
// runs it, and whether a check of a kind failed on it (tests of the certify suite's cases, CPU and GPU).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "suites/run/suite.hpp"

namespace fpcert::test {

/// The one result of case `id` of suite `suite` on `kernel`.
inline CaseResult certify_case(const std::string& kernel, const std::string& id, const std::string& suite = "certify") {
  SuiteRunOptions o;
  o.only_case = id;
  const RunResult r = run_suite(*find_suite(suite), {kernel}, o);
  REQUIRE(r.cases.size() == 1);
  return r.cases.front();
}

/// A check of kind k failed on r.
inline bool failed(const CaseResult& r, CheckKind k) {
  return std::any_of(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return c.kind == k && !c.passed; });
}

}  // namespace fpcert::test
