// tests/kernels/convert/convert_check_device_gpu_test.cpp — the device check (the table's kernels comparing with
// fpcert's model on the GPU, kernels/convert/convert_check_device.hpp) against the host check of the same
// device's results: identical counts, outcome classes, NaN reports, lanes, strays and identical
// disagreement lists, on deliberately wrong test-only entries (so that the lists are not empty) and
// on real ones; and a chunk whose differences overflow the list falling back to the host check.
// Without a device the executable reports "skipped" (tests/gpu_main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/device_convert.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/cuda_producer.hpp"
#include "tests/support/host_producer.hpp"
#include "tests/support/same_report.hpp"
#include "oracle/convert/convert_model.hpp"

using namespace fpcert;
using fpcert::test::entry;
using fpcert::test::producer;

namespace {

std::unique_ptr<DeviceChecker> checker(std::uint64_t max_chunk = std::uint64_t{1} << 28, std::size_t max_listed = 1 << 16) {
  std::string why;
  auto c = make_cuda_device_checker(&why, max_chunk, max_listed);
  if (!c) FAIL("no device checker: " << why);
  return c;
}

/// The reports equal field by field (tests/support/same_report.hpp); MPFR on no more codes on the device
/// check than on the host check.
void require_same(const DeviceSweepResult& dev, const DeviceSweepResult& host) {
  test::require_same_sweep_report(dev, host);
  CHECK(dev.check.mpfr_checked <= host.check.mpfr_checked);
}

/// The entry swept twice on the same codes: device check, then host check.
void cross_check(const DeviceConversion& e, std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges, DeviceChecker& dc) {
  INFO(e.name);
  SweepOptions opt;
  opt.ranges = std::move(ranges);
  opt.checker = &dc;
  const DeviceSweepResult dev = sweep_conversion(producer(), e, opt);
  opt.nan_mpfr_every = true;  // the NaN inputs' former path: MPFR on exactly the host check's codes
  const DeviceSweepResult dev_mpfr = sweep_conversion(producer(), e, opt);
  opt.nan_mpfr_every = false;
  opt.checker = nullptr;
  const DeviceSweepResult host = sweep_conversion(producer(), e, opt);
  std::printf("%-40s %11llu patterns: device check %.3f s (GPU %.3f s), host check %.3f s; mismatches %llu, NaN-vs-NaN %llu, "
              "listed %zu, lanes %llu, stray %llu, MPFR on %llu (device) / %llu (host), %s\n",
              std::string(e.name).c_str(), static_cast<unsigned long long>(dev.patterns), dev.timing.wall_s, dev.timing.gpu_s,
              host.timing.wall_s, static_cast<unsigned long long>(dev.check.mismatches),
              static_cast<unsigned long long>(dev.check.nan_differences), dev.check.listed.size(),
              static_cast<unsigned long long>(dev.lane_mismatches), static_cast<unsigned long long>(dev.stray),
              static_cast<unsigned long long>(dev.check.mpfr_checked), static_cast<unsigned long long>(host.check.mpfr_checked),
              dev.passed() ? "PASS" : "FAIL");
  std::fflush(stdout);
  require_same(dev, host);
  require_same(dev_mpfr, host);
  CHECK(dev_mpfr.check.mpfr_checked == host.check.mpfr_checked);
}

}  // namespace

