// tests/suites/convert_runner_test.cpp — one conversion case through the runner: the verdict and the
// record for an honest kernel, each fault a conversion kernel can have (a wrong result, a write before
// or past its output, results that change between runs, "not supported", a hang, a crash in a child
// process), the device table's kernels through their producer, and the conversions suite.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "base/codes.hpp"
#include "base/error.hpp"
#include "kernels/convert/model_convert.hpp"
#include "oracle/convert/convert_check.hpp"
#include "results/conversion.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/ops/conversion/convert_runner.hpp"
#include "suites/run/isolate.hpp"
#include "suites/run/suite.hpp"
#include "tests/support/host_producer.hpp"

using namespace fpcert;

namespace {

enum class Fault { None, FlipOne, WritesBefore, WritesPast, Alternates, Refuses, Hangs, Segfaults };

/// bf16 -> f32 (exact: the shift of the bits; NaNs quieted, as the default Rounder's preserve says) with one
/// injected fault.
class FaultyBf16ToF32 final : public ConversionKernel {
 public:
  explicit FaultyBf16ToF32(Fault f) : fault_(f) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "bf16 -> f32 with a fault"; }
  Backend backend() const override { return Backend::Cpu; }
  const ConversionTraits& conversion() const override { return t_; }
  void run(const ConvertOperands& ops) override {
    ++calls_;
    if (fault_ == Fault::Refuses) throw NotSupportedError("this kernel converts nothing on Tuesdays");
    if (fault_ == Fault::Hangs) throw DeviceError("watchdog: not finished after 1 ms", FailureKind::Hung);
    if (fault_ == Fault::Segfaults) std::raise(SIGSEGV);
    auto* out = static_cast<std::uint32_t*>(ops.dst);
    for (std::int64_t i = 0; i < ops.count; ++i) {
      const auto code = static_cast<std::uint32_t>(load_code(ops.src, i, 2));
      out[i] = code << 16;
      if ((code & 0x7FFFu) > 0x7F80u) out[i] |= 0x400000u;  // a NaN: quieted, payload and sign kept (the declared preserve)
      if (fault_ == Fault::FlipOne && ops.first + static_cast<std::uint64_t>(i) == 0x3f81) out[i] ^= 1;  // 1.0078125's last bit
      if (fault_ == Fault::Alternates && calls_ % 2 == 0 && i == 5) out[i] ^= 0x10000;
    }
    if (fault_ == Fault::WritesPast) out[ops.count] = 0;
    if (fault_ == Fault::WritesBefore) out[-1] = 0;
  }

 private:
  Fault fault_;
  int calls_ = 0;
  std::string name_ = "faulty_bf16_to_f32";
  ConversionTraits t_{&bf16, &f32, Rounder{}, 0};
};

CaseResult run(ConversionKernel& k, ConversionCase c = {}) {
  auto api = make_host_api();
  return run_conversion_case(k, c, *api, {});
}

}  // namespace

TEST_CASE("the CPU model through the runner: the same counts as the oracle's own check, and a record") {
  // bf16 -> f16 rounds (fp16 has 3 more fraction bits but 3 fewer exponent bits): overflow, underflow
  // and subnormal rounding all occur, so the counts can disagree.
  const Rounder r{Rounding::NearestEven, Saturation::Inf, NanPayload::Preserve};
  auto k = make_model_conversion_kernel(bf16, f16, r);
  ConversionCase c;
  c.mpfr_every = 1;
  const CaseResult res = run(*k, c);
  REQUIRE(res.status == CaseStatus::Pass);
  REQUIRE(res.conversion);
  ConvertCheckSpec spec;
  spec.src = &bf16;
  spec.dst = &f16;
  spec.rounder = r;
  const ConvertCheckResult truth = check_conversion(spec);
  CHECK(res.conversion->patterns == truth.patterns);
  CHECK(res.conversion->mpfr_checked == truth.mpfr_checked);
  const ConvertCheckResult back = check_from_json(res.conversion->record, bf16, f16);
  for (int i = 0; i < kOutcomeCount; ++i) CHECK(back.outcomes[i] == truth.outcomes[i]);
  CHECK(truth.outcomes[static_cast<int>(Outcome::RoundedSubnormal)] > 0);
  CHECK(res.conversion->record.at("nondeterministic") == 0);
}

