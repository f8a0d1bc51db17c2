// tests/suites/device_check_host_test.cpp — the device check's host side (suites/ops/conversion/device_sweep.cpp, the
// finish of each device-checked chunk, with its NaN fast path) reports exactly what the host check
// reports for the same results: a host checker (tests/support/host_checker.hpp) plays the CUDA device
// check on a HostProducer's results, faults injected, and both reports are compared field by field
// (mpfr_checked aside: the NaN fast path runs MPFR on fewer NaN inputs, and on as many with
// nan_mpfr_every). And the MPFR sample still catches a model whose NaN policy is wrong.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_model.hpp"
#include "oracle/round.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/host_checker.hpp"
#include "tests/support/host_producer.hpp"
#include "tests/support/same_report.hpp"

using namespace fpcert;
using fpcert::test::entry;
using fpcert::test::HostChecker;
using fpcert::test::HostProducer;
using fpcert::test::model_of;
using fpcert::test::require_same_sweep_report;

namespace {

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

bool is_nan_input(const DeviceConversion& e, std::uint64_t code) { return classify(*e.src, code) == FpClass::NaN; }

struct Scenario {
  std::string name;
  const DeviceConversion* e;
  std::function<std::uint32_t(std::uint64_t)> result;  // container layout
  Ranges ranges;                                       // empty: every code
  bool strict_nan = false;
};

/// Runs a scenario through the host check and through the device check played by the host checker
/// (fast NaN path, and MPFR on every NaN input), with several thread counts and chunk sizes, and
/// requires identical reports. Returns the host check's report.
DeviceSweepResult run_both(const Scenario& sc, std::size_t checker_max_listed = std::size_t{1} << 16) {
  CAPTURE(sc.name);
  HostProducer p;
  p.chunk = 1 << 14;
  p.result = sc.result;
  SweepOptions opt;
  opt.ranges = sc.ranges;
  opt.strict_nan = sc.strict_nan;
  opt.mpfr_sample = 61;  // many sample codes among the NaN inputs of these small ranges
  opt.threads = 1;
  const DeviceSweepResult host = sweep_conversion(p, *sc.e, opt);
  for (const unsigned threads : {1u, 3u}) {
    for (const bool mpfr_every : {false, true}) {
      CAPTURE(threads);
      CAPTURE(mpfr_every);
      HostChecker checker(p, std::uint64_t{1} << 15, checker_max_listed);
      SweepOptions o = opt;
      o.threads = threads;
      o.checker = &checker;
      o.nan_mpfr_every = mpfr_every;
      const DeviceSweepResult dev = sweep_conversion(p, *sc.e, o);
      CHECK(checker.enqueued > 1);
      require_same_sweep_report(dev, host);
      // MPFR on every NaN input: MPFR on exactly the host check's codes; the fast path on no more.
      if (mpfr_every) CHECK(dev.check.mpfr_checked == host.check.mpfr_checked);
      else CHECK(dev.check.mpfr_checked <= host.check.mpfr_checked);
    }
  }
  return host;
}

}  // namespace

