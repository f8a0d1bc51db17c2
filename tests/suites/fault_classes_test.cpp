// tests/suites/fault_classes_test.cpp — the classes of a 32-bit source's codes (suites/ops/conversion/fault_classes.hpp;
// docs/mutation.md, "Sources of 32 bits"): every source code converts as its class's representative under the declared
// conversion and under each fault's change (the argument that lets a class sweep call a fault "not applicable"), each
// fault's classes decide it as the sweep of every class does, and each fault is killed on every 32-bit model by the
// conversions check (fpcert's model and MPFR) and named by the diagnosis.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "kernels/convert/model_convert.hpp"
#include "kernels/device/device_api.hpp"
#include "oracle/round.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/ops/conversion/fault_classes.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/conversion_fault_table.hpp"

using namespace fpcert;

namespace {

/// fpcert's models of the device table's conversions from sources of more than `bits` bits.
std::vector<std::string> models_wider_than(int bits) {
  std::vector<std::string> models;
  for (const std::string& name : conversion_suite_kernels(false, nullptr)) {
    const auto k = make_conversion_kernel(name);
    if (k && k->backend() == Backend::Cpu && k->conversion().src->total_bits() > bits) models.push_back(name);
  }
  return models;
}

/// The result of `code` under the declaration with fault f (the injector's rule, written again from the fault's meaning).
std::uint64_t expected_result(const ConversionTraits& t, ConversionFault f, std::uint64_t code) {
  const Format &src = *t.src, &dst = *t.dst;
  Rounder r = t.rounder;
  if (f == ConversionFault::TowardZero) r.rounding = Rounding::TowardZero;
  if (f == ConversionFault::TiesAway) r.rounding = Rounding::NearestAway;
  if (f == ConversionFault::NoSaturation) r.saturation = dst.has_inf() ? Saturation::Inf : Saturation::NaN;
  if (f == ConversionFault::SaturatesNan) r.saturation = Saturation::Finite;
  if (f == ConversionFault::NanPayloadLost) r.nan = NanPayload::Canonical;
  std::uint64_t res = convert(src, code, dst, r, 0).code;
  const FpClass c = classify(dst, res);
  if (f == ConversionFault::FlushOutputs && c == FpClass::Subnormal) res &= dst.sign_mask();
  if (f == ConversionFault::ZeroSignLost && c == FpClass::Zero) res &= ~dst.sign_mask();
  if (f == ConversionFault::NanNotQuieted && c == FpClass::NaN && classify(src, code) == FpClass::NaN && dst.frac_bits > 0) {
    const std::uint64_t qd = std::uint64_t{1} << (dst.frac_bits - 1), qs = std::uint64_t{1} << (src.frac_bits - 1);
    res = (res & ~qd) | ((code & qs) ? qd : 0);
  }
  return res;
}

}  // namespace

TEST_CASE("conversion classes: every fp32 code converts as its representative, declared and under each fault; the scaled middle") {
  const std::vector<std::string> models = models_wider_than(24);
  REQUIRE(models.size() >= 20);
  for (const std::string& name : models) {
    const auto k = make_conversion_kernel(name);
    const ConversionTraits& t = k->conversion();
    CAPTURE(name);
    REQUIRE(conversion_classes_problem(t).empty());
    // Random codes, and codes made to sit on the class boundaries: each exponent, a rest of one bit or all ones.
    std::vector<std::uint64_t> codes;
    for (std::uint64_t i = 0; i < 200000; ++i) {
      const auto b = philox_4x32(0x7465737431, 0, i);
      std::uint64_t c = b[0];
      if (i % 4 == 1) c = (c & ~std::uint64_t{0xFFF}) | (std::uint64_t{1} << (b[1] % 12));  // one sticky bit
      if (i % 4 == 2) c |= 0x1FFF;                                                          // all ones below
      codes.push_back(c & 0xFFFFFFFF);
    }
    int checked = 0, scaled = 0;
    for (const std::uint64_t c : codes) {
      const std::uint64_t rep = conversion_class_representative(t, c);
      // The scaled middle: a fault changes the result of the code exactly when it changes that of its scaled copy.
      const std::uint64_t mid = conversion_class_scaled(t, rep);
      scaled += mid != rep;
      for (const ConversionFaultInfo& f : conversion_fault_catalogue()) {
        const auto changes = [&](std::uint64_t x) { return expected_result(t, f.fault, x) != convert(*t.src, x, *t.dst, t.rounder, 0).code; };
        if (changes(c) != changes(mid)) {
          CAPTURE(f.id);
          CAPTURE(mid);
          FAIL_CHECK("a fault changes one of a code and its scaled copy only");
        }
      }
      CAPTURE(c);
      CAPTURE(rep);
      REQUIRE((classify(*t.src, c) == FpClass::NaN) == (classify(*t.src, rep) == FpClass::NaN));
      if (convert(*t.src, c, *t.dst, t.rounder, 0).code != convert(*t.src, rep, *t.dst, t.rounder, 0).code) {
        FAIL_CHECK("declared conversion differs");
        break;
      }
      for (const ConversionFaultInfo& f : conversion_fault_catalogue())
        if (expected_result(t, f.fault, c) != expected_result(t, f.fault, rep)) {
          CAPTURE(f.id);
          FAIL_CHECK("faulty conversion differs");
        }
      ++checked;
    }
    CHECK(checked == 200000);
    if (t.dst->emax() - t.dst->emin() > 8) CHECK(scaled > 1000);  // the middle is exercised where the destination has one
  }
  // The argument is refused where it does not hold, with the reason.
  const auto widen = make_conversion_kernel("model_f16_to_f32");
  REQUIRE(widen);
  CHECK(!conversion_classes_problem(widen->conversion()).empty());
  CHECK_THROWS_AS(conversion_all_class_codes(widen->conversion()), std::invalid_argument);
  auto widen_kernel = make_conversion_kernel("model_f16_to_f32");
  CHECK_THROWS_WITH_AS(diagnose_conversion_kernel(*widen_kernel, "classes"), doctest::Contains("no 'classes' case"), InputError);
}

