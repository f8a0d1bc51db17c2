// tests/suites/device_sweep_test.cpp — the runner's device sweep (suites/ops/conversion/device_sweep.hpp: chunking, the
// two-slot pipeline, the check, NaN statements, lanes, stray bits, the scaled round trip) judges
// correctly, driven by a host producer that plays the GPU: the CPU part of `fpcert convert --device
// cuda` tested without a device; and a table kernel through the runner and the conversions suite.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "kernels/convert/device_convert.hpp"
#include "oracle/round.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/host_producer.hpp"

using namespace fpcert;
using fpcert::test::entry;
using fpcert::test::HostProducer;
using fpcert::test::model_of;

TEST_CASE("strided sample of fp32: 256 disjoint blocks of 2^16, every top byte, both values of the exponent's low bit") {
  const auto r = strided_sample_ranges(f32);
  REQUIRE(r.size() == 256);
  std::set<std::uint64_t> top;
  int bit23[2] = {0, 0};
  std::uint64_t prev_end = 0;
  for (const auto& [first, count] : r) {
    CHECK(count == 65536);
    CHECK(first % 65536 == 0);
    CHECK(first >= prev_end);
    CHECK(first + count <= (std::uint64_t{1} << 32));
    prev_end = first + count;
    top.insert(first >> 24);
    ++bit23[(first >> 23) & 1];
  }
  CHECK(top.size() == 256);
  CHECK(bit23[0] > 64);
  CHECK(bit23[1] > 64);
  const auto h = strided_sample_ranges(f16);
  REQUIRE(h.size() == 1);
  CHECK(h[0].second == 65536);
}

TEST_CASE("sweep: a correct subject passes; the declared nvidia NaN is enforced, --strict-nan or not") {
  const DeviceConversion& e = entry("bf16_to_f16_direct");  // NaN statement: canonical 0x7fff; declares nvidia
  REQUIRE(e.rounder.nan == NanPayload::Nvidia);
  HostProducer p;
  p.chunk = 1 << 14;  // four chunks: the two slots alternate
  p.result = model_of(e, 0x7FFF);
  SweepOptions opt;
  int progress_calls = 0;
  opt.progress = [&](double) { ++progress_calls; };
  const DeviceSweepResult r = sweep_conversion(p, e, opt);
  CHECK(r.passed());
  CHECK(r.patterns == 65536);
  CHECK(r.exhaustive);
  CHECK(p.enqueued == 4);
  CHECK(p.waited == 4);
  CHECK(p.max_in_flight == 2);  // chunk k + 1 queued before chunk k is checked
  CHECK(progress_calls == 4);
  CHECK(r.timing.gpu_s == doctest::Approx(4 * 0.5e-3));
  CHECK(r.timing.transfer_s == doctest::Approx(4 * 0.25e-3));
  // 2 * (2^7 - 1) bf16 NaN codes, each 0x7fff: NVIDIA's NaN is the declared convention, fpcert's own result.
  CHECK(r.nan.inputs == 254);
  CHECK(r.nan.as_stated == 254);
  CHECK(r.nan.outputs.size() == 1);
  CHECK(r.nan.differ_from_fpcert == 0);
  CHECK(r.check.nan_differences == 0);
  CHECK(r.nan_other_differences == 0);
  CHECK(r.check.mismatches == 0);
  std::uint64_t total = 0;
  for (auto c : r.check.outcomes) total += c;
  CHECK(total == 65536);

  opt.strict_nan = true;  // changes nothing for a declared convention
  CHECK(sweep_conversion(p, e, opt).passed());

  // The IEEE canonical NaN instead of NVIDIA's breaks the declaration on every NaN input (before the
  // conventions, under preserve, it was counted apart).
  p.result = model_of(e, 0x7E00);
  opt.strict_nan = false;
  const DeviceSweepResult c = sweep_conversion(p, e, opt);
  CHECK(!c.passed());
  CHECK(c.check.mismatches == 254);
  CHECK(c.nan.not_as_stated == 254);
}

