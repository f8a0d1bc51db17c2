// tests/suites/eltwise_activations_test.cpp — the activations through the elementwise check (issue 42): sigmoid, SiLU,
// softplus, GELU (erf and tanh forms) written in float with glibc's functions keep their derived bounds on the CI suite
// (docs/elementwise.md, "Activations"), and the textbook softplus logf(1 + expf(x)) is refused at the same 8 ulp (for
// x below about -17, 1 + e^x rounds to 1 in float and the result is 0 while softplus(x) ~ e^x; above 88.72 expf overflows).
#include <doctest/doctest.h>

#include "results/elementwise.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("glibc-based activations keep their derived bounds on the CI suite") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"glibc_sigmoid_f32", "glibc_silu_f32", "glibc_softplus_f32", "glibc_gelu_f32", "glibc_gelu_tanh_f32"}, opt);
  CHECK(r.cases.size() == 10);
  for (const auto& c : r.cases) {
    INFO(c.kernel << " " << c.case_id << ": " << c.reason);
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.elementwise);
    CHECK(c.elementwise->inputs > 1000);
  }
}

TEST_CASE("the naive softplus logf(1 + expf(x)) is refused at 8 ulp") {
  SuiteRunOptions opt;
  const SuiteInfo* s = find_suite("elementwise");
  REQUIRE(s != nullptr);
  const RunResult r = run_suite(*s, {"fixture_softplus_naive"}, opt);
  REQUIRE(r.cases.size() == 2);
  bool refused = false;
  for (const auto& c : r.cases) {
    REQUIRE(c.elementwise);
    if (c.status == CaseStatus::Fail) {
      refused = true;
      CHECK(c.elementwise->above_claim > 100);
      REQUIRE(!c.elementwise->listed.empty());
      // where 1 + e^x rounds to 1 (e^x < 2^-24: x < -16.6), or expf overflows (x > 88.72: logf(Inf) = Inf, softplus(x) ~ x)
      for (const auto& p : c.elementwise->listed) CHECK((p.input < -15.0 || p.input > 88.7));
    }
  }
  CHECK(refused);
}
