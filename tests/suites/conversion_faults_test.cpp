// tests/suites/conversion_faults_test.cpp — the conversion faults kernels make in practice (suites/ops/conversion/
// conversion_faults.hpp; docs/diagnose.md, "Conversion faults"), injected into fpcert's conversion model of each of the
// device table's conversions from a source of at most 16 bits (every code swept): each fault that changes a result is
// refused by the conversions suite's check (against fpcert's model and MPFR) and named by the diagnosis. The table of
// docs/diagnose.md is this test's output (MESSAGE lines).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "base/error.hpp"
#include "kernels/convert/device_convert.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/round.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/conversion_fault_table.hpp"
#include "tests/support/host_producer.hpp"

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
  CHECK(test::check_conversion_fault_table(measure_conversion_faults(models), models.size()) > 100);
}

TEST_CASE("fpcert mutate on a conversion kernel: every applicable conversion fault killed by the conversions case") {
  const SuiteInfo* suite = find_suite("conversions");
  REQUIRE(suite);
  // bf16 -> e2m1, round to nearest, satfinite: rounding rules, FTZ and the sign of zero can change its results; e2m1 has
  // no Inf nor NaN, so the saturation and NaN faults cannot (not applicable, with the reason).
  double score = 0;
  std::map<std::string, MutantOutcome> outcome = test::conversion_mutation_outcomes("model_bf16_to_e2m1_rn", &score);
  for (const char* id : {"cvt_rz", "cvt_ties_away", "cvt_ftz", "cvt_zero_sign_lost"}) {
    CAPTURE(id);
    CHECK(outcome[id] == MutantOutcome::Killed);
  }
  for (const char* id : {"cvt_no_saturation", "cvt_saturates", "cvt_nan_payload_lost"}) {
    CAPTURE(id);
    CHECK(outcome[id] == MutantOutcome::NotApplicable);
  }
  CHECK(score == 1.0);
  // fp16 -> fp32 is exact: no rounding rule, no overflow, no subnormal result can change; its zero's sign can.
  CHECK(test::conversion_mutation_outcomes("model_f16_to_f32")["cvt_zero_sign_lost"] == MutantOutcome::Killed);
  // --fault names the GEMM catalogue's faults: refused for a conversion kernel, with the reason.
  MutationOptions only;
  only.faults = {Fault::AccF16};
  CHECK_THROWS_WITH_AS(run_mutation(*suite, "model_bf16_to_e2m1_rn", only), doctest::Contains("every conversion fault"), InputError);
}

TEST_CASE("device conversion kernels: a fault applied to the results as they come back is decided as on the host model") {
  // The device table's bf16 -> e4m3 (satfinite) with a producer that plays the GPU on the host; each fault injected into
  // its results before the sweep's check (ConversionCase::device_fault) must be killed exactly where the host injector
  // around fpcert's model of the same conversion is (fpcert mutate on model_bf16_to_e4m3_satfinite).
  const DeviceConversion* e = find_device_conversion("bf16_to_e4m3_satfinite");
  REQUIRE(e);
  test::HostProducer producer;
  producer.result = [&](std::uint64_t code) {
    return static_cast<std::uint32_t>(to_container(*e->dst, convert(*e->src, code, *e->dst, e->rounder, 0).code));
  };
  DeviceTableKernel k(*e, &producer);
  const ConversionCase c = conversion_suite_case(k, SuiteRunOptions{});
  const auto host = make_host_api();
  REQUIRE(run_conversion_case(k, c, *host, ConversionRunOptions{}).status == CaseStatus::Pass);
  const MutationScore model = run_mutation(*find_suite("conversions"), "model_bf16_to_e4m3_satfinite", MutationOptions{});
  int killed = 0;
  for (const MutantResult& m : model.mutants) {
    if (m.outcome == MutantOutcome::NotApplicable && m.detail.find("changes no result") == std::string::npos) continue;
    const ConversionFaultInfo* f = nullptr;
    for (const ConversionFaultInfo& i : conversion_fault_catalogue())
      if (m.fault == i.id) f = &i;
    REQUIRE(f);
    ConversionCase fc = c;
    fc.device_fault = conversion_device_fault(f->fault, k.conversion());
    const CaseResult r = run_conversion_case(k, fc, *host, ConversionRunOptions{});
    CAPTURE(m.fault);
    CAPTURE(r.reason);
    CHECK((r.status == CaseStatus::Fail) == (m.outcome == MutantOutcome::Killed));
    CHECK(r.status != CaseStatus::Error);
    killed += r.status == CaseStatus::Fail;
  }
  CHECK(killed >= 4);  // toward zero, ties away, no saturation, FTZ, the zero's sign
  // certify measures host kernels' scores and names a device table kernel not measured, with the reason.
  CHECK(conversion_mutation_not_measured("model_bf16_to_e4m3_satfinite").empty());
  if (make_conversion_kernel("bf16_to_e4m3_satfinite"))  // a CUDA build registers the table's kernels
    CHECK(conversion_mutation_not_measured("bf16_to_e4m3_satfinite").find("swept on the GPU by fpcert mutate") != std::string::npos);
  CHECK(!conversion_mutation_not_measured("no_such_kernel").empty());
}
