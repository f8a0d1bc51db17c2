// tests/kernels/convert/convert_gpu_test.cpp — every conversion of the device table that this GPU runs, checked on
// every source pattern (8- and 16-bit sources; fp32 on a strided 2^24 sample, and in full for two
// representative conversions) against fpcert's correctly rounded model and MPFR, with zero
// unexplained mismatches; and the sweep catching deliberately wrong device conversions with their
// bits. Without a device the executable reports "skipped" (tests/support/gpu_main.cpp).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "kernels/convert/device_convert.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/cuda_producer.hpp"
#include "tests/support/host_producer.hpp"
#include "kernels/kernel.hpp"

using namespace fpcert;
using fpcert::test::entry;
using fpcert::test::producer;

namespace {

/// One line per run: what the report table shows, for the log of the device run.
void report(const DeviceSweepResult& r) {
  std::string nan;
  for (const auto& [code, n] : r.nan.outputs) nan += " " + hex_code(*r.entry->dst, code) + "x" + std::to_string(n);
  std::printf("%-36s %-9s %11llu patterns, mismatches %llu, NaN-vs-NaN %llu (NaN results:%s), lanes %llu, stray %llu, %.3f s%s\n",
              std::string(r.entry->name).c_str(), r.hardware ? "hardware" : "software",
              static_cast<unsigned long long>(r.patterns),
              static_cast<unsigned long long>(r.check.mismatches + r.check.model_mismatches),
              static_cast<unsigned long long>(r.check.nan_differences), nan.empty() ? " none" : nan.c_str(),
              static_cast<unsigned long long>(r.lane_mismatches), static_cast<unsigned long long>(r.stray), r.timing.wall_s,
              r.passed() ? "" : "  FAIL");
  for (const auto& f : r.failures) std::printf("    %s\n", f.c_str());
  for (const auto& m : r.check.listed)
    std::printf("    src %s expected %s got %s%s\n", hex_code(*r.entry->src, m.src).c_str(),
                hex_code(*r.entry->dst, m.expected).c_str(), hex_code(*r.entry->dst, m.got).c_str(), m.model_bug ? " (model)" : "");
  std::fflush(stdout);
}

}  // namespace

TEST_CASE("the producer runs this binary's code on the device and says which") {
  const RunningArch a = producer().running_arch();
  MESSAGE("device " << producer().device_name() << ", cc " << a.cc_major << "." << a.cc_minor << ", __CUDA_ARCH__ " << a.arch);
  CHECK(a.arch >= 800);  // sm_90a machine code or the compute_80 PTX
  if (a.cc_major == 9 && a.cc_minor == 0) CHECK(a.arch == 900);  // an H100/H200 runs the sm_90a code
}

TEST_CASE("every supported table entry: narrow sources exhaustively, fp32 on a strided 2^24 sample, zero unexplained mismatches") {
  int run = 0, skipped = 0;
  for (const DeviceConversion& e : device_conversions(false)) {
    CAPTURE(e.name);
    const EntrySupport s = entry_support(e, producer().running_arch());
    if (!s.ok) {
      MESSAGE(e.name << " not supported here: " << s.reason);
      ++skipped;
      continue;
    }
    SweepOptions opt;
    if (e.kind == ConversionKind::Convert) opt.ranges = strided_sample_ranges(*e.src);
    if (opt.ranges.size() == 1) opt.ranges.clear();  // narrow sources: every code
    const DeviceSweepResult r = sweep_conversion(producer(), e, opt);
    report(r);
    ++run;
    CHECK(r.patterns == (opt.ranges.empty() ? entry_code_count(e) : std::uint64_t{256} << 16));
    CHECK(r.check.model_mismatches == 0);  // fpcert itself: never
    CHECK_MESSAGE(r.passed(), e.name << ": " << (r.failures.empty() ? std::string() : r.failures.front()));
    // Every pattern is counted in one outcome class.
    std::uint64_t total = 0;
    for (const auto c : r.check.outcomes) total += c;
    CHECK(total == r.patterns);
  }
  MESSAGE(run << " conversions run, " << skipped << " not supported on this device");
  CHECK(run > 100);
}

