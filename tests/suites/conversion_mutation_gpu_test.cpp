// tests/suites/conversion_mutation_gpu_test.cpp — the conversion faults injected into the device table's kernels on the
// GPU (docs/mutation.md, "Device conversion kernels"): each fault applied on the host to the results as they come back,
// before the sweep's check; every mutant is decided as the host injector decides it around fpcert's model of the same
// conversion (killed where it is killed, not applicable where it is), none survives. The seconds each score took are
// printed (MESSAGE). Without a device the executable reports "skipped" (tests/support/gpu_main.cpp).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "suites/mutation/mutation.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("fpcert mutate on the device table's conversions: decided as on fpcert's model, none survives") {
  const SuiteInfo* suite = find_suite("conversions");
  REQUIRE(suite);
  // A 16-bit source (every code) and an fp32 source (every one of its 2^32 codes on the device).
  for (const char* name : {"bf16_to_e4m3_satfinite", "bf16_to_e2m1_rn", "f32_to_bf16_rn", "f32_to_e4m3_satfinite"}) {
    const std::string label = name;  // doctest prints a const char* as a pointer
    CAPTURE(label);
    const MutationScore dev = run_mutation(*suite, name, MutationOptions{});
    const MutationScore model = run_mutation(*suite, std::string("model_") + name, MutationOptions{});
    CHECK(dev.invalid_cases.empty());
    std::map<std::string, MutantOutcome> want;
    for (const MutantResult& m : model.mutants) want[m.fault] = m.outcome;
    for (const MutantResult& m : dev.mutants) {
      CAPTURE(m.fault);
      CAPTURE(m.detail);
      CHECK(m.outcome != MutantOutcome::Survived);
      CHECK(m.outcome == want[m.fault]);
    }
    CHECK(dev.total() >= 2);
    CHECK(dev.score() == 1.0);
    MESSAGE(label << ": " << dev.count(MutantOutcome::Killed) << " of " << dev.total() << " killed in " << dev.seconds << " s (model: " << model.seconds << " s)");
  }
}
