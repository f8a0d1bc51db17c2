// tests/suites/conversion_faults_test.cpp — the conversion faults kernels make in practice (suites/ops/conversion/
// conversion_faults.hpp; docs/diagnose.md, "Conversion faults"), injected into fpcert's conversion model of each of the
// device table's conversions from a source of at most 16 bits (every code swept): each fault that changes a result is
// refused by the conversions suite's check (against fpcert's model and MPFR) and named by the diagnosis. The table of
// docs/diagnose.md is this test's output (MESSAGE lines).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"

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