TEST_CASE("full 2^32 sweeps: fp32 -> fp16 rn and fp32 -> e4m3 satfinite, every pattern") {
  for (const char* name : {"f32_to_f16_rn", "f32_to_e4m3_satfinite"}) {
    CAPTURE(name);
    const DeviceSweepResult r = sweep_conversion(producer(), entry(name), {});
    report(r);
    MESSAGE(name << ": " << r.patterns << " patterns in " << r.timing.wall_s << " s (" << r.patterns / r.timing.wall_s / 1e9
                 << " G/s): GPU " << r.timing.gpu_s << " s, copies " << r.timing.transfer_s << " s, check " << r.timing.check_s
                 << " s, waiting " << r.timing.wait_s << " s, " << r.timing.threads << " threads");
    CHECK(r.patterns == std::uint64_t{1} << 32);
    CHECK(r.exhaustive);
    CHECK(r.passed());
    // Outcome classes fp32 -> fp16 must show: 2^24 - 2 NaN inputs, 2 infinities, 2 zeros, every class
    // of finite result (overflow to Inf past 65520, underflow to zero below 2^-25).
    CHECK(r.check.outcomes[static_cast<int>(Outcome::NaN)] == (std::uint64_t{1} << 24) - 2);
    CHECK(r.check.outcomes[static_cast<int>(Outcome::Zero)] == 2);
  }
}

TEST_CASE("the scaled BF16 -> FP16 round trip: every finite bf16 in the window comes back, at every scale") {
  const DeviceSweepResult r = sweep_conversion(producer(), entry("bf16_to_f16_pow2_scaled"), {});
  report(r);
  CHECK(r.passed());
  REQUIRE(r.scaled.rows.size() == 254);
  for (const ScaleRow& row : r.scaled.rows) {
    CAPTURE(row.s);
    CHECK(row.window_patterns > 0);
    CHECK(row.window_exact == row.window_patterns);
  }
  const ScaleRow& s0 = r.scaled.rows[126];
  CHECK(s0.s == 0);
  CHECK(s0.window_patterns == 2 * 33 * 128 + 2);  // binades -17 .. 15, both signs, and the zeros
}

TEST_CASE("the sweep catches deliberately wrong device conversions, with the right bits") {
  SUBCASE("one flipped result bit (fp32 -> fp16)") {
    SweepOptions opt;
    opt.ranges = {{0x3F7F8000, 0x10000}};
    const DeviceSweepResult r = sweep_conversion(producer(), entry("test_f32_to_f16_rn_flip"), opt);
    report(r);
    CHECK(!r.passed());
    CHECK(r.check.mismatches == 1);
    REQUIRE(r.check.listed.size() == 1);
    CHECK(r.check.listed[0].src == 0x3F800001u);
    CHECK(r.check.listed[0].expected == 0x3C00u);
    CHECK(r.check.listed[0].got == 0x3C01u);
  }
  SUBCASE("a flipped sign (e5m2 -> fp16, exhaustive)") {
    const DeviceSweepResult r = sweep_conversion(producer(), entry("test_e5m2_to_f16_signflip"), {});
    report(r);
    CHECK(!r.passed());
    CHECK(r.check.mismatches == 1);
    REQUIRE(r.check.listed.size() == 1);
    CHECK(r.check.listed[0].src == 0x3Cu);
    CHECK(r.check.listed[0].expected == 0x3C00u);
    CHECK(r.check.listed[0].got == 0xBC00u);
  }
  SUBCASE("the high lane of an x2 form only") {
    const DeviceSweepResult r = sweep_conversion(producer(), entry("test_f16x2_to_e4m3x2_satfinite_hilane"), {});
    report(r);
    CHECK(!r.passed());
    CHECK(r.check.mismatches == 0);  // the low lane is right
    CHECK(r.lane_mismatches == 1);
    REQUIRE(r.lanes.size() == 1);
    CHECK(r.lanes[0].src == 0x3C00u);
    CHECK(r.lanes[0].lo == 0x38u);
    CHECK(r.lanes[0].hi == 0x39u);
  }
  SUBCASE("a bit below tf32's in the fp32 container") {
    SweepOptions opt;
    opt.ranges = {{0x3F7F8000, 0x10000}};
    const DeviceSweepResult r = sweep_conversion(producer(), entry("test_f32_to_tf32_rna_stray"), opt);
    report(r);
    CHECK(!r.passed());
    CHECK(r.stray == 1);
    REQUIRE(r.strays.size() == 1);
    CHECK(r.strays[0].src == 0x3F800000u);
    CHECK(r.strays[0].raw == 0x3F800001u);
  }
  SUBCASE("a NaN other than the enforced statement (fp32 -> e4m3, no saturation)") {
    SweepOptions opt;
    opt.ranges = {{0x7FBF8000, 0x10000}};
    const DeviceSweepResult r = sweep_conversion(producer(), entry("test_f32_to_e4m3_nosat_nan"), opt);
    report(r);
    CHECK(!r.passed());
    CHECK(r.nan.not_as_stated == 1);
    REQUIRE(r.nan.listed.size() == 1);
    CHECK(r.nan.listed[0].src == 0x7FC00000u);
    CHECK(r.nan.listed[0].stated == 0x7Fu);
    CHECK(r.nan.listed[0].got == 0xFFu);
  }
}
