// tests/kernels/convert/device_convert_test.cpp — the device conversion table is well formed and covers
// the headers; its entries are conversion kernels of the registry. The sweep that judges them:
// tests/suites/device_sweep_test.cpp; the real kernels: tests/kernels/convert/convert_gpu_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <tuple>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "kernels/kernel.hpp"
#include "oracle/round.hpp"
#include "tests/support/host_producer.hpp"

using namespace fpcert;
using fpcert::test::entry;
using fpcert::test::HostProducer;
using fpcert::test::model_of;

namespace {

bool is_builtin(const Format* f) {
  for (const Format* g : all_formats())
    if (g == f) return true;
  return false;
}

}  // namespace

TEST_CASE("the device conversion table: names unique, formats built in, Rounders valid for the destination") {
  const auto all = device_conversions(true);
  REQUIRE(all.size() > 100);
  std::set<std::string_view> names;
  const std::regex name_re("[a-z0-9_]+");
  bool seen_test = false;
  for (const DeviceConversion& e : all) {
    CAPTURE(e.name);
    CHECK(names.insert(e.name).second);
    CHECK(std::regex_match(std::string(e.name), name_re));
    CHECK(!e.call.empty());
    REQUIRE(e.src);
    REQUIRE(e.dst);
    CHECK(is_builtin(e.src));
    CHECK(is_builtin(e.dst));
    CHECK(e.src->total_bits() <= 32);
    CHECK(e.dst->total_bits() <= 32);
    CHECK(saturation_valid(*e.dst, e.rounder.saturation));
    CHECK(e.rounder.rounding != Rounding::Stochastic);  // no device entry rounds stochastically (sm_100 cvt.rs is not in this build)
    // The declared NaN convention follows from the statements: NVIDIA's all-ones NaN where every path names
    // it (or none applies), else "any NaN" (docs/conversions.md, "NaN conventions of the table").
    CHECK(nan_payload_problem(*e.dst, e.rounder.nan).empty());
    auto names_nvidia = [&](const NanStatement& st) {
      return st.rule == NanRule::NotApplicable || (st.rule == NanRule::Canonical && st.code == e.dst->magnitude_mask());
    };
    CHECK(e.rounder.nan == (names_nvidia(e.nan_hw) && names_nvidia(e.nan_sw) ? NanPayload::Nvidia : NanPayload::Any));
    // The name says the conversion: <src>[x2]_to_<dst>[x2]...
    const std::string x2 = e.pair ? "x2" : "";
    const std::string src_tag(e.src->tag), dst_tag(e.dst->tag);
    if (e.kind == ConversionKind::Convert && !e.test_only)
      CHECK(std::string(e.name).rfind(src_tag + x2 + "_to_" + dst_tag + x2, 0) == 0);
    if (e.pair) CHECK(!e.primary);
    // Test-only entries are last.
    if (e.test_only) seen_test = true;
    CHECK(e.test_only == seen_test);
    CHECK(e.test_only == (std::string(e.name).rfind("test_", 0) == 0));
    // Where the rounding happens.
    if (e.hw == HwPath::FromArch) CHECK(e.hw_arch >= 530);
    if (e.hw != HwPath::Never) CHECK(!e.hw_instr.empty());
    CHECK((e.min_arch == 0 || e.min_arch == 800 || e.min_arch == 900));
    // NaN statements name NaNs of the destination and fit the formats.
    for (const NanStatement* st : {&e.nan_hw, &e.nan_sw}) {
      CHECK(!st->basis.empty());
      switch (st->rule) {
        case NanRule::Canonical: CHECK(classify(*e.dst, st->code) == FpClass::NaN); break;
        case NanRule::ShiftPayload:
          CHECK(e.src->specials == Specials::IEEE);
          CHECK(e.dst->specials == Specials::IEEE);
          CHECK(e.dst->frac_bits >= e.src->frac_bits);
          break;
        case NanRule::NotApplicable:
          // Only where no NaN payload is to choose: no NaN input, or a destination with one NaN or none.
          CHECK((!e.src->has_nan() || e.dst->specials == Specials::FiniteOnly || e.dst->specials == Specials::ScaleOnly));
          CHECK(st->decisive);
          break;
        case NanRule::Unstated: CHECK(!st->decisive); break;
        case NanRule::Preserve: break;
      }
      if (e.src->has_nan() && e.dst->specials != Specials::FiniteOnly && e.dst->specials != Specials::ScaleOnly)
        CHECK(st->rule != NanRule::NotApplicable);
    }
    CHECK(result_bytes(e) == (e.kind == ConversionKind::ScaledRoundTrip ? 4 : container_bytes(*e.dst)));
    if (built_with_cuda()) CHECK_MESSAGE(cuda_has_conversion_kernel(e.name), "no kernel in kernels/convert/cuda for " << e.name);
  }
  CHECK(seen_test);
  CHECK(!cuda_has_conversion_kernel("no_such_conversion"));
}

