// tests/plugin/nan_policy_test.cpp — a declared NaN convention is enforced exactly: a bf16 -> fp16 conversion
// that declares the canonical NaN and writes the source's payload instead fails, over all 65536 patterns,
// the correct one beside it (tests/plugin/fixtures/buggy_plugin.cpp) passes; each fixture of
// tests/plugin/fixtures/nan_plugin.cpp (nvidia, any, CUDA's and ml_dtypes' finite-only NaN, a minor 1
// table) passes or fails for its own NaN results.
#include <doctest/doctest.h>

#include <exception>
#include <string>

#include "kernels/device/device_api.hpp"
#include "plugin/loader.hpp"
#include "results/conversion.hpp"
#include "suites/ops/conversion/convert_runner.hpp"

using namespace fpcert;

namespace {

ConvertCheckResult check_all(const std::string& name, CaseStatus& status) {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cpu.so");
  auto c = make_conversion_kernel(name);
  REQUIRE(c);
  REQUIRE(c->conversion().rounder.nan == NanPayload::Canonical);
  ConversionCase cc;
  cc.mpfr_every = 1;
  auto api = make_host_api();
  ConversionRunOptions o;
  o.chunk = 10007;  // chunks that do not divide 65536
  const CaseResult r = run_conversion_case(*c, cc, *api, o);
  status = r.status;
  REQUIRE(r.conversion);
  return check_from_json(r.conversion->record, *c->conversion().src, *c->conversion().dst);
}

}  // namespace

TEST_CASE("declared canonical NaN: another NaN is a mismatch, not a NaN-vs-NaN difference") {
  CaseStatus st{};
  const ConvertCheckResult ok = check_all("ok_cvt_bf16_f16_canonical", st);
  CHECK(st == CaseStatus::Pass);
  CHECK(ok.patterns == 65536);
  CHECK(ok.mismatches == 0);
  CHECK(ok.nan_differences == 0);
  const ConvertCheckResult bad = check_all("bug_cvt_bf16_f16_noncanonical", st);
  CHECK(st == CaseStatus::Fail);
  // bf16 has 2 x 127 NaN codes (sign, exponent 0xFF, fraction 1..0x7F); the bug writes
  // sign | 0x7E00 | fraction << 3, which is the canonical 0x7E00 only for +0x7FC0 (fraction 0x40,
  // the quiet bit alone): 253 mismatches.
  CHECK(bad.mismatches == 253);
  CHECK(bad.nan_differences == 0);
}

// ---- the declarable NaN conventions (ABI minor 2): tests/plugin/fixtures/nan_plugin.cpp ----------------

namespace {

struct Checked {
  CaseStatus status{};
  ConvertCheckResult check;
  std::string reason;
};

Checked run_nan_kernel(const std::string& lib, const std::string& name) {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/" + lib);
  auto c = make_conversion_kernel(name);
  REQUIRE(c);
  ConversionCase cc;
  cc.mpfr_every = 1;
  auto api = make_host_api();
  const CaseResult r = run_conversion_case(*c, cc, *api, ConversionRunOptions{});
  REQUIRE(r.conversion);
  CHECK(r.conversion->nan_payload == std::string(to_string(c->conversion().rounder.nan)));  // the report shows the declaration
  return {r.status, check_from_json(r.conversion->record, *c->conversion().src, *c->conversion().dst), r.reason};
}

/// Every listed mismatch has a NaN source (bf16 exponent 0xFF, fraction != 0): the fixture fails for its
/// NaN results and nothing else.
void require_only_nan_sources(const ConvertCheckResult& r, std::uint64_t want_got) {
  REQUIRE_FALSE(r.listed.empty());
  for (const auto& m : r.listed) {
    CHECK((m.src & 0x7FFF) > 0x7F80);
    CHECK(m.got == want_got);
    CHECK_FALSE(m.model_bug);
  }
}

}  // namespace

