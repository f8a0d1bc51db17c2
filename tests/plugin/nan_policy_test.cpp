// tests/plugin/nan_policy_test.cpp — a declared NaN policy is enforced: a bf16 -> fp16 conversion that
// declares the canonical NaN and writes the source's payload instead fails, over all 65536 patterns;
// the correct one beside it (tests/plugin/fixtures/buggy_plugin.cpp) passes.
#include <doctest/doctest.h>

#include "kernels/device/device_api.hpp"
#include "plugin/loader.hpp"
#include "results/conversion.hpp"
#include "suites/convert_runner.hpp"

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
