// tests/plugin/nan_policy_test.cpp — a declared NaN policy is enforced: a bf16 -> fp16 conversion that
// declares the canonical NaN and writes the source's payload instead fails, over all 65536 patterns;
// the correct one beside it (tests/plugin/fixtures/buggy_plugin.cpp) passes.
#include <doctest/doctest.h>

#include "kernels/device/device_api.hpp"
#include "plugin/loader.hpp"

using namespace fpcert;

namespace {

ConvertCheckResult check_all(const std::string& name) {
  load_plugin(std::string(FPCERT_TEST_PLUGIN_DIR) + "/libbuggy_cpu.so");
  auto c = make_plugin_converter(name);
  REQUIRE(c);
  REQUIRE(c->rounder().nan == NanPayload::Canonical);
  ConvertCheckSpec s;
  s.src = &c->src();
  s.dst = &c->dst();
  s.rounder = c->rounder();
  s.mpfr_every = true;
  auto api = make_host_api();
  return check_plugin_conversion(*c, s, *api, {}, 600000, 10007);  // chunks that do not divide 65536
}

}  // namespace

TEST_CASE("declared canonical NaN: another NaN is a mismatch, not a NaN-vs-NaN difference") {
  const ConvertCheckResult ok = check_all("ok_cvt_bf16_f16_canonical");
  CHECK(ok.patterns == 65536);
  CHECK(ok.mismatches == 0);
  CHECK(ok.nan_differences == 0);
  CHECK(ok.passed());
  const ConvertCheckResult bad = check_all("bug_cvt_bf16_f16_noncanonical");
  // bf16 has 2 x 127 NaN codes (sign, exponent 0xFF, fraction 1..0x7F); the bug writes
  // sign | 0x7E00 | fraction << 3, which is the canonical 0x7E00 only for +0x7FC0 (fraction 0x40,
  // the quiet bit alone): 253 mismatches.
  CHECK(bad.mismatches == 253);
  CHECK(bad.nan_differences == 0);
  CHECK_FALSE(bad.passed());
}