TEST_CASE("sweep: a wrong result is caught with its bits, and MPFR arbitrated it") {
  const DeviceConversion& e = entry("f32_to_f16_rn");
  HostProducer p;
  auto model = model_of(e, 0x7FFF);
  p.result = [&](std::uint64_t c) { return c == 0x3F800001u ? model(c) ^ 1u : model(c); };
  SweepOptions opt;
  opt.ranges = {{0x3F7F0000, 0x20000}};  // [0.99609375, 1.0078125)
  opt.mpfr_sample = 0;
  const DeviceSweepResult r = sweep_conversion(p, e, opt);
  CHECK(!r.passed());
  CHECK(!r.exhaustive);
  CHECK(r.patterns == 0x20000);
  CHECK(r.check.mismatches == 1);
  CHECK(r.check.mpfr_checked == 1);
  REQUIRE(r.check.listed.size() == 1);
  CHECK(r.check.listed[0].src == 0x3F800001u);
  CHECK(r.check.listed[0].expected == 0x3C00u);  // 1 + 2^-23 rounds to fp16 1.0
  CHECK(r.check.listed[0].got == 0x3C01u);
}

TEST_CASE("sweep: an enforced NaN statement fails when a NaN input gives another NaN") {
  const DeviceConversion& e = entry("bf16_to_e4m3_nosat");  // enforced: every NaN -> 0x7f; declares nvidia
  REQUIRE(nan_statement(e, false).decisive);
  REQUIRE(e.rounder.nan == NanPayload::Nvidia);
  HostProducer p;
  p.result = model_of(e, 0x7F);
  const DeviceSweepResult ok = sweep_conversion(p, e, {});
  CHECK(ok.passed());
  CHECK(ok.nan.as_stated == ok.nan.inputs);
  CHECK(ok.check.nan_differences == 0);  // 0x7f is the declared convention's code
  // The sign kept (0xff for the 127 negative NaNs, what fpcert's preserve would write): against both the
  // statement and the declared convention.
  auto model = model_of(e);
  p.result = [&](std::uint64_t c) { return classify(bf16, c) == FpClass::NaN && (c & 0x8000) ? 0xFFu : model(c); };
  const DeviceSweepResult bad = sweep_conversion(p, e, {});
  CHECK(!bad.passed());
  CHECK(bad.nan.not_as_stated == 127);
  REQUIRE(!bad.nan.listed.empty());
  CHECK(bad.nan.listed[0].stated == 0x7F);
  CHECK(bad.nan.listed[0].got == 0xFF);
  CHECK(bad.check.mismatches == 127);
}

TEST_CASE("sweep: lane differences and stray container bits fail the run with their codes") {
  const DeviceConversion& e = entry("f16x2_to_e4m3x2_satfinite");
  HostProducer p;
  p.result = model_of(e, 0x7F);
  p.lanes = {{0x3C00, 0x38, 0x39}};
  p.strays = {{0x4000, 0x140}};
  const DeviceSweepResult r = sweep_conversion(p, e, {});
  CHECK(!r.passed());
  CHECK(r.lane_mismatches == 1);
  REQUIRE(r.lanes.size() == 1);
  CHECK(r.lanes[0].src == 0x3C00);
  CHECK(r.lanes[0].hi == 0x39);
  CHECK(r.stray == 1);
  CHECK(r.failures.size() == 2);
}

TEST_CASE("sweep: tf32 results travel in fp32 bits, an entry the running code lacks is refused") {
  const DeviceConversion& e = entry("f32_to_tf32_rna");
  HostProducer p;
  p.result = model_of(e, 0x7FFFE000);
  SweepOptions opt;
  opt.ranges = {{0x3F800000, 0x10000}, {0x7F7F0000, 0x20000}};  // around 1 and around Inf / the first NaNs
  const DeviceSweepResult r = sweep_conversion(p, e, opt);
  CHECK(r.passed());
  CHECK(r.patterns == 0x30000);
  CHECK(r.nan.inputs == 0xFFFF);  // 0x7f800001 .. 0x7f80ffff
  struct Old : public ConversionProducer {
    std::uint64_t max_chunk() const override { return 65536; }
    void enqueue(const DeviceConversion&, std::uint64_t, std::uint64_t, int) override { FAIL("must not run"); }
    ProducedChunk wait(int) override { return {}; }
    RunningArch running_arch() const override { return {800, 0, 8, 0}; }
    DeviceInfo device_info() const override { return {}; }
    std::string device_name() const override { return "sm_80"; }
  } old;
  CHECK_THROWS_AS(sweep_conversion(old, entry("f32_to_tf32_rn"), {}), NotSupportedError);
}

