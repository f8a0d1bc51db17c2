// bench/convert.cpp — the fast conversion path over all 2^32 fp32 patterns, next to a hand-written
// scalar conversion and MPFR, measured in one run on one core: ns/pattern and ratios.
#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>

#include "oracle/convert_batch.hpp"
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

template <class F>
double time_all(std::uint64_t n, F&& f, std::uint64_t& sink) {
  const auto t0 = Clock::now();
  std::uint64_t acc = 0;
  for (std::uint64_t i = 0; i < n; ++i) acc += f(static_cast<std::uint32_t>(i));
  sink ^= acc;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  // FPCERT_BENCH_PATTERNS limits the sweep (default: all 2^32).
  std::uint64_t n = std::uint64_t{1} << 32;
  if (const char* e = std::getenv("FPCERT_BENCH_PATTERNS")) n = std::strtoull(e, nullptr, 0);
  const std::uint64_t mpfr_n = 1u << 20;
  (void)argc;
  (void)argv;
  std::uint64_t sink = 0;
  fmt::print("fast conversion path (convert_code_range, batches of 2^16), {} fp32 patterns each, one core\n", n);
  fmt::print("{:<6} {:>13} {:>14} {:>15} {:>12} {:>12} {:>12}\n", "to", "batch ns/pat", "scalar ns/pat", "handwritten ns",
             "MPFR ns/pat", "batch/hand", "MPFR/batch");
  std::vector<std::uint32_t> buf(1 << 16);
  for (const Format* dst : {&bf16, &f16, &e4m3}) {
    const Rounder r = Rounder::nearest(*dst);
    const Format& d = *dst;
    const auto tb = Clock::now();
    for (std::uint64_t b = 0; b < n; b += buf.size()) {
      const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), n - b));
      convert_code_range(f32, d, r, 0, b, buf.data(), nullptr, len);
      sink ^= buf[len - 1] + buf[len / 2];
    }
    const double t_batch = std::chrono::duration<double>(Clock::now() - tb).count();
    const double t_fast = time_all(n, [&](std::uint32_t c) { return round_double(d, static_cast<double>(std::bit_cast<float>(c)), r).code; }, sink);
    double t_hand = 0;
    std::uint64_t hand_mismatch = 0;
    if (dst == &f16 || dst == &bf16) {
      t_hand = time_all(n, [&](std::uint32_t c) { return dst == &f16 ? handwritten_f32_to_f16(c) : handwritten_f32_to_bf16(c); }, sink);
      for (std::uint64_t i = 0; i < n; i += 97) {  // the anchor must be right where it is not a NaN
        const auto c = static_cast<std::uint32_t>(i);
        if ((c & 0x7FFFFFFFu) > 0x7F800000u) continue;
        const std::uint64_t h = dst == &f16 ? handwritten_f32_to_f16(c) : handwritten_f32_to_bf16(c);
        hand_mismatch += h != round_double(d, static_cast<double>(std::bit_cast<float>(c)), r).code;
      }
    }
    // MPFR on a strided sample of the same space.
    const auto t0 = Clock::now();
    for (std::uint64_t i = 0; i < mpfr_n; ++i) {
      const auto c = static_cast<std::uint32_t>(i * 4093u);
      sink ^= mpfr_ref::convert(f32, c, d, r).code;
    }
    const double t_mpfr = std::chrono::duration<double>(Clock::now() - t0).count();
    const double ns_batch = t_batch / static_cast<double>(n) * 1e9;
    const double ns_fast = t_fast / static_cast<double>(n) * 1e9;
    const double ns_hand = t_hand / static_cast<double>(n) * 1e9;
    const double ns_mpfr = t_mpfr / static_cast<double>(mpfr_n) * 1e9;
    fmt::print("{:<6} {:>13.3f} {:>14.3f} {:>15} {:>12.1f} {:>12} {:>12.0f}{}\n", d.tag, ns_batch, ns_fast,
               t_hand ? fmt::format("{:.3f}", ns_hand) : "-", ns_mpfr, t_hand ? fmt::format("{:.2f}", ns_batch / ns_hand) : "-",
               ns_mpfr / ns_batch, hand_mismatch ? fmt::format("  (hand-written anchor WRONG on {} patterns)", hand_mismatch) : "");
  }
  fmt::print("(MPFR timed on {} strided patterns; checksum {:x})\n", mpfr_n, sink);
  return 0;
}
