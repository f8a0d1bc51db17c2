// tests/suites/conversion_faults_test.cpp — the conversion faults kernels make in practice (suites/ops/conversion/
// conversion_faults.hpp; docs/diagnose.md, "Conversion faults"), injected into fpcert's conversion model of each of the
// device table's conversions from a source of at most 16 bits (every code swept): each fault that changes a result is
// refused by the conversions suite's check (against fpcert's model and MPFR) and named by the diagnosis. The table of
// docs/diagnose.md is this test's output (MESSAGE lines).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "base/error.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/run/suite.hpp"

using namespace fpcert;

TEST_CASE("conversion faults: an inapplicable fault is refused with the reason") {
  auto k = make_conversion_kernel("model_f16_to_f32");
  REQUIRE(k);
  CHECK(!conversion_fault_not_applicable(ConversionFault::NoSaturation, k->conversion()).empty());  // nothing overflows: no satfinite declared
  CHECK_THROWS_AS(make_conversion_fault_injector(std::move(k), ConversionFault::NoSaturation), std::invalid_argument);
}

TEST_CASE("conversion faults: each is killed by the conversions check and named by the diagnosis, on every model of a 16-bit source") {
  std::vector<std::string> models;
  for (const std::string& name : conversion_suite_kernels(false, nullptr)) {
    const auto k = make_conversion_kernel(name);
    if (k && k->backend() == Backend::Cpu && k->conversion().src->total_bits() <= 16) models.push_back(name);
  }
  REQUIRE(models.size() >= 20);
  const std::vector<ConversionFaultRow> rows = measure_conversion_faults(models);
  struct Tally {
    int injected = 0, dormant = 0, killed = 0, identified = 0;
  };
  std::map<std::string, Tally> by_fault;
  Tally all;
  for (const ConversionFaultRow& r : rows) {
    CAPTURE(r.kernel);
    CAPTURE(r.fault);
    CAPTURE(r.top);
    for (Tally* t : {&by_fault[r.fault], &all}) {
      ++t->injected;
      if (r.dormant) {
        ++t->dormant;
        continue;
      }
      t->killed += r.killed;
      t->identified += r.identified;
    }
    if (r.dormant) continue;
    CHECK(r.killed);      // every result is checked bit for bit: a changed result is a failed case
    CHECK(r.identified);  // and the hypothesis of the fault reproduces every code
  }
  for (const auto& [fault, t] : by_fault)
    MESSAGE(fault << ": injected " << t.injected << ", dormant " << t.dormant << ", killed " << t.killed << ", identified " << t.identified);
  MESSAGE("all: " << models.size() << " models, injected " << all.injected << ", dormant " << all.dormant << ", killed " << all.killed
                  << ", identified " << all.identified);
  CHECK(all.injected - all.dormant > 100);
}

TEST_CASE("fpcert mutate on a conversion kernel: every applicable conversion fault killed by the conversions case") {
  const SuiteInfo* suite = find_suite("conversions");
  REQUIRE(suite);
  // bf16 -> e2m1, round to nearest, satfinite: rounding rules, FTZ and the sign of zero can change its results; e2m1 has
  // no Inf nor NaN, so the saturation and NaN faults cannot (not applicable, with the reason).
  const MutationScore s = run_mutation(*suite, "model_bf16_to_e2m1_rn", MutationOptions{});
  CHECK(s.invalid_cases.empty());
  std::map<std::string, MutantOutcome> outcome;
  for (const MutantResult& m : s.mutants) {
    CAPTURE(m.fault);
    CAPTURE(m.detail);
    outcome[m.fault] = m.outcome;
    if (m.outcome == MutantOutcome::NotApplicable) CHECK(!m.detail.empty());
  }
  CHECK(outcome.size() == conversion_fault_catalogue().size());
  for (const char* id : {"cvt_rz", "cvt_ties_away", "cvt_ftz", "cvt_zero_sign_lost"}) {
    CAPTURE(id);
    CHECK(outcome[id] == MutantOutcome::Killed);
  }
  for (const char* id : {"cvt_no_saturation", "cvt_saturates", "cvt_nan_payload_lost"}) {
    CAPTURE(id);
    CHECK(outcome[id] == MutantOutcome::NotApplicable);
  }
  CHECK(s.total() >= 4);
  CHECK(s.score() == 1.0);
  // fp16 -> fp32 is exact: no rounding rule, no overflow, no subnormal result can change; its zero's sign can.
  const MutationScore widen = run_mutation(*suite, "model_f16_to_f32", MutationOptions{});
  for (const MutantResult& m : widen.mutants) {
    CAPTURE(m.fault);
    CAPTURE(m.detail);
    CHECK(m.outcome != MutantOutcome::Survived);
  }
  // --fault names the GEMM catalogue's faults: refused for a conversion kernel, with the reason.
  MutationOptions only;
  only.faults = {Fault::AccF16};
  CHECK_THROWS_WITH_AS(run_mutation(*suite, "model_bf16_to_e2m1_rn", only), doctest::Contains("every conversion fault"), InputError);
}