TEST_CASE("sweep: the scaled round trip, emulated exactly, passes, a value in the window that does not come back fails") {
  const DeviceConversion& e = entry("bf16_to_f16_pow2_scaled");
  // The kernel's arithmetic on the host: h = RN_f16(x * 2^s) (the fp32 product is exact or leaves
  // fp16's range either way), z = RN_bf16(RN_f32(h * 2^-s)); NaN -> 0x7fff twice.
  auto emulate = [](std::uint64_t p) -> std::uint32_t {
    const int s = static_cast<int>(p >> 16) - 126;
    const std::uint32_t x = p & 0xFFFF;
    if (classify(bf16, x) == FpClass::NaN) return 0x7FFFu | (0x7FFFu << 16);
    const std::uint64_t h = round_double(f16, std::ldexp(to_double(bf16, x), s), Rounder::nearest(f16)).code;
    const double w = to_double(f32, round_double(f32, std::ldexp(to_double(f16, h), -s), Rounder::nearest(f32)).code);
    const std::uint64_t z = round_double(bf16, w, Rounder::nearest(bf16)).code;
    return static_cast<std::uint32_t>(h | (z << 16));
  };
  HostProducer p;
  p.chunk = std::uint64_t{1} << 22;  // 64 scales per chunk
  p.result = emulate;
  SweepOptions opt;
  opt.mpfr_sample = 0;
  const DeviceSweepResult r = sweep_conversion(p, e, opt);
  for (const auto& f : r.failures) MESSAGE(f);
  CHECK(r.passed());
  CHECK(r.patterns == 254 * 65536);
  REQUIRE(r.scaled.rows.size() == 254);
  const ScaleRow& s0 = r.scaled.rows[126];  // s = 0
  CHECK(s0.s == 0);
  CHECK(s0.window_lo == -17);
  CHECK(s0.window_hi == 15);
  // Finite bf16 in binades -17 .. 15: 33 binades of 128 codes, both signs, plus the two zeros.
  CHECK(s0.window_patterns == 2 * 33 * 128 + 2);
  CHECK(s0.window_exact == s0.window_patterns);
  CHECK(s0.outside_exact > 0);  // e.g. 2^-18: a power of two below the window still comes back
  CHECK(r.scaled.rows[0].window_lo == 109);
  CHECK(r.scaled.rows[0].window_hi == 127);
  CHECK(r.scaled.rows[253].window_lo == -133);
  CHECK(r.scaled.model_window_errors == 0);

  // One bf16 in the window comes back wrong: s = 0, x = 1.0 (0x3f80).
  const std::uint64_t bad = (std::uint64_t{126} << 16) | 0x3F80;
  p.result = [&](std::uint64_t q) { return q == bad ? emulate(q) ^ (1u << 16) : emulate(q); };
  opt.ranges = {{std::uint64_t{126} << 16, 65536}};
  const DeviceSweepResult w = sweep_conversion(p, e, opt);
  CHECK(!w.passed());
  CHECK(w.scaled.window_failures == 1);
  CHECK(w.scaled.roundtrip_mismatches == 1);  // and it is not RN_bf16(RN_f32(h * 2^-s)) of its h either
  REQUIRE(!w.scaled.listed.empty());
  CHECK(w.scaled.listed[0].src == bad);
}

