// bench/math_ref.cpp — the correctly rounded elementwise reference (oracle/math/) per function on a
// strided sample of 2^24 fp32 patterns (every 256th), into f32 under round-to-nearest-even and under
// round-up: ns/input, the MPFR fall-back count, the extrapolated time for all 2^32 inputs on 2 cores,
// and MPFR alone (evaluate_mpfr: Ziv's loop in MPFR) on every 256th input of the sample, side by side.
#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "bench/machine.hpp"
#include "oracle/math/elementary.hpp"

using namespace fpcert;
using namespace fpcert::math;
using Clock = std::chrono::steady_clock;

int main() {
  fmt::print("machine: {} ({} hardware threads), load average {}\n", bench::cpu_model(),
             std::thread::hardware_concurrency(), bench::load_average());
  (void)exp_tables();  // start-up (MPFR tables) outside the timing
  (void)log_tables();
  constexpr std::uint64_t kStride = 256, kN = (std::uint64_t{1} << 32) / kStride;  // 2^24 inputs
  for (Rounding mode : {Rounding::NearestEven, Rounding::Up}) {
    const Rounder r{mode, Saturation::Inf, NanPayload::Preserve};
    for (Fn f : kAllFns) {
      if (is_mpfr_only(f)) continue;  // no fast path yet: MPFR alone (the ratio would be 1)
      std::uint64_t fallbacks = 0, sink = 0;
      const auto t0 = Clock::now();
      for (std::uint64_t i = 0; i < kN; ++i) {
        const MathResult m = evaluate(f, std::bit_cast<float>(static_cast<std::uint32_t>(i * kStride + 17)), f32, r);
        fallbacks += m.used_mpfr;
        sink += m.rounded.code;
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      const double ns = s * 1e9 / static_cast<double>(kN);
      std::uint64_t nm = 0;
      const auto t1 = Clock::now();
      for (std::uint64_t i = 0; i < kN; i += 256, ++nm)
        sink += evaluate_mpfr(f, std::bit_cast<float>(static_cast<std::uint32_t>(i * kStride + 17)), f32, r).code;
      const double ns_mpfr = std::chrono::duration<double>(Clock::now() - t1).count() * 1e9 / static_cast<double>(nm);
      fmt::print("{:6} {:4}: {:7.1f} ns/input, MPFR fall-backs {} of {} ({:.4f}%), all 2^32 on 2 cores ~ {:.0f} s; "
                 "MPFR alone {:7.1f} ns/input (x{:.1f}) [{}]\n",
                 to_string(f), to_string(mode), ns, fallbacks, kN, 100.0 * static_cast<double>(fallbacks) / static_cast<double>(kN),
                 ns * 4294967296.0 / 1e9 / 2.0, ns_mpfr, ns_mpfr / ns, sink & 1);
      std::fflush(stdout);
    }
  }
}
