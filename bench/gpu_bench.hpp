// bench/gpu_bench.hpp — what the GPU benchmarks share: random operand codes, a device buffer, and the
// timing rule (median of `timed` launches after `warmups`, CUDA events, no copies).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"

namespace fpcert::bench {

inline std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// n random codes of format f in its container: sign random, magnitude in [2^-4, 1) with a random
/// fraction (never zero, Inf or NaN; products never overflow or underflow); with outlier_pct > 0,
/// that percentage of the entries is multiplied by 2^40.
inline std::vector<std::uint8_t> random_codes(const Format& f, std::size_t n, std::uint64_t seed, int outlier_pct = 0) {
  const int cb = container_bytes(f);
  std::vector<std::uint8_t> out(n * static_cast<std::size_t>(cb));
  std::uint64_t s = seed;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix(s);
    std::uint64_t exp = static_cast<std::uint64_t>(f.bias - 1 - static_cast<int>((r >> 1) % 4));  // 2^-1 .. 2^-4
    if (outlier_pct > 0 && (r >> 40) % 100 < static_cast<std::uint64_t>(outlier_pct)) exp += 40;
    const std::uint64_t code = ((r & 1) << (f.exp_bits + f.frac_bits)) | (exp << f.frac_bits) | ((r >> 8) & f.frac_mask());
    const std::uint64_t c = to_container(f, code);
    std::memcpy(out.data() + i * static_cast<std::size_t>(cb), &c, static_cast<std::size_t>(cb));
  }
  return out;
}

struct DeviceBuffer {
  DeviceApi* api = nullptr;
  void* p = nullptr;
  DeviceBuffer(DeviceApi& a, std::size_t bytes) : api(&a), p(a.alloc(bytes)) {}
  ~DeviceBuffer() { api->free(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// Median time of launch() in ms over `timed` calls after `warmups`; throws what launch() throws.
template <class Launch>
double median_ms(Launch&& launch, DeviceApi& api, int warmups, int timed) {
  for (int w = 0; w < warmups; ++w) launch();
  api.synchronize(600000);
  std::vector<double> ms;
  for (int q = 0; q < timed; ++q) {
    api.timer_start();
    launch();
    ms.push_back(api.timer_stop_ms());
  }
  api.synchronize(600000);
  std::sort(ms.begin(), ms.end());
  return timed % 2 ? ms[static_cast<std::size_t>(timed / 2)] : 0.5 * (ms[static_cast<std::size_t>(timed / 2 - 1)] + ms[static_cast<std::size_t>(timed / 2)]);
}

/// Median time of k.run(ops) in ms over `timed` launches after `warmups`; throws what run() throws.
inline double median_launch_ms(GemmKernel& k, const GemmOperands& ops, DeviceApi& api, int warmups, int timed) {
  return median_ms([&] { k.run(ops); }, api, warmups, timed);
}

/// The CUDA device with its line printed ("device: name, sm_XY, N SMs; CUDA runtime, cuBLAS"); null, with "<bench>: no
/// CUDA device (why): nothing to measure" printed, when there is none (the bench then exits 0).
inline std::unique_ptr<DeviceApi> open_device(const char* bench) {
  std::string why;
  auto api = make_cuda_api(&why);
  if (!api) {
    std::printf("%s: no CUDA device (%s): nothing to measure\n", bench, why.c_str());
    return nullptr;
  }
  const DeviceInfo d = api->info();
  std::printf("device: %s, sm_%d%d, %d SMs; CUDA runtime %s, cuBLAS %s\n", d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
              d.runtime.c_str(), d.cublas.c_str());
  return api;
}

/// One row-major m x n x k GEMM of the registered kernel `name` on random codes of its input format: the median ms of
/// `timed` launches after `warmups` (-1 when no such GEMM kernel is registered).
inline double time_gemm(const std::string& name, DeviceApi& api, std::int64_t m, std::int64_t n, std::int64_t k, int warmups, int timed) {
  auto g = make_gemm_kernel(name);
  if (!g) return -1;
  const Format& a = *g->traits().a_input;
  DeviceBuffer da(api, static_cast<std::size_t>(m * k) * container_bytes(a)), db(api, static_cast<std::size_t>(k * n) * container_bytes(a));
  DeviceBuffer dc(api, static_cast<std::size_t>(m * n) * container_bytes(*g->traits().out));
  const auto ha = random_codes(a, static_cast<std::size_t>(m * k), 4), hb = random_codes(a, static_cast<std::size_t>(k * n), 5);
  api.to_device(da.p, ha.data(), ha.size());
  api.to_device(db.p, hb.data(), hb.size());
  GemmOperands ops;
  ops.m = m, ops.n = n, ops.k = k;
  ops.a = da.p, ops.lda = k, ops.b = db.p, ops.ldb = n, ops.c = dc.p, ops.ldc = n;
  ops.stream = api.stream();
  return median_launch_ms(*g, ops, api, warmups, timed);
}

}  // namespace fpcert::bench
