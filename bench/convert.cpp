// bench/convert.cpp — the conversion model over all 2^32 fp32 patterns on every Highway target the CPU
// runs, next to the same core in a plain loop, round_double() per pattern, a hand-written scalar
// conversion and MPFR, measured in one run on one core: ns/pattern and ratios.
#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>

#include "oracle/convert/convert_model.hpp"
#include "oracle/convert/convert_simd.hpp"
#include "oracle/mpfr_ref.hpp"
#include "oracle/round.hpp"

using namespace fpcert;
using Clock = std::chrono::steady_clock;

namespace {

// Hand-written scalar fp32 -> fp16 round-to-nearest-even (the usual bit-twiddling version), the
// speed anchor the issue quotes; checked against fpcert on every pattern it converts.
std::uint16_t handwritten_f32_to_f16(std::uint32_t x) {
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return static_cast<std::uint16_t>(sign | (ax > 0x7F800000u ? 0x7E00u | ((ax >> 13) & 0x3FFu) : 0x7C00u));
  if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: overflow
  if (ax < 0x38800000u) {  // subnormal or zero in fp16
    if (ax < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to zero (2^-25 itself ties to 0)
    const std::uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    const int shift = 126 - static_cast<int>(ax >> 23);  // 14..24 + 1
    const std::uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return static_cast<std::uint16_t>(sign | (r + (rem > half || (rem == half && (r & 1)))));
  }
  const std::uint32_t r = (ax - 0x38000000u) >> 13, rem = ax & 0x1FFFu;
  return static_cast<std::uint16_t>(sign | (r + (rem > 0x1000u || (rem == 0x1000u && (r & 1)))));
}

std::uint16_t handwritten_f32_to_bf16(std::uint32_t x) {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace

int main() {
  // FPCERT_BENCH_PATTERNS: patterns per column (default 2^26: 1024 batches of 2^16, one every 2^22 codes).
  std::uint64_t n = std::uint64_t{1} << 26;
  if (const char* e = std::getenv("FPCERT_BENCH_PATTERNS")) n = std::strtoull(e, nullptr, 0);
  const std::uint64_t mpfr_n = 1u << 20;
  std::uint64_t sink = 0;
  std::vector<std::uint32_t> buf(1 << 16);
  std::vector<std::uint8_t> flags(1 << 16);
  const std::uint64_t blocks = std::max<std::uint64_t>(1, n >> 16);
  const std::uint64_t stride = (std::uint64_t{1} << 32) / blocks;
  const std::vector<std::int64_t> targets = simd_supported_targets();
  const std::int64_t best = simd_dispatched_target();
  fmt::print("fp32 -> narrow conversion model, one core, ns/pattern over {} batches of 2^16 consecutive fp32 codes spread evenly "
             "over all 2^32 (each batch: the fastest of 5 runs)\n", blocks);
  fmt::print("Highway targets this CPU runs (dispatch picks {}):", simd_target_name(best));
  for (const std::int64_t t : targets) fmt::print(" {}", simd_target_name(t));
  fmt::print("\n");
  // The columns, all on the same patterns: the model through Highway on each target (codes only, and
  // with the RoundFlag bytes the check needs), the same core in a plain loop, round_double() per
  // pattern (the scalar reference path), a hand-written bit-twiddling fp32 -> fp16/bf16, and MPFR.
  // The patterns of a column: `blocks` batches of 2^16 consecutive codes spread evenly over the 2^32
  // (every binade of both signs, so the mix of fast and general vectors is a full sweep's). Each batch
  // runs five times and keeps its fastest time: on a shared machine a batch (tens of microseconds)
  // either runs undisturbed or is preempted, so the minimum is the code's speed; the column is the
  // total of the minima over the patterns.
  auto sweep = [&](auto&& fn) {
    double total = 0;
    for (std::uint64_t k = 0; k < blocks; ++k) {
      const auto first = static_cast<std::uint32_t>(k * stride);
      double best = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = Clock::now();
        fn(first, buf.size());
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
        sink ^= buf[buf.size() - 1] + buf[buf.size() / 2] + flags[buf.size() / 3];
      }
      total += best;
    }
    return total / static_cast<double>(blocks * buf.size()) * 1e9;
  };
  fmt::print("{:<5}", "to");
  for (const std::int64_t t : targets) fmt::print(" {:>9}", simd_target_name(t));
  fmt::print(" {:>10} {:>9} {:>11} {:>11} {:>9} {:>9} {:>9} {:>10}\n", simd_target_name(best) + "+fl", "loop", "round_dbl",
             "handwritten", "MPFR", "loop/best", "rdbl/best", "MPFR/best");
  for (const Format* dst : {&bf16, &f16, &e4m3, &ue8m0}) {
    const Rounder r = Rounder::nearest(*dst);
    const Format& d = *dst;
    const ConvertTarget t = make_convert_target(d, r);
    std::vector<double> per_target;
    for (const std::int64_t tg : targets) {
      simd_force_targets(tg);
      per_target.push_back(sweep([&](std::uint32_t first, std::size_t len) { convert_f32_simd(t, nullptr, first, buf.data(), nullptr, len); }));
    }
    simd_force_targets(0);
    const double ns_best = per_target.front();
    const double ns_flags = sweep([&](std::uint32_t first, std::size_t len) { convert_f32_simd(t, nullptr, first, buf.data(), flags.data(), len); });
    const double ns_loop = sweep([&](std::uint32_t first, std::size_t len) { convert_f32_loop(t, nullptr, first, buf.data(), nullptr, len); });
    const double ns_rdbl = sweep([&](std::uint32_t first, std::size_t len) {
      for (std::size_t i = 0; i < len; ++i)
        buf[i] = static_cast<std::uint32_t>(round_double(d, static_cast<double>(std::bit_cast<float>(first + static_cast<std::uint32_t>(i))), r).code);
    });
    double ns_hand = 0;
    std::uint64_t hand_mismatch = 0;
    if (dst == &f16 || dst == &bf16) {
      ns_hand = sweep([&](std::uint32_t first, std::size_t len) {
        for (std::size_t i = 0; i < len; ++i) {
          const std::uint32_t c = first + static_cast<std::uint32_t>(i);
          buf[i] = dst == &f16 ? handwritten_f32_to_f16(c) : handwritten_f32_to_bf16(c);
        }
      });
      for (std::uint64_t i = 0; i < (std::uint64_t{1} << 32); i += 9973) {  // the anchor must be right where it is not a NaN
        const auto c = static_cast<std::uint32_t>(i);
        if ((c & 0x7FFFFFFFu) > 0x7F800000u) continue;
        const std::uint64_t h = dst == &f16 ? handwritten_f32_to_f16(c) : handwritten_f32_to_bf16(c);
        hand_mismatch += h != round_double(d, static_cast<double>(std::bit_cast<float>(c)), r).code;
      }
    }
    // MPFR on a strided sample of the same space, in batches of 1024 timed as above.
    std::vector<double> mpfr_batches;
    for (std::uint64_t b = 0; b < mpfr_n; b += 1024) {
      const auto t0 = Clock::now();
      for (std::uint64_t i = b; i < b + 1024; ++i) sink ^= mpfr_ref::convert(f32, static_cast<std::uint32_t>(i * 4093u), d, r).code;
      mpfr_batches.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 1024 * 1e9);
    }
    std::sort(mpfr_batches.begin(), mpfr_batches.end());
    const double ns_mpfr = mpfr_batches[mpfr_batches.size() / 10];
    fmt::print("{:<5}", d.tag);
    for (const double v : per_target) fmt::print(" {:>9.3f}", v);
    fmt::print(" {:>10.3f} {:>9.3f} {:>11.3f} {:>11} {:>9.1f} {:>9.2f} {:>9.1f} {:>10.0f}{}\n", ns_flags, ns_loop, ns_rdbl,
               ns_hand ? fmt::format("{:.3f}", ns_hand) : "-", ns_mpfr, ns_loop / ns_best, ns_rdbl / ns_best, ns_mpfr / ns_best,
               hand_mismatch ? fmt::format("  (hand-written anchor WRONG on {} patterns)", hand_mismatch) : "");
  }
  fmt::print("(first target column: what dispatch picks; +fl: also the RoundFlag bytes; MPFR timed on {} strided patterns; checksum {:x})\n",
             mpfr_n, sink);
  return 0;
}