TEST_CASE("device check == host check: deliberately wrong entries (non-empty lists) and real ones") {
  auto dc = checker();
  // fp32 sources: a strided sample plus the blocks that hold the wrong codes and NaN inputs.
  auto f32_ranges = [](std::uint64_t wrong) {
    auto r = strided_sample_ranges(f32);
    r.resize(32);
    r.push_back({wrong & ~0xFFFFull, 1 << 16});
    r.push_back({0x7FFF0000, 1 << 16});  // NaNs (and the top of the finite range, Inf)
    r.push_back({0xFF800000, 1 << 16});  // -Inf and negative NaNs
    return r;
  };
  for (const char* name : {"test_f32_to_f16_rn_flip", "test_f32_to_tf32_rna_stray", "test_f32_to_e4m3_nosat_nan"}) {
    const DeviceConversion& e = entry(name);
    if (!dc->supports(e) || !entry_support(e, producer().running_arch()).ok) continue;
    cross_check(e, f32_ranges(name == std::string("test_f32_to_tf32_rna_stray") ? 0x3f800000 : name == std::string("test_f32_to_f16_rn_flip") ? 0x3f800001 : 0x7fc00000), *dc);
  }
  for (const char* name : {"test_e5m2_to_f16_signflip", "test_f16x2_to_e4m3x2_satfinite_hilane", "e4m3_to_f16", "f16_to_e2m1_rn",
                           "bf16x2_to_ue8m0x2_rz_satfinite", "ue8m0_to_bf16", "bf16_to_f32", "f16_to_e4m3_nosat"})
    cross_check(entry(name), {}, *dc);
  for (const char* name : {"f32_to_f16_rn", "f32_to_bf16_rd", "f32_to_e4m3_satfinite", "f32_to_e5m2_nosat", "f32_to_ue8m0_ru_nosat",
                           "f32x2_to_e2m3x2_rz", "f32_to_tf32_rn"})
    if (entry_support(entry(name), producer().running_arch()).ok) cross_check(entry(name), f32_ranges(0), *dc);
  // The wrong entries are caught by the device check with their bits.
  SweepOptions opt;
  opt.checker = dc.get();
  opt.ranges = {{0x3f800000, 1 << 16}};
  const DeviceSweepResult flip = sweep_conversion(producer(), entry("test_f32_to_f16_rn_flip"), opt);
  REQUIRE(flip.check.mismatches == 1);
  REQUIRE(flip.check.listed.size() == 1);
  CHECK(flip.check.listed[0].src == 0x3f800001u);
  CHECK(flip.check.listed[0].got == (flip.check.listed[0].expected ^ 1u));
}

TEST_CASE("the device's disagreement list equals the host's from the same device's results, every code of a chunk") {
  auto dc = checker();
  for (const char* name : {"test_f32_to_f16_rn_flip", "test_e5m2_to_f16_signflip", "test_f32_to_e4m3_nosat_negnan"}) {
    const DeviceConversion& e = entry(name);
    INFO(name);
    // fp32 sources: around 1.0, or (negnan) from just below -464, where e4m3's negative overflows begin:
    // 256 codes that round to -448, then 65280 overflows the entry writes 0x7f.
    const std::uint64_t first = e.src->code_count() > 65536 ? (name == std::string("test_f32_to_e4m3_nosat_negnan") ? 0xC3E7FF00u : 0x3F800000u) : 0;
    const std::uint64_t n = std::min<std::uint64_t>(e.src->code_count(), 1 << 16);
    dc->enqueue(e, first, n, 0);
    const DeviceCheckChunk c = dc->wait(0);
    producer().enqueue(e, first, n, 0);
    const ProducedChunk pc = producer().wait(0);
    const ConvertModel m = make_convert_model(*e.src, *e.dst, e.rounder);
    std::vector<ModelDifference> host;
    std::array<std::uint64_t, kOutcomeKeys> keys{};
    const auto nans = nan_code_ranges(*e.src);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t code = first + i;
      std::uint32_t raw = 0;
      std::memcpy(&raw, static_cast<const char*>(pc.data) + i * result_bytes(e), static_cast<std::size_t>(result_bytes(e)));
      const auto got = static_cast<std::uint32_t>(from_container(*e.dst, raw));
      const ModelResult mr = model_convert(m, static_cast<std::uint32_t>(code));
      ++keys[mr.key];
      bool nan_input = false;
      for (const auto& [lo, hi] : nans) nan_input = nan_input || (code >= lo && code < hi);
      if (!nan_input && got != mr.code) host.push_back({code, got});
    }
    CHECK(c.keys == keys);
    CHECK(c.differences == host.size());
    CHECK(!c.overflow);
    CHECK(c.listed == host);
    CHECK(!host.empty());  // each of these entries differs from the model somewhere in its chunk
    MESSAGE(name << ": " << host.size() << " differences, identical on device and host");
  }
}

TEST_CASE("a chunk with more differences than the device list holds is checked on the host, with the same result") {
  auto dc = checker(std::uint64_t{1} << 20, 4);
  // Every negative overflow written 0x7f where fpcert's model keeps the sign (0xff): far more differences
  // per chunk than the device list's 4.
  const DeviceConversion& e = entry("test_f32_to_e4m3_nosat_negnan");
  SweepOptions opt;
  opt.ranges = {{0xC3E00000u, 1 << 21}};
  opt.checker = dc.get();
  const DeviceSweepResult dev = sweep_conversion(producer(), e, opt);
  CHECK(dev.host_fallback_chunks == 2);
  opt.checker = nullptr;
  const DeviceSweepResult host = sweep_conversion(producer(), e, opt);
  require_same(dev, host);
}
