// bench/expf_ops.cpp — fpcert's expf_ops (oracle/math/expf_ops.hpp) over every binary32 input, beside the proved fast
// exp of the reference (oracle/math/exp_kernel.hpp: relative error <= 2^-48, so each error below is measured to within
// 2^-24 ulp): the largest error in ulps of the result (subnormal results in the subnormal grid) and where, the count of
// results that are not the nearest binary32 by more than the measurement's slack, and the time of expf_ops and of the
// reference per input, side by side. What kExpfOpsUlps (the claim the softmax's bitwise tier and the elementwise check
// rely on) comes from. Usage: bench_expf_ops [threads] (default: every core).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "bench/machine.hpp"
#include "oracle/math/elementary.hpp"
#include "oracle/math/expf_ops.hpp"

using namespace fpcert;
using Clock = std::chrono::steady_clock;

namespace {

struct Part {
  double worst = 0;
  std::uint32_t at = 0;
  std::uint64_t above_half = 0, checked = 0, special_bad = 0;
  double ops_s = 0, ref_s = 0;
};

void run(std::uint64_t lo, std::uint64_t hi, Part& p) {
  const math::ExpTables& t = math::exp_tables();
  std::vector<float> xs(1 << 16), ys(1 << 16);
  for (std::uint64_t b = lo; b < hi; b += xs.size()) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(xs.size(), hi - b));
    for (std::size_t i = 0; i < n; ++i) xs[i] = std::bit_cast<float>(static_cast<std::uint32_t>(b + i));
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < n; ++i) ys[i] = math::expf_ops(xs[i]);
    const auto t1 = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      const float x = xs[i], y = ys[i];
      if (std::isnan(x)) {
        p.special_bad += !std::isnan(y);
        continue;
      }
      if (x < -104.0f || x > 88.8f) {  // e^x below 2^-150 or above the largest binary32: +0 and +Inf exactly
        p.special_bad += y != (x < 0 ? 0.0f : INFINITY);
        continue;
      }
      const double e = math::exp_fast(math::ExpKind::Exp, static_cast<double>(x), t);
      if (e > 0x1.fffffep127) {  // the exact value overflows binary32 only past its rounding boundary
        p.special_bad += !(y == INFINITY || y == 0x1.fffffep127f);
        continue;
      }
      int ex = 0;
      (void)std::frexp(e, &ex);
      const double ulp = std::ldexp(1.0, std::max(ex - 24, -149));
      const double err = std::fabs(static_cast<double>(y) - e) / ulp;
      if (err > p.worst) p.worst = err, p.at = std::bit_cast<std::uint32_t>(x);
      p.above_half += err > 0.5 + 0x1p-20;
      ++p.checked;
    }
    const auto t2 = Clock::now();
    p.ops_s += std::chrono::duration<double>(t1 - t0).count();
    p.ref_s += std::chrono::duration<double>(t2 - t1).count();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : std::max(1u, std::thread::hardware_concurrency());
  fmt::print("machine: {} ({} hardware threads, {} used), load average {}\n", bench::cpu_model(), std::thread::hardware_concurrency(),
             threads, bench::load_average());
  (void)math::exp_tables();
  std::vector<Part> parts(threads);
  std::vector<std::thread> pool;
  const std::uint64_t total = std::uint64_t{1} << 32, step = total / threads;
  const auto t0 = Clock::now();
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back(run, i * step, i + 1 == threads ? total : (i + 1) * step, std::ref(parts[i]));
  for (auto& th : pool) th.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  Part all;
  for (const Part& p : parts) {
    if (p.worst > all.worst) all.worst = p.worst, all.at = p.at;
    all.above_half += p.above_half, all.checked += p.checked, all.special_bad += p.special_bad;
    all.ops_s += p.ops_s, all.ref_s += p.ref_s;
  }
  fmt::print("expf_ops, every binary32 input: {} finite results measured, max error {:.4f} ulp at x = {:a} (0x{:08x}); {} beyond "
             "0.5 ulp (not the nearest binary32); {} special or saturated results wrong\n",
             all.checked, all.worst, std::bit_cast<float>(all.at), all.at, all.above_half, all.special_bad);
  fmt::print("claim kExpfOpsUlps = {} ulp: {}\n", math::kExpfOpsUlps, all.worst <= math::kExpfOpsUlps && all.special_bad == 0 ? "holds" : "BROKEN");
  fmt::print("time per input: expf_ops {:.2f} ns, the reference (exp_fast) with the comparison {:.2f} ns (ratio {:.2f}); wall {:.1f} s\n",
             all.ops_s * 1e9 / static_cast<double>(total), all.ref_s * 1e9 / static_cast<double>(total), all.ref_s / all.ops_s, wall);
  return all.worst <= math::kExpfOpsUlps && all.special_bad == 0 ? 0 : 1;
}