TEST_CASE("the table covers the conversions the headers offer") {
  // Every rounding suffix of fp32 -> fp16 and fp32 -> bf16, tf32 rna/rn/rz, fp8 with both
  // saturations, fp6/fp4 rn and rz, ue8m0 rz and rp with both saturations, the widening ones, x2.
  for (const char* n :
       {"f32_to_f16_rn", "f32_to_f16_rz", "f32_to_f16_rd", "f32_to_f16_ru", "f32x2_to_f16x2_rn", "f32_to_bf16_rn", "f32_to_bf16_rz",
        "f32_to_bf16_rd", "f32_to_bf16_ru", "f32x2_to_bf16x2_rn", "f32_to_tf32_rna", "f32_to_tf32_rna_satfinite", "f32_to_tf32_rn",
        "f32_to_tf32_rz", "f32_to_e4m3_satfinite", "f32_to_e4m3_nosat", "f32_to_e5m2_satfinite", "f32_to_e5m2_nosat",
        "f16x2_to_e5m2x2_satfinite", "bf16x2_to_e4m3x2_nosat", "e4m3_to_f16", "e5m2x2_to_f16x2", "e4m3_to_f32",
        "f32_to_ue8m0_rz_satfinite", "f32_to_ue8m0_ru_nosat", "bf16x2_to_ue8m0x2_ru_satfinite", "ue8m0_to_bf16",
        "f32_to_e2m3_rn", "f32_to_e3m2_rz", "f16x2_to_e2m3x2_rn", "bf16_to_e2m1_rz", "e2m1x2_to_f16x2", "e3m2_to_f32",
        "f16_to_f32", "bf16_to_f32", "bf16x2_to_f32x2", "tf32_to_f16_rn", "bf16_to_f16_direct", "bf16_to_f16_pow2_scaled"}) {
    CAPTURE(n);
    CHECK(find_device_conversion(n) != nullptr);
  }
  CHECK(find_device_conversion("test_f32_to_f16_rn_flip") != nullptr);
  CHECK(device_conversions(false).size() + 6 == device_conversions(true).size());  // the six deliberately wrong test entries
  // Expected semantics of a few, stated in the headers' documentation.
  CHECK(entry("f32_to_e4m3_nosat").rounder.saturation == Saturation::NaN);     // __NV_NOSAT: e4m3 overflow -> NaN
  CHECK(entry("f32_to_e5m2_nosat").rounder.saturation == Saturation::Inf);     // e5m2 has Inf
  CHECK(entry("f32_to_e4m3_satfinite").rounder.saturation == Saturation::Finite);
  CHECK(entry("f32_to_ue8m0_ru_nosat").rounder.rounding == Rounding::Up);      // cudaRoundPosInf on |x|
  CHECK(entry("f32_to_tf32_rna").rounder.rounding == Rounding::NearestAway);
}

TEST_CASE("picking entries: one primary entry per (from, to, rounding, saturation)") {
  std::set<std::tuple<std::string_view, std::string_view, int, int>> seen;
  for (const DeviceConversion& e : device_conversions(false)) {
    if (!e.primary) continue;
    CAPTURE(e.name);
    CHECK(e.kind == ConversionKind::Convert);
    CHECK(seen.insert({e.src->tag, e.dst->tag, static_cast<int>(e.rounder.rounding), static_cast<int>(e.rounder.saturation)}).second);
  }
  const auto f16s = device_conversions_for(f32, f16);
  CHECK(f16s.size() >= 6);
  CHECK(device_conversions_for(f16, ue8m0).empty());
}

TEST_CASE("entry support and path follow the running code's architecture") {
  const RunningArch a80{800, 0, 8, 0}, a90{900, 0, 9, 0}, a100f{1000, 1000, 10, 0};
  CHECK(!entry_support(entry("f32_to_tf32_rn"), a80).ok);  // cvt.rn.tf32.f32 is sm_90
  CHECK(entry_support(entry("f32_to_tf32_rn"), a90).ok);
  CHECK(entry_support(entry("f32_to_tf32_rna"), a80).ok);
  CHECK(!entry_support(entry("f32_to_bf16_rd"), a80).hardware);  // cvt.rm.bf16.f32 from sm_90, emulated below
  CHECK(entry_support(entry("f32_to_bf16_rd"), a90).hardware);
  CHECK(entry_support(entry("f32_to_e4m3_satfinite"), a90).hardware);
  CHECK(!entry_support(entry("f32_to_e4m3_nosat"), a90).hardware);  // __NV_NOSAT is always the emulation
  CHECK(!entry_support(entry("f32_to_e2m3_rn"), a90).hardware);       // fp6 cvt only in family-specific builds
  CHECK(entry_support(entry("f32_to_e2m3_rn"), a100f).hardware);
  CHECK(!entry_support(entry("f32_to_e2m3_rz"), a100f).hardware);
  CHECK(&nan_statement(entry("f32_to_bf16_rn"), false) == &entry("f32_to_bf16_rn").nan_sw);
  CHECK(nan_statement(entry("f32_to_bf16_rn"), false).decisive);
}

TEST_CASE("docs/conversions.md lists every entry of the table") {
  // The source tree from this file's path (CMake compiles it by its absolute path).
  const std::filesystem::path doc = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "conversions.md";
  std::ifstream in(doc);
  if (!in) {
    MESSAGE("no " << doc.string() << " next to the sources; not checked");
    return;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const DeviceConversion& e : device_conversions(true)) {
    CAPTURE(e.name);
    CHECK(text.find("| `" + std::string(e.name) + "` |") != std::string::npos);
  }
}

TEST_CASE("the intrinsics declare NVIDIA's NaN; paths with an unspecified NaN declare any") {
  // cuda_fp16.hpp / cuda_bf16.hpp: every NaN -> 0x7FFF; cvt.rn.f16.f32 of the bf16 -> fp32 NaN too; PTX
  // cvt.satfinite to e2m1: positive MAX_NORM; cvt.f32.bf16: "unspecified NaN"; cvt.rna.tf32.f32: undocumented.
  for (const char* n : {"f32_to_f16_rn", "f32_to_f16_rz", "f32_to_bf16_rn", "bf16_to_f16_direct", "f16_to_f32", "f32_to_e4m3_satfinite",
                        "f32_to_e2m1_rn"})
    CHECK_MESSAGE(entry(n).rounder.nan == NanPayload::Nvidia, n);
  for (const char* n : {"bf16_to_f32", "f32_to_tf32_rna"}) CHECK_MESSAGE(entry(n).rounder.nan == NanPayload::Any, n);
}
