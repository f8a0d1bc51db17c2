// tests/suites/reduce_models_test.cpp — every built-in CPU reduction model (kernels/reduce/cpu/reduce_models.cpp)
// certified on the `reduce` suite: the models compute with the FPU (float adds, fmaf) or, for an f16 accumulator,
// with double sums rounded by oracle/round.hpp, independently of the oracle's emulation of their declared order; a
// model passes only when the two agree bit for bit on every vector (or, for the atomics model, when every run lies in
// the envelope), so a wrong order, a wrong start, or a wrong tree fails here.
#include <doctest/doctest.h>

#include <string>

#include "kernels/kernel.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {

TEST_CASE("built-in CPU reduction models pass the reduce suite, bitwise where they declare an order") {
  const auto names = kernel_names(false, Operation::Reduction);
  int cpu = 0;
  for (const std::string& k : names) {
    const KernelInfo* info = find_kernel_info(k);
    REQUIRE(info);
    if (info->backend != Backend::Cpu || !info->origin.empty() || k.rfind("model_", 0) != 0) continue;
    ++cpu;
    CAPTURE(k);
    const SuiteInfo* s = find_suite("reduce");
    REQUIRE(s);
    SuiteRunOptions opt;
    const RunResult r = run_suite(*s, {k}, opt);
    REQUIRE(!r.cases.empty());
    int bitwise = 0;
    for (const CaseResult& c : r.cases) {
      CAPTURE(c.case_id);
      CAPTURE(c.reason);
      CHECK((c.status == CaseStatus::Pass || c.status == CaseStatus::NotSupported));
      bitwise += c.tier == Tier::Bitwise;
    }
    if (k.find("atomic") == std::string::npos) CHECK(bitwise > 0);
  }
  CHECK(cpu >= 10);
}

}  // namespace fpcert