TEST_CASE("device check on the host: the same report as the host check, NaN faults and finite faults, strict-nan on and off") {
  const DeviceConversion& f16e = entry("f32_to_f16_rn");  // declares nvidia: every NaN input -> 0x7fff
  REQUIRE(f16e.rounder.nan == NanPayload::Nvidia);
  DeviceConversion anye = f16e;  // the same conversion declaring "any NaN": the NaN fast path's accepted differences
  anye.rounder.nan = NanPayload::Any;
  // Around 1 (finite), the top binade, Inf and the first NaNs of both signs, and the last NaNs.
  const Ranges f32_ranges = {{0x3F7F0000u, 0x20000}, {0x7F7F0000u, 0x20000}, {0x7FFF0000u, 0x10000},
                             {0xFF7F0000u, 0x20000}, {0xFFFF8000u, 0x8000}};
  const auto fp = model_of(f16e);  // fpcert's own results (NaN: 0x7fff)
  const Rounder preserve{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  auto with_nan = [&](std::function<std::uint32_t(std::uint64_t)> nan) {
    return [fp, nan, &f16e](std::uint64_t c) { return is_nan_input(f16e, c) ? nan(c) : fp(c); };
  };
  struct Fault {
    std::string name;
    std::function<std::uint32_t(std::uint64_t)> result;
  };
  const std::vector<Fault> faults = {
      {"NVIDIA's NaN (cvt's 0x7fff)", with_nan([](std::uint64_t) { return 0x7FFFu; })},
      {"payload preserved (sign | 0x7e00 | payload >> 13)",
       with_nan([&](std::uint64_t c) { return static_cast<std::uint32_t>(convert(f32, c, f16, preserve).code); })},
      {"quieted, payload from the low bits, sign dropped", with_nan([](std::uint64_t c) { return 0x7E00u | static_cast<std::uint32_t>(c & 0x1FF); })},
      {"a few NaNs become Inf or a number", with_nan([](std::uint64_t c) {
         if (c % 997 == 3) return 0x7C00u;  // +Inf
         if (c % 1009 == 5) return 0x3C00u;  // 1.0
         return 0x7FFFu;
       })},
      {"a finite result off by one",
       [&](std::uint64_t c) { return c == 0x3F800001u ? (fp(c) ^ 1u) : is_nan_input(f16e, c) ? 0x7FFFu : fp(c); }},
  };
  for (const DeviceConversion* e : {&f16e, static_cast<const DeviceConversion*>(&anye)})
    for (const bool strict : {false, true})
      for (const Fault& f : faults) {
        Scenario sc{f.name + " under " + std::string(to_string(e->rounder.nan)) + (strict ? " (--strict-nan)" : ""), e, f.result,
                    f32_ranges, strict};
        const DeviceSweepResult host = run_both(sc);
        // The scenarios are not vacuous: NaN inputs, and NaN differences or mismatches where they should be.
        CHECK(host.nan.inputs > 0x10000);
        const bool clean = f.name.rfind("NVIDIA's", 0) == 0 && e == &f16e;
        CHECK((host.check.nan_differences + host.check.mismatches > 0) == !clean);
        if (e == &f16e) CHECK(host.check.nan_differences == 0);  // one code per NaN input: a difference is a mismatch
        if (e == &anye && f.name.rfind("a few NaNs", 0) != 0 && f.name.rfind("a finite", 0) != 0) CHECK(host.check.mismatches == 0);
      }

  // Every code of a 16-bit source, a statement the device keeps and one it breaks (enforced: every NaN -> 0x7f).
  const DeviceConversion& e4 = entry("bf16_to_e4m3_nosat");
  REQUIRE(nan_statement(e4, false).decisive);
  const DeviceSweepResult kept = run_both({"bf16 -> e4m3, canonical 0x7f as stated", &e4, model_of(e4, 0x7F), {}});
  CHECK(kept.passed());
  CHECK(kept.nan.as_stated == kept.nan.inputs);
  const auto e4m = model_of(e4);
  const DeviceSweepResult broken = run_both({"bf16 -> e4m3, the sign kept against the statement", &e4,
                                             [&](std::uint64_t c) { return is_nan_input(e4, c) && (c & 0x8000) ? 0xFFu : e4m(c); }, {}});
  CHECK(!broken.passed());
  CHECK(broken.nan.not_as_stated == 127);
  CHECK(broken.check.mismatches == 127);
  CHECK(!broken.nan.listed.empty());
  const DeviceConversion& bf = entry("bf16_to_f16_direct");
  run_both({"bf16 -> f16, NVIDIA's 0x7fff", &bf, model_of(bf, 0x7FFF), {}});

  // A Rounder that declares the canonical NaN: any other NaN is a mismatch, listed (the independent path).
  DeviceConversion canon = f16e;
  canon.rounder.nan = NanPayload::Canonical;
  const DeviceSweepResult c = run_both({"canonical-NaN Rounder, the sign kept", &canon, [&](std::uint64_t code) {
                                          return is_nan_input(canon, code) ? (code >> 31 ? 0xFE00u : 0x7E00u) : fp(code);
                                        },
                                        f32_ranges});
  CHECK(c.check.mismatches > 0);
  CHECK(c.check.nan_differences == 0);
}

TEST_CASE("device check on the host: a chunk with more differences than the list holds is re-checked on the host, same report") {
  const DeviceConversion& e = entry("f32_to_f16_rn");
  const auto fp = model_of(e);
  Scenario sc{"every 64th finite result off by one", &e,
              [&](std::uint64_t c) { return is_nan_input(e, c) ? 0x7FFFu : (c % 64 == 0 ? fp(c) ^ 1u : fp(c)); },
              {{0x3F7F0000u, 0x20000}, {0x7F7F0000u, 0x20000}}};
  const DeviceSweepResult host = run_both(sc, 16);  // 16 listed per chunk: every finite chunk overflows
  CHECK(host.check.mismatches == 0x40000 / 64 - 0x10000 / 64 + 1);  // finite codes divisible by 64 (Inf 0x7f800000 among them)
}

TEST_CASE("device check: the MPFR sample catches a model whose NaN policy is wrong, on the NaN fast path") {
  // An entry declaring "any NaN" (the fast path accepts every NaN result off the sample) and a model
  // copied with a wrong NaN code (NVIDIA's 0x7fff where the model's stand-in is the canonical 0x7e00), as a
  // stale device build and host side would share it: the device writes 0x7fff, the fast path takes the
  // model as the truth off the sample, and MPFR on the sampled NaN inputs finds the model wrong on each.
  DeviceConversion e = entry("f32_to_f16_rn");
  e.rounder.nan = NanPayload::Any;
  ConvertModel wrong = make_convert_model(*e.src, *e.dst, e.rounder);
  REQUIRE(wrong.dst.nan_or == 0x7E00);
  wrong.dst.nan_or = 0x7FFF;
  HostProducer p;
  p.chunk = 1 << 16;
  p.result = model_of(e, 0x7FFF);
  const Ranges ranges = {{0x7F800000u, 0x40000}, {0xFF800000u, 0x40000}};
  std::uint64_t sampled_nans = 0;
  SweepOptions opt;
  opt.ranges = ranges;
  opt.mpfr_sample = 4099;
  for (const auto& [first, count] : ranges)
    for (std::uint64_t c = first; c < first + count; ++c)
      if (c % opt.mpfr_sample == 0 && is_nan_input(e, c)) ++sampled_nans;
  REQUIRE(sampled_nans > 20);
  HostChecker checker(p, std::uint64_t{1} << 18);
  checker.model = &wrong;
  opt.checker = &checker;
  opt.model = &wrong;
  const DeviceSweepResult r = sweep_conversion(p, e, opt);
  CHECK(r.checked_on == "device");
  CHECK(!r.passed());
  CHECK(r.check.model_mismatches == sampled_nans);
  CHECK(r.check.mismatches == 0);  // the device's 0x7fff is a NaN: what "any" accepts
  REQUIRE(!r.check.listed.empty());
  CHECK(r.check.listed[0].model_bug);
  CHECK(r.check.mpfr_checked < sampled_nans + 200);  // the sample, not every NaN input

  // The right model: the same sweep passes (the failure above is the wrong model's).
  HostChecker right(p, std::uint64_t{1} << 18);
  opt.checker = &right;
  opt.model = nullptr;
  const DeviceSweepResult ok = sweep_conversion(p, e, opt);
  CHECK(ok.passed());
  CHECK(ok.check.model_mismatches == 0);
}
