// bench/gpu_convert_check.cpp — exhaustive conversion sweeps with the device check (convert and compare
// on the GPU, MPFR on the host for differences and the sample) beside the host check of the same
// device's results, each end to end, and each as a multiple of the memory-bandwidth time of reading
// the source patterns and writing the results once (patterns x (source bytes + result bytes) / peak
// bandwidth; the peak from cudaDeviceProp::memoryBusWidth and the memory clock, double data rate).
// Then the whole table (`fpcert convert --all`) with the device check. Without a device: a message,
// exit 0. FPCERT_BENCH_TABLE_HOST=1 also times the whole table with the host check (about 100 s).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/parallel.hpp"
#include "kernels/convert/convert_check_device.hpp"
#include "kernels/convert/device_convert.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "kernels/kernel.hpp"
#include "suites/ops/conversion/device_sweep.hpp"

using namespace fpcert;

namespace {

double bytes_per_pattern(const DeviceConversion& e) {
  return container_bytes(*e.src) + result_bytes(e);
}

}  // namespace

int main() {
  std::string why;
  auto producer = make_cuda_conversion_producer(&why);
  auto checker = producer ? make_cuda_device_checker(&why) : nullptr;
  if (!producer || !checker) {
    std::printf("bench_gpu_convert_check: no CUDA device (%s); nothing to measure\n", why.c_str());
    return 0;
  }
  const RunningArch a = producer->running_arch();
  double bw = checker->memory_bandwidth();
  if (bw <= 0) {  // a driver that reports no memory clock: say so, and measure against 1 TB/s
    std::printf("bench_gpu_convert_check: the device reports no memory clock; 'x bw' below is against 1000 GB/s\n");
    bw = 1e12;
  }
  std::printf("bench_gpu_convert_check: %s (cc %d.%d, __CUDA_ARCH__ %d), %u CPU threads; peak memory bandwidth %.0f GB/s "
              "(2 x memory clock x bus width, cudaDeviceProp)\n",
              producer->device_name().c_str(), a.cc_major, a.cc_minor, a.arch, thread_count(), bw / 1e9);
  std::printf("%-24s %-6s %8s %8s %8s %8s %10s %8s %9s  %s\n", "conversion", "check", "wall s", "GPU s", "host s", "wait s",
              "bw-time s", "x bw", "G pat/s", "verdict");
  bool ok = true;
  for (const char* name : {"f32_to_f16_rn", "f32_to_bf16_rn", "f32_to_e4m3_satfinite"}) {
    const DeviceConversion* e = find_device_conversion(name);
    for (const bool on_device : {true, false}) {
      SweepOptions opt;
      opt.checker = on_device ? checker.get() : nullptr;
      const auto t0 = std::chrono::steady_clock::now();
      const DeviceSweepResult r = sweep_conversion(*producer, *e, opt);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double t_bw = static_cast<double>(r.patterns) * bytes_per_pattern(*e) / bw;
      std::printf("%-24s %-6s %8.3f %8.3f %8.3f %8.3f %10.4f %8.1f %9.2f  %s (%llu mismatches, %llu NaN-vs-NaN)\n", name,
                  r.checked_on.c_str(), wall, r.timing.gpu_s, r.timing.check_s, r.timing.wait_s, t_bw, wall / t_bw,
                  static_cast<double>(r.patterns) / wall / 1e9, r.passed() ? "PASS" : "FAIL",
                  static_cast<unsigned long long>(r.check.mismatches), static_cast<unsigned long long>(r.check.nan_differences));
      std::fflush(stdout);
      ok = ok && r.passed();
    }
  }
  const bool table_host = std::getenv("FPCERT_BENCH_TABLE_HOST") != nullptr;
  for (const bool on_device : {true, false}) {
    if (!on_device && !table_host) break;
    double wall = 0, t_bw = 0, patterns = 0;
    int run = 0, failed = 0, on_dev = 0;
    for (const DeviceConversion& e : device_conversions(false)) {
      if (!entry_support(e, a).ok) continue;
      SweepOptions opt;
      opt.checker = on_device ? checker.get() : nullptr;
      const auto t0 = std::chrono::steady_clock::now();
      const DeviceSweepResult r = sweep_conversion(*producer, e, opt);
      wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      t_bw += static_cast<double>(r.patterns) * bytes_per_pattern(e) / bw;
      patterns += static_cast<double>(r.patterns);
      ++run;
      failed += r.passed() ? 0 : 1;
      on_dev += r.checked_on == "device" ? 1 : 0;
    }
    std::printf("whole table, %s check: %d conversions (%d checked on the device), %.3g patterns, %.2f s; bandwidth time %.3f s, "
                "x %.1f; %d failed (the table's known failures, if any, are listed by fpcert convert --all)\n",
                on_device ? "device" : "host", run, on_dev, patterns, wall, t_bw, wall / t_bw, failed);
  }
  std::printf("x bw: wall time over the time to read every source pattern and write every result once at peak bandwidth\n");
  return ok ? 0 : 1;
}
