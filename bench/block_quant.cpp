// bench/block_quant.cpp — block quantization, measured side by side in one run:
//   model      the quantizer model (oracle/block/block_format.hpp) on one thread, values per CPU second, next to the
//              plain fp32 -> element conversion of the same values (oracle/convert/convert_batch.hpp) as a ratio;
//   check      `fpcert quantize --check`'s sweeps per format (oracle/block/block_check.hpp), seconds and counts
//              (--check-stride N thins the fp32 sweep; 1, the default, is the exhaustive run);
//   device     the CUDA quantizer (kernels/block/device_block_quant.hpp) on 2^26 values per format: throughput, the
//              bytes it moves per second, and the ratio to a device-to-device copy of the input measured in
//              the same run (the memory-bandwidth limit); skipped, with the reason, without a device.
// Usage: bench_block_quant [--values N] [--check-stride N] [--no-check] [--no-device]
#include <fmt/format.h>

#include <bit>
#include <ctime>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/block/device_block_quant.hpp"
#include "oracle/block/block_check.hpp"
#include "oracle/block/block_format.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "base/philox.hpp"

using namespace fpcert;

namespace {

/// This thread's CPU time in seconds: per-core throughput that a loaded, shared machine does not distort.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// N(0, 1)-like fp32 values (sum of four uniforms, centred), deterministic.
std::vector<float> data(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = philox_4x32(1, 0, i);
    double s = 0;
    for (int q = 0; q < 4; ++q) s += r[q] * 0x1p-32;
    v[i] = static_cast<float>((s - 2.0) * 1.7320508);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t nvals = std::size_t{1} << 22;
  std::uint64_t check_stride = 1;
  bool do_check = true, do_device = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--values" && i + 1 < argc) nvals = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--check-stride" && i + 1 < argc) check_stride = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--no-check") do_check = false;
    else if (a == "--no-device") do_device = false;
    else {
      fmt::print(stderr, "usage: bench_block_quant [--values N] [--check-stride N] [--no-check] [--no-device]\n");
      return 2;
    }
  }
  const std::vector<float> x32 = data(nvals);
  const std::vector<double> x(x32.begin(), x32.end());

  fmt::print("quantizer model, one thread (thread CPU time), {} N(0,1)-like fp32 values in rows of 1024 (blocks along rows, nearest-even)\n", nvals);
  fmt::print("{:<11} {:>14} {:>16} {:>14}\n", "format", "Mvalues/s", "plain cvt Mv/s", "quant/plain");
  std::vector<std::uint32_t> codes(nvals), bits(nvals);
  std::vector<std::uint8_t> flags(nvals);
  for (std::size_t i = 0; i < nvals; ++i) bits[i] = std::bit_cast<std::uint32_t>(x32[i]);
  for (const BlockFormat* f : all_block_formats()) {
    BlockQuantOptions o;
    o.rule = f->default_rule;
    const std::int64_t cols = 1024, rows = static_cast<std::int64_t>(nvals) / cols;
    std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * cols));
    double t0 = thread_seconds();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t b = 0; b < cols / f->block; ++b)
        quantize_block(*f, o, 1.0, x.data() + r * cols + b * f->block, f->block, 1, out.data() + r * cols + b * f->block);
    const double tq = thread_seconds() - t0;
    // The plain conversion of the same values into the element format (MXINT8: into int8_elem), one thread.
    t0 = thread_seconds();
    convert_codes(f32, *f->element, Rounder{Rounding::NearestEven, Saturation::Finite, NanPayload::Canonical}, 0, bits.data(), codes.data(),
                  flags.data(), nvals);
    const double tc = thread_seconds() - t0;
    const double n = static_cast<double>(rows * cols);
    fmt::print("{:<11} {:>14.1f} {:>16.1f} {:>14.2f}\n", f->tag, n / tq / 1e6, static_cast<double>(nvals) / tc / 1e6, tq / n / (tc / static_cast<double>(nvals)));
  }

  if (do_check) {
    fmt::print("\nfpcert quantize --check (model vs MPFR), all threads, fp32-sweep stride {}; wall seconds per part, CPU seconds of all threads\n",
               check_stride);
    fmt::print("{:<11} {:>14} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10}\n", "format", "checked", "mismatch", "codes s", "sweep s", "bound. s",
               "total s", "CPU s");
    BlockCheckOptions co;
    co.stride = check_stride;
    for (const BlockFormat* f : all_block_formats()) {
      const std::clock_t c0 = std::clock();  // CPU time of every thread of the process
      const BlockCheckResult r = check_block_format(*f, co);
      const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
      fmt::print("{:<11} {:>14} {:>10} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>10.2f}\n", f->tag, r.checked(), r.mismatches(), r.parts[0].seconds,
                 r.parts[1].seconds, r.parts[2].seconds, r.seconds(), cpu);
    }
  }

  if (do_device) {
    const std::int64_t cols = 8192, rows = (std::int64_t{1} << 26) / cols;
    const std::vector<float> big = data(static_cast<std::size_t>(rows * cols));
    try {
      const double copy = device_copy_bandwidth_gbs(static_cast<std::size_t>(rows * cols) * 4);
      fmt::print("\nCUDA quantizer, {} x {} fp32 values, blocks along rows; device-to-device copy of the input: {:.1f} GB/s\n", rows, cols, copy);
      fmt::print("{:<11} {:>10} {:>12} {:>12} {:>12}\n", "format", "ms", "Gvalues/s", "GB/s moved", "vs copy");
      for (const BlockFormat* f : all_block_formats()) {
        BlockQuantOptions o;
        o.rule = f->default_rule;
        const DeviceQuantized d = quantize_on_device(*f, o, big.data(), rows, cols, 20);
        const double n = static_cast<double>(rows * cols);
        const double bytes = n * 4 + n + n / f->block;  // read fp32, write one code byte each and one scale per block
        const double gbs = bytes / (d.kernel_ms * 1e-3) / 1e9;
        fmt::print("{:<11} {:>10.3f} {:>12.2f} {:>12.1f} {:>12.2f}\n", f->tag, d.kernel_ms, n / (d.kernel_ms * 1e-3) / 1e9, gbs, gbs / copy);
      }
    } catch (const std::exception& e) {
      fmt::print("\nCUDA quantizer: skipped ({})\n", e.what());
    }
  }
  return 0;
}
