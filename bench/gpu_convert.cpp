// bench/gpu_convert.cpp — full 2^32 sweeps on the GPU with the complete CPU check: fp32 -> fp16 rn,
// fp32 -> bf16 rn, fp32 -> e4m3 satfinite. Prints seconds, patterns/s and where the time goes (GPU
// kernels, device-to-host copies, CPU check, CPU waiting for the device), next to the CPU check's
// own rate on the same cores (no device involved), so the ratio shows what bounds the sweep. The
// target (issue 7): a full sweep including the check in <= 2 s on the H200 machine (16 cores).
// Without a device: a message, exit 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "kernels/convert/device_convert.hpp"
#include "suites/ops/conversion/device_sweep.hpp"
#include "oracle/convert/convert_batch.hpp"

using namespace fpcert;

namespace {

/// The CPU check alone on `n` fp32 codes from 0x30000000 (results from fpcert's model, as a
/// device that agrees everywhere would write them), all cores: patterns per second.
double cpu_check_rate(const DeviceConversion& e, std::uint64_t n) {
  const std::uint64_t first = 0x30000000;
  std::vector<std::uint32_t> model(n);
  std::vector<std::uint8_t> bytes(n * static_cast<std::uint64_t>(result_bytes(e)));
  parallel_for(n, 1 << 20, [&](std::uint64_t b, std::uint64_t end, unsigned) {
    convert_code_range(*e.src, *e.dst, e.rounder, 0, first + b, model.data() + b, nullptr, end - b);
    for (std::uint64_t i = b; i < end; ++i) {
      const std::uint32_t v = static_cast<std::uint32_t>(to_container(*e.dst, model[i]));
      for (int k = 0; k < result_bytes(e); ++k) bytes[i * result_bytes(e) + k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
  });
  ConvertCheckSpec spec;
  spec.src = e.src;
  spec.dst = e.dst;
  spec.rounder = e.rounder;
  spec.mpfr_every = false;
  const unsigned threads = thread_count();
  std::vector<ConvertCheckResult> per(threads);
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(n, std::max<std::uint64_t>(1 << 16, n / (threads * 8) + 1), [&](std::uint64_t b, std::uint64_t end, unsigned w) {
    check_conversion_chunk(spec, first + b, end - b, SubjectChunk{bytes.data() + b * result_bytes(e), result_bytes(e), true}, per[w]);
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(n) / s;
}

}  // namespace

int main() {
  std::string why;
  auto producer = make_cuda_conversion_producer(&why);
  if (!producer) {
    std::printf("bench_gpu_convert: no CUDA device (%s); nothing to measure\n", why.c_str());
    return 0;
  }
  const RunningArch a = producer->running_arch();
  std::printf("bench_gpu_convert: %s (cc %d.%d, code for __CUDA_ARCH__ %d), %u CPU threads; full 2^32 sweeps, every result checked "
              "(MPFR on disagreements and 1 in 4099)\n",
              producer->device_name().c_str(), a.cc_major, a.cc_minor, a.arch, thread_count());
  std::printf("%-24s %8s %10s %8s %8s %8s %8s %12s %6s  %s\n", "conversion", "wall s", "G pat/s", "GPU s", "copy s", "check s",
              "wait s", "CPU-only G/s", "ratio", "verdict");
  bool all_passed = true;
  for (const char* name : {"f32_to_f16_rn", "f32_to_bf16_rn", "f32_to_e4m3_satfinite"}) {
    const DeviceConversion* e = find_device_conversion(name);
    const DeviceSweepResult r = sweep_conversion(*producer, *e, {});
    const double rate = static_cast<double>(r.patterns) / r.timing.wall_s;
    const double cpu = cpu_check_rate(*e, std::uint64_t{1} << 28);
    std::printf("%-24s %8.3f %10.3f %8.3f %8.3f %8.3f %8.3f %12.3f %6.2f  %s (%llu mismatches, %llu NaN-vs-NaN)\n", name, r.timing.wall_s,
                rate / 1e9, r.timing.gpu_s, r.timing.transfer_s, r.timing.check_s, r.timing.wait_s, cpu / 1e9, rate / cpu,
                r.passed() ? "PASS" : "FAIL", static_cast<unsigned long long>(r.check.mismatches),
                static_cast<unsigned long long>(r.check.nan_differences));
    std::fflush(stdout);
    all_passed = all_passed && r.passed();
  }
  std::printf("ratio: the sweep's rate over the CPU check's alone (1.0: the GPU and the copies are fully hidden)\n");
  return all_passed ? 0 : 1;
}
