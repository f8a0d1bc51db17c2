// bench/device_check_finish.cpp — the host side of the device check (suites/ops/conversion/device_sweep.cpp: MPFR on the
// device's differences and the sample, NaN inputs against fpcert and the NaN statement) without a
// device: tests/support/host_checker.hpp plays the device check, its chunks made outside the timing
// (in the checker's enqueue), and the sweep's timing.check_s is the finish alone. Per conversion,
// two sets of fp32 source codes: 2^24 finite codes around 1 (no NaN input) and the 2^24 codes of
// the top binade's exponent field, both signs (every fp32 NaN, and the two Infs); the device's NaN is
// the canonical NaN of cvt (fpcert's own results elsewhere). Prints ns per code and per NaN code, the
// finish with the NaN fast path beside the path that runs MPFR on every NaN input
// (SweepOptions::nan_mpfr_every), and the one-thread time of a 2^32 sweep's finish they imply.
// Usage: bench_device_check_finish [threads] (default 1: one core's cost).
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "kernels/convert/device_convert.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "tests/support/host_checker.hpp"

using namespace fpcert;

namespace {

/// Plays the device conversion: fpcert's model for every code (the batch path), NaN inputs -> `nan`.
class ModelProducer final : public ConversionProducer {
 public:
  std::uint32_t nan = 0;
  std::uint64_t max_chunk() const override { return std::uint64_t{1} << 22; }
  void enqueue(const DeviceConversion& e, std::uint64_t first, std::uint64_t n, int slot) override {
    codes_.resize(n);
    convert_code_range(*e.src, *e.dst, e.rounder, 0, first, codes_.data(), nullptr, n);
    const int bytes = result_bytes(e);
    buf_[slot].resize(n * static_cast<std::size_t>(bytes));
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t v = classify(*e.src, first + i) == FpClass::NaN ? nan : static_cast<std::uint32_t>(to_container(*e.dst, codes_[i]));
      std::memcpy(buf_[slot].data() + i * bytes, &v, static_cast<std::size_t>(bytes));
    }
  }
  ProducedChunk wait(int slot) override {
    ProducedChunk pc;
    pc.data = buf_[slot].data();
    return pc;
  }
  RunningArch running_arch() const override { return {900, 0, 9, 0}; }
  DeviceInfo device_info() const override { return {}; }
  std::string device_name() const override { return "host emulation"; }

 private:
  std::vector<std::uint32_t> codes_;
  std::vector<std::uint8_t> buf_[2];
};

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 1u;
  fmt::print("bench_device_check_finish: the device check's host finish, {} thread(s); {}; load average {}\n", threads,
             bench::cpu_model(), bench::load_average());
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> finite = {{0x3F000000u, std::uint64_t{1} << 24}};
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> top = {{0x7F800000u, std::uint64_t{1} << 23},
                                                                     {0xFF800000u, std::uint64_t{1} << 23}};
  fmt::print("{:<22} {:<10} {:>12} {:>12} {:>13} {:>12} {:>14}  {}\n", "conversion", "NaN path", "finite ns", "NaN ns",
             "2^32 finish s", "MPFR calls", "NaN-vs-NaN", "verdict");
  struct Case {
    const char* name;
    std::uint32_t nan;
  };
  bool ok = true;
  for (const Case& k : {Case{"f32_to_f16_rn", 0x7FFF}, Case{"f32_to_bf16_rn", 0x7FFF}, Case{"f32_to_e4m3_satfinite", 0x7F}}) {
    const DeviceConversion* e = find_device_conversion(k.name);
    if (!e) {
      fmt::print("{}: not in the table\n", k.name);
      return 1;
    }
    ModelProducer producer;
    producer.nan = k.nan;
    test::HostChecker checker(producer, std::uint64_t{1} << 24);
    for (const bool mpfr_every : {true, false}) {
      SweepOptions opt;
      opt.checker = &checker;
      opt.threads = threads;
      opt.nan_mpfr_every = mpfr_every;
      opt.ranges = finite;
      const DeviceSweepResult f = sweep_conversion(producer, *e, opt);
      opt.ranges = top;
      const DeviceSweepResult t = sweep_conversion(producer, *e, opt);
      const double ns_finite = f.timing.check_s / static_cast<double>(f.patterns) * 1e9;
      const double ns_nan = t.timing.check_s / static_cast<double>(t.nan.inputs) * 1e9;
      const double nan_all = static_cast<double>(t.nan.inputs);  // every fp32 NaN lies in `top`
      const double finish = (4294967296.0 - nan_all) * ns_finite * 1e-9 + nan_all * ns_nan * 1e-9;
      const bool passed = f.passed() && t.passed() && f.checked_on == "device" && t.checked_on == "device";
      fmt::print("{:<22} {:<10} {:>12.2f} {:>12.2f} {:>13.3f} {:>12} {:>14}  {}\n", k.name, mpfr_every ? "MPFR" : "fast", ns_finite,
                 ns_nan, finish, f.check.mpfr_checked + t.check.mpfr_checked, t.check.nan_differences, passed ? "PASS" : "FAIL");
      std::fflush(stdout);
      ok = ok && passed;
    }
  }
  fmt::print("finite ns: finish time per code of 2^24 finite fp32 codes around 1 (MPFR on the 1-in-4099 sample); NaN ns: per NaN\n"
             "input over the 2^24 codes with the top exponent field (2^24 - 2 NaNs); 2^32 finish s: the finish of a whole fp32\n"
             "sweep on {} thread(s) these imply. MPFR path: MPFR on every NaN input whose result is a NaN and every NaN difference\n"
             "(the finish before the NaN fast path); fast: the model's result as the truth for NaN inputs off the sample.\n",
             threads);
  return ok ? 0 : 1;
}