TEST_CASE("a wrong result fails the case with its bits; a stray write or a changing result is caught") {
  FaultyBf16ToF32 flip(Fault::FlipOne);
  const CaseResult f = run(flip);
  CHECK(f.status == CaseStatus::Fail);
  REQUIRE(f.conversion->listed.size() == 1);
  CHECK(f.conversion->listed[0].src_bits == "0x3f81");
  CHECK(f.conversion->listed[0].got_bits == "0x3f810001");

  FaultyBf16ToF32 past(Fault::WritesPast), before(Fault::WritesBefore);
  const CaseResult p = run(past), b = run(before);
  CHECK(p.status == CaseStatus::Crashed);
  CHECK(p.reason.find("wrote past the end of its output") != std::string::npos);
  CHECK(b.status == CaseStatus::Crashed);
  CHECK(b.reason.find("wrote before its output") != std::string::npos);
  CHECK(p.conversion->record.at("status") == "crashed");

  FaultyBf16ToF32 alt(Fault::Alternates);
  const CaseResult a = run(alt);
  CHECK(a.status == CaseStatus::Fail);
  CHECK(a.reason.find("not deterministic") != std::string::npos);
}

TEST_CASE("failures map by their type: not supported, hung; a crash in a child process is contained") {
  FaultyBf16ToF32 refuses(Fault::Refuses), hangs(Fault::Hangs), segv(Fault::Segfaults);
  CHECK(run(refuses).status == CaseStatus::NotSupported);
  const CaseResult h = run(hangs);
  CHECK(h.status == CaseStatus::Hung);  // by FailureKind: the message says "watchdog", not "hung"
  ConversionCase c;
  const CaseResult s = run_case_isolated([&] { return run(segv); }, 60, conversion_skeleton(segv, c));
  CHECK(s.status == CaseStatus::Crashed);
  CHECK(s.reason.find("signal 11") != std::string::npos);
  // A child that never answers is killed at the timeout and the case is hung.
  const CaseResult slow = run_case_isolated(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return CaseResult{};
      },
      0.5, conversion_skeleton(segv, c));
  CHECK(slow.status == CaseStatus::Hung);
}

TEST_CASE("a device table kernel goes through the runner's device sweep: its verdict and record") {
  const DeviceConversion& e = test::entry("f16_to_f32");
  test::HostProducer good;
  good.result = test::model_of(e);
  DeviceTableKernel k(e, &good);
  auto api = make_host_api();
  const CaseResult ok = run_conversion_case(k, ConversionCase{}, *api, {});
  CHECK(ok.status == CaseStatus::Pass);
  REQUIRE(ok.conversion);
  CHECK(ok.conversion->patterns == 65536);
  CHECK(ok.conversion->record.at("name") == "f16_to_f32");
  test::HostProducer bad;
  bad.result = [&](std::uint64_t code) { return test::model_of(e)(code) ^ (code == 0x3c00 ? 1u : 0u); };
  DeviceTableKernel kb(e, &bad);
  const CaseResult no = run_conversion_case(kb, ConversionCase{}, *api, {});
  CHECK(no.status == CaseStatus::Fail);
  CHECK(no.conversion->mismatches == 1);
  test::HostProducer old;
  old.result = test::model_of(test::entry("f32_to_tf32_rn"));
  old.arch = RunningArch{700, 0, 7, 0};
  DeviceTableKernel kold(test::entry("f32_to_tf32_rn"), &old);
  CHECK(run_conversion_case(kold, ConversionCase{}, *api, {}).status == CaseStatus::NotSupported);
}

TEST_CASE("the conversions suite: conversion kernels only, one case each, a run of kind conversion") {
  const SuiteInfo* s = find_suite("conversions");
  REQUIRE(s);
  CHECK(s->operation == Operation::Conversion);
  SuiteRunOptions o;
  const RunResult r = run_suite(*s, {"model_bf16_to_f32", "model_e4m3_to_f16"}, o);
  CHECK(r.kind == RunKind::Conversion);
  REQUIRE(r.cases.size() == 2);
  for (const auto& c : r.cases) {
    CHECK(c.status == CaseStatus::Pass);
    REQUIRE(c.conversion);
    CHECK(c.conversion->patterns == 256 * (c.kernel == "model_bf16_to_f32" ? 256 : 1));
  }
  CHECK_THROWS_AS(run_suite(*s, {"model_gemm_f32"}, o), InputError);
  CHECK_THROWS_AS(run_suite(*find_suite("quick"), {"model_bf16_to_f32"}, o), InputError);
  // Without a device the suite's own kernels are fpcert's model of each table conversion.
  std::string where;
  const auto names = conversion_suite_kernels(false, &where);
  REQUIRE_FALSE(names.empty());
  for (const auto& n : names) CHECK(make_conversion_kernel(n) != nullptr);
}