TEST_CASE("conversion classes: a fault's own classes decide it as every class does") {
  // Each fault's classes are a part of all classes (ties, the overflow boundary, the underflow range, NaNs): the fault
  // changes a code of its part exactly when it changes a code of all of them (computed by fpcert's rounding core).
  for (const std::string& name : models_wider_than(24)) {
    const auto k = make_conversion_kernel(name);
    const ConversionTraits& t = k->conversion();
    const ConversionClassCodes all = conversion_all_class_codes(t, 0);
    for (const ConversionFaultInfo& f : conversion_fault_catalogue()) {
      if (!conversion_fault_not_applicable(f.fault, t).empty()) continue;
      const auto changes = [&](const ConversionClassCodes& cc) {
        for (const auto& [first, count] : cc.ranges)
          for (std::uint64_t c = first; c < first + count; ++c)
            if (expected_result(t, f.fault, c) != convert(*t.src, c, *t.dst, t.rounder, 0).code) return true;
        return false;
      };
      const ConversionClassCodes own = conversion_fault_class_codes(f.fault, t, 0);
      CAPTURE(name);
      CAPTURE(f.id);
      CHECK(own.class_codes <= all.class_codes);
      CHECK(changes(own) == changes(all));
    }
  }
}

TEST_CASE("conversion faults on 32-bit sources: killed by the conversions check on their classes and named by the diagnosis") {
  // fp32 sources on their classes; tf32 (19 bits) on every code.
  const std::vector<std::string> models = models_wider_than(16);
  CHECK(test::check_conversion_fault_table(measure_conversion_faults(models), models.size()) > 60);
}

TEST_CASE("fpcert mutate on an fp32 conversion: every fault decided on its classes, none survives") {
  // fp32 -> e4m3 (satfinite, NVIDIA's NaN): ties, toward zero, FTZ and the zero's sign change results; saturating to Inf
  // (NaN: e4m3 has no Inf) does too.
  double score = 0;
  std::map<std::string, MutantOutcome> outcome = test::conversion_mutation_outcomes("model_f32_to_e4m3_satfinite", &score);
  for (const char* id : {"cvt_rz", "cvt_ties_away", "cvt_ftz", "cvt_zero_sign_lost", "cvt_no_saturation"}) {
    CAPTURE(id);
    CHECK(outcome[id] == MutantOutcome::Killed);
  }
  CHECK(score == 1.0);
  // fp32 -> bf16 toward zero: FTZ changes results (bf16 has fp32's subnormal range down to 2^-133); none survives.
  CHECK(test::conversion_mutation_outcomes("model_f32_to_bf16_rz")["cvt_ftz"] == MutantOutcome::Killed);
}

TEST_CASE("conversion faults on 32-bit sources: the NaN payload lost, where payloads are declared kept, killed and named") {
  // No model of the table declares NaN payloads kept; a host kernel declaring fp32 -> bf16 with `preserve` (as a plugin
  // may) gets cvt_nan_payload_lost, found on its classes (every NaN class) and named nan=canonical by the diagnosis.
  Rounder r = Rounder::nearest(bf16);
  r.nan = NanPayload::Preserve;
  const auto probe = make_model_conversion_kernel(f32, bf16, r, 0, "preserve_f32_to_bf16");
  REQUIRE(conversion_fault_not_applicable(ConversionFault::NanPayloadLost, probe->conversion()).empty());
  const auto mutant = make_conversion_fault_injector(make_model_conversion_kernel(f32, bf16, r, 0, "preserve_f32_to_bf16"),
                                                     ConversionFault::NanPayloadLost);
  ConversionCase c = conversion_suite_case(*mutant, SuiteRunOptions{});
  c.ranges = conversion_fault_class_codes(ConversionFault::NanPayloadLost, probe->conversion()).ranges;
  c.mpfr_every = 0;
  const auto host = make_host_api();
  const CaseResult killed = run_conversion_case(*mutant, c, *host, ConversionRunOptions{});
  CAPTURE(killed.reason);
  CHECK(killed.status == CaseStatus::Fail);
  const DiagnosisRecord d = diagnose_conversion_kernel(*mutant, "classes", 40);
  REQUIRE(!d.ranked.empty());
  CHECK(d.kind == "consistent");
  const DiagnosisHypothesis& top = d.ranked.front();
  CAPTURE(top.id);
  CHECK((top.id == "nan=canonical" || std::find(top.same_as.begin(), top.same_as.end(), "nan=canonical") != top.same_as.end()));
}