// bf16 has 254 NaN codes, 127 of each sign; every other pattern of these fixtures is exact and right.
TEST_CASE("declared nvidia: NVIDIA's 0x7fffffff passes; the IEEE canonical NaN fails on every NaN input") {
  const Checked ok = run_nan_kernel("libnan_cpu.so", "nan_ok_bf16_f32_nvidia");
  CHECK(ok.status == CaseStatus::Pass);
  CHECK(ok.check.patterns == 65536);
  CHECK(ok.check.mismatches == 0);
  CHECK(ok.check.nan_differences == 0);
  const Checked bad = run_nan_kernel("libnan_cpu.so", "nan_bug_bf16_f32_nvidia_writes_canonical");
  CHECK(bad.status == CaseStatus::Fail);
  CHECK(bad.check.mismatches == 254);
  require_only_nan_sources(bad.check, 0x7FC00000);
  for (const auto& m : bad.check.listed) CHECK(m.expected == 0x7FFFFFFF);
}

TEST_CASE("declared any: a NaN of any payload and sign passes; a number for a NaN input fails") {
  const Checked ok = run_nan_kernel("libnan_cpu.so", "nan_ok_bf16_f32_any");
  CHECK(ok.status == CaseStatus::Pass);
  CHECK(ok.check.mismatches == 0);
  // The bit move differs from the model's stand-in (0x7fc00000) on every NaN but +0x7fc0 itself: 253.
  CHECK(ok.check.nan_differences == 253);
  const Checked bad = run_nan_kernel("libnan_cpu.so", "nan_bug_bf16_f32_any_writes_number");
  CHECK(bad.status == CaseStatus::Fail);
  CHECK(bad.check.mismatches == 254);
  CHECK(bad.check.nan_differences == 0);
  require_only_nan_sources(bad.check, 0);
}

TEST_CASE("finite-only e2m1: CUDA's +6 and ml_dtypes' signed zeros are each right under their own declaration") {
  CHECK(run_nan_kernel("libnan_cpu.so", "nan_ok_bf16_e2m1_cuda").status == CaseStatus::Pass);
  const Checked ml = run_nan_kernel("libnan_cpu.so", "nan_ok_bf16_e2m1_ml_dtypes");
  CHECK(ml.status == CaseStatus::Pass);
  CHECK(ml.check.mismatches == 0);
  const Checked bad = run_nan_kernel("libnan_cpu.so", "nan_bug_bf16_e2m1_ml_dtypes_writes_cuda");
  CHECK(bad.status == CaseStatus::Fail);
  CHECK(bad.check.mismatches == 254);
  require_only_nan_sources(bad.check, 0x7);
  // -6 for a negative NaN is not what CUDA writes (PTX: positive MAX_NORM): the 127 negative NaNs fail.
  const Checked sign = run_nan_kernel("libnan_cpu.so", "nan_bug_bf16_e2m1_cuda_keeps_sign");
  CHECK(sign.status == CaseStatus::Fail);
  CHECK(sign.check.mismatches == 127);
  require_only_nan_sources(sign.check, 0xF);
}

TEST_CASE("a plugin built for ABI minor 1 keeps its meaning: PRESERVE counts other NaNs apart (unless --strict-nan)") {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libnan_legacy_cpu.so");
  auto c = make_conversion_kernel("nan_legacy_bf16_f32_preserve");
  REQUIRE(c);
  CHECK(c->conversion().rounder.nan == NanPayload::Preserve);
  CHECK(c->conversion().nan_counted_apart);
  auto api = make_host_api();
  ConversionCase cc;
  cc.mpfr_every = 1;
  const CaseResult lenient = run_conversion_case(*c, cc, *api, ConversionRunOptions{});
  CHECK(lenient.status == CaseStatus::Pass);
  CHECK(lenient.conversion->record.value("nan_counted_apart", false));
  // preserve's f32 result is the bf16 bits << 16 with the quiet bit set: its low 16 bits are 0, so never
  // 0x7fffffff: all 254 NaN inputs differ.
  CHECK(check_from_json(lenient.conversion->record, bf16, f32).nan_differences == 254);
  cc.check.strict_nan = true;
  const CaseResult strict = run_conversion_case(*c, cc, *api, ConversionRunOptions{});
  CHECK(strict.status == CaseStatus::Fail);
  CHECK(check_from_json(strict.conversion->record, bf16, f32).mismatches == 254);
}

TEST_CASE("a minor 1 table that uses a minor 2 NaN convention is refused by name") {
  try {
    load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libnan_legacy_bad.so");
    FAIL("loaded");
  } catch (const std::exception& e) {
    const std::string m = e.what();
    CHECK(m.find("conversion.nan_payload: value 3 (nvidia) needs plugin ABI minor 2") != std::string::npos);
  }
}
