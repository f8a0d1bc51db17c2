// tests/plugin/conversion_test.cpp — plugin conversion kernels are conversion kernels of the registry,
// checked by the runner like any other: an in-process table (honest, lying, writing outside its
// output, refusing) and the example plugin of examples/plugin/cpu (loaded with dlopen).
#include <doctest/doctest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "results/conversion.hpp"
#include "suites/ops/conversion/convert_runner.hpp"

using namespace fpcert;

namespace {
const std::string kDir = FPCERT_TEST_PLUGIN_DIR;
}  // namespace

// ---- conversions -----------------------------------------------------------------------------------

namespace {

enum class CvtFault { None, Truncate, PastEnd, BeforeStart };
CvtFault g_cvt_fault = CvtFault::None;

// bf16 -> f32 (exact), NaNs quieted; with a fault on request.
fpcert_status bf16_to_f32(void*, const fpcert_conversion_args* a, void*, char*, size_t) {
  const auto* s = static_cast<const std::uint16_t*>(a->src);
  auto* d = static_cast<std::uint32_t*>(a->dst);
  for (std::int64_t i = 0; i < a->count; ++i) {
    std::uint32_t x = static_cast<std::uint32_t>(s[i]) << 16;
    if ((x & 0x7fffffffu) > 0x7f800000u) x |= 0x00400000u;
    d[i] = x;
  }
  if (g_cvt_fault == CvtFault::PastEnd) d[a->count] = 0;
  if (g_cvt_fault == CvtFault::BeforeStart) d[-1] = 0;
  return FPCERT_STATUS_OK;
}

// f32 -> bf16 round to nearest even (or truncation, while still claiming nearest even).
fpcert_status f32_to_bf16(void*, const fpcert_conversion_args* a, void*, char*, size_t) {
  const auto* s = static_cast<const std::uint32_t*>(a->src);
  auto* d = static_cast<std::uint16_t*>(a->dst);
  for (std::int64_t i = 0; i < a->count; ++i) {
    const std::uint32_t x = s[i];
    if ((x & 0x7fffffffu) > 0x7f800000u) d[i] = static_cast<std::uint16_t>((x >> 16) | 0x40u);
    else if (g_cvt_fault == CvtFault::Truncate) d[i] = static_cast<std::uint16_t>(x >> 16);
    else d[i] = static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  return FPCERT_STATUS_OK;
}

fpcert_status refuses(void*, const fpcert_conversion_args*, void*, char* msg, size_t cap) {
  fpcert_plugin_set_message(msg, cap, "count too large");
  return FPCERT_STATUS_NOT_SUPPORTED;
}

fpcert_kernel cvt(const char* name, fpcert_format s, fpcert_format d, fpcert_conversion_run_fn fn) {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_CONVERSION;
  k.name = name;
  k.memory = FPCERT_MEMORY_HOST;
  k.conversion = {s, d, FPCERT_ROUNDING_NEAREST_EVEN, FPCERT_SATURATION_INF, FPCERT_NAN_PRESERVE, 0};
  k.conversion_run = fn;
  return k;
}

const fpcert_kernel kCvts[] = {cvt("t_bf16_to_f32", FPCERT_FORMAT_BF16, FPCERT_FORMAT_F32, bf16_to_f32),
                               cvt("t_f32_to_bf16", FPCERT_FORMAT_F32, FPCERT_FORMAT_BF16, f32_to_bf16),
                               cvt("t_refuses", FPCERT_FORMAT_BF16, FPCERT_FORMAT_F32, refuses)};
const fpcert_plugin_info kCvtInfo = {FPCERT_PLUGIN_INFO_HEADER, "in-process-cvt", "0", 3, 0, kCvts};

void register_cvts_once() {
  static const bool once = [] {
    REQUIRE(validate_plugin_info(&kCvtInfo, "cvt").empty());
    const PluginSummary s = register_plugin_info(&kCvtInfo, "cvt");
    REQUIRE(s.conversion_kernels.size() == 3);
    return true;
  }();
  (void)once;
}

/// A plugin conversion kernel through the runner (suites/ops/conversion/convert_runner.hpp), MPFR on every pattern.
CaseResult check(const std::string& name, std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {},
                 std::uint64_t chunk = std::uint64_t{1} << 20) {
  auto c = make_conversion_kernel(name);
  REQUIRE(c);
  ConversionCase cc;
  cc.ranges = std::move(ranges);
  cc.mpfr_every = 1;
  auto api = make_host_api();
  ConversionRunOptions o;
  o.chunk = chunk;
  return run_conversion_case(*c, cc, *api, o);
}

ConvertCheckResult check_of(const CaseResult& r) {
  REQUIRE(r.conversion);
  const auto k = make_conversion_kernel(r.kernel);  // kept alive: its traits are read below (ASan found the
  REQUIRE(k);                                         // dangling reference to a destroyed temporary's traits)
  const ConversionTraits& t = k->conversion();
  return check_from_json(r.conversion->record, *t.src, *t.dst);
}

}  // namespace

TEST_CASE("plugin conversions through the runner: honest passes - a liar is caught - guards hold") {
  register_cvts_once();
  g_cvt_fault = CvtFault::None;

  SUBCASE("bf16 -> f32, all 65536 patterns, in chunks that do not divide 65536") {
    auto c = make_conversion_kernel("t_bf16_to_f32");
    REQUIRE(c);
    CHECK(c->backend() == Backend::Plugin);
    CHECK(*c->conversion().src == bf16);
    CHECK(*c->conversion().dst == f32);
    const CaseResult res = check("t_bf16_to_f32", {}, 10007);
    CHECK(res.status == CaseStatus::Pass);
    const ConvertCheckResult r = check_of(res);
    CHECK(r.patterns == 65536);
    CHECK(r.mpfr_checked == 65536);
    CHECK(r.mismatches == 0);
    CHECK(r.nan_differences == 0);
  }
  SUBCASE("f32 -> bf16 that truncates while claiming nearest-even: the inexact codes mismatch") {
    // 65536 consecutive fp32 codes from 1.0: [1, 1 + 2^-7), one bf16 ulp
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> window = {{0x3f800000, 65536}};
    CHECK(check("t_f32_to_bf16", window).status == CaseStatus::Pass);
    g_cvt_fault = CvtFault::Truncate;
    const CaseResult liar = check("t_f32_to_bf16", window);
    g_cvt_fault = CvtFault::None;
    // Every code of the window keeps the bf16 bits 0x3f80 (even). Truncation keeps them; nearest-even
    // rounds up when the 16 discarded bits exceed 0x8000 (a tie, 0x8000, stays on the even 0x3f80):
    // discarded bits 0x8001..0xffff, 32767 codes, mismatch, the first at 0x3f808001.
    CHECK(liar.status == CaseStatus::Fail);
    const ConvertCheckResult r = check_of(liar);
    CHECK(r.mismatches == 32767);
    REQUIRE_FALSE(r.listed.empty());
    CHECK(r.listed[0].src == 0x3f808001);
    CHECK(r.listed[0].expected == 0x3f81);
    CHECK(r.listed[0].got == 0x3f80);
  }
  SUBCASE("writes past the end or before the start of the output are caught by the guards") {
    g_cvt_fault = CvtFault::PastEnd;
    const CaseResult past = check("t_bf16_to_f32", {{0, 100}});
    CHECK(past.status == CaseStatus::Crashed);
    CHECK(past.reason.find("wrote past the end of its output") != std::string::npos);
    g_cvt_fault = CvtFault::BeforeStart;
    const CaseResult before = check("t_bf16_to_f32", {{0, 100}});
    CHECK(before.status == CaseStatus::Crashed);
    CHECK(before.reason.find("wrote before its output") != std::string::npos);
    g_cvt_fault = CvtFault::None;
  }
  SUBCASE("NOT_SUPPORTED from a conversion is the verdict not supported") {
    CHECK(check("t_refuses", {{0, 10}}).status == CaseStatus::NotSupported);
  }
  CHECK(make_conversion_kernel("no_such_cvt") == nullptr);
}

TEST_CASE("the example plugin loads once - registers its GEMM and conversion kernels") {
  const PluginSummary& s = load_plugin(kDir + "/libfpcert_example_cpu_plugin.so");
  CHECK(s.name == "example-cpu");
  CHECK(s.abi_major == FPCERT_PLUGIN_ABI_MAJOR);
  CHECK(s.gemm_kernels == std::vector<std::string>{"example_gemm_f16_f32acc"});
  CHECK(s.conversion_kernels.size() == 2);
  const PluginSummary& again = load_plugin(kDir + "/./libfpcert_example_cpu_plugin.so");
  CHECK(&again == &s);  // same resolved path: loaded once, no "name taken" error
  auto k = make_gemm_kernel("example_gemm_f16_f32acc");
  REQUIRE(k);
  CHECK(k->description().find("example-cpu 1.0") != std::string::npos);

  // The example's bf16 -> f32 over every pattern, f32 -> bf16 around overflow and through the NaNs.
  CHECK(check("example_cvt_bf16_to_f32").status == CaseStatus::Pass);
  // the top bf16 binade, its overflow boundary, +Inf and the first NaNs
  const CaseResult res = check("example_cvt_f32_to_bf16", {{0x7f7f0000, 0x20000}});
  CHECK(res.status == CaseStatus::Pass);
  const ConvertCheckResult r = check_of(res);
  CHECK(r.outcomes[static_cast<int>(Outcome::OverflowInf)] > 0);
  CHECK(r.outcomes[static_cast<int>(Outcome::NaN)] > 0);
}