TEST_CASE("the CUDA headers' own software emulation (host code) equals the table's Rounders and NaN statements") {
  // The headers compile for the CPU through their emulation paths: what a device runs below the
  // hardware instruction's architecture (and, for __NV_NOSAT fp8, fp6/fp4 rz and ue8m0 in this
  // build, on every device). A wrong Rounder or NaN statement in the table fails here, without a
  // GPU. Narrow sources: every code; fp32: 32 blocks of 2^16 from the strided sample.
  if (!built_with_cuda()) {
    MESSAGE("built without CUDA: the headers' host code is not compiled in");
    return;
  }
  int checked = 0;
  for (const DeviceConversion& e : device_conversions(false)) {
    const HostEmulation fn = cuda_header_host_emulation(e.name);
    if (!fn) {
      CHECK_MESSAGE((e.kind == ConversionKind::ScaledRoundTrip || e.dst == &tf32), "no host emulation for " << e.name);
      continue;
    }
    CAPTURE(e.name);
    HostProducer p;
    p.arch = RunningArch{0, 0, 0, 0};  // the software path (the NaN statement of the emulation)
    p.result = [&](std::uint64_t c) { return fn(static_cast<std::uint32_t>(c)); };
    SweepOptions opt;
    opt.mpfr_sample = 257;
    if (e.src->total_bits() > 24) {
      const auto all = strided_sample_ranges(*e.src);
      for (std::size_t i = 0; i < all.size(); i += 8) opt.ranges.push_back(all[i]);
      opt.ranges.push_back({0x7F7F0000, 0x20000});  // the top binade, Inf, the first NaNs
      opt.ranges.push_back({0x80000000, 0x10000});  // -0 and negative subnormals
    }
    const DeviceSweepResult r = sweep_conversion(p, e, opt);
    for (const auto& f : r.failures) MESSAGE(f);
    for (const auto& m : r.check.listed)
      MESSAGE("src " << hex_code(*e.src, m.src) << " expected " << hex_code(*e.dst, m.expected) << " got " << hex_code(*e.dst, m.got));
    CHECK(r.passed());
    CHECK(r.patterns == (opt.ranges.empty() ? e.src->code_count() : 32 * 65536 + 0x30000));
    ++checked;
  }
  CHECK(checked > 100);
}


TEST_CASE("sweep: the NaN output histogram lists the 16 smallest codes with exact counts, whatever the chunking and thread count") {
  // f32 NaN sources 0x7f800001.. and 0xff800001..: each result keeps the source's top payload bits, so
  // there are many distinct NaN outputs, arriving in chunk order (descending codes first in the
  // negative half) and merged across threads in scheduling order. The report must not depend on either.
  const DeviceConversion& e = entry("f32_to_tf32_rn");
  auto model = model_of(e);
  auto result = [&](std::uint64_t c) -> std::uint32_t {
    const auto x = static_cast<std::uint32_t>(c);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0) return (x | 0x400000u) & ~0x1fffu;
    return model(c);
  };
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0xff800000u, 0x40000}, {0x7f800000u, 0x40000}};
  std::map<std::uint64_t, std::uint64_t> expected;  // every NaN output (a tf32 code) and its count, from the result map itself
  std::uint64_t nan_inputs = 0;
  for (const auto& [first, count] : ranges)
    for (std::uint64_t c = first; c < first + count; ++c)
      if ((c & 0x7fffffu) != 0) {
        ++expected[from_container(*e.dst, result(c))];
        ++nan_inputs;
      }
  REQUIRE(expected.size() > 16);
  std::optional<NanReport> first_report;
  for (const auto& [chunk, threads] : std::vector<std::pair<std::uint64_t, unsigned>>{{1 << 16, 1}, {1 << 12, 2}, {1 << 10, 4}}) {
    HostProducer p;
    p.chunk = chunk;
    p.result = result;
    SweepOptions opt;
    opt.ranges = ranges;
    opt.threads = threads;
    const DeviceSweepResult r = sweep_conversion(p, e, opt);
    CHECK(r.nan.inputs == nan_inputs);
    REQUIRE(r.nan.outputs.size() == 16);
    std::uint64_t listed = 0;
    auto want = expected.begin();
    for (const auto& [code, n] : r.nan.outputs) {
      CHECK(code == want->first);
      CHECK(n == want->second);
      listed += n;
      ++want;
    }
    CHECK(listed + r.nan.outputs_other == nan_inputs);
    if (!first_report) first_report = r.nan;
    CHECK(r.nan.outputs == first_report->outputs);
    CHECK(r.nan.outputs_other == first_report->outputs_other);
  }
}
