// bench/ulp.cpp — the grader's ULP distance (oracle/ulp.hpp): ulp_distance, which finds RZ(|x|)'s code from hi's bits
// where that provably equals the oracle's rounding, against ulp_distance_generic, which always rounds through the
// oracle, side by side on the same references (fp16, bf16, fp32, fp64 outputs; one thread). Prints ns per element of
// each, their ratio, and whether every result agreed bit for bit.
//
//   bench_ulp [N]   N references per format (default 4,000,000)
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "base/philox.hpp"
#include "bench/machine.hpp"
#include "oracle/refvalue.hpp"
#include "oracle/ulp.hpp"

using namespace fpcert;

namespace {

struct Item {
  std::uint64_t cand;
  RefValue ref;
};

/// References as a kernel's outputs meet them: an exact value near the format's values (hi random in its normal
/// range, lo a few double ulps), the candidate its nearest code or one or two codes beside it.
std::vector<Item> items(const Format& f, std::size_t n) {
  std::vector<Item> v;
  v.reserve(n);
  for (std::size_t i = 0; v.size() < n; ++i) {
    const auto w = philox_4x32(0xb0b, static_cast<std::uint64_t>(f.total_bits()), i);
    const int span = std::min(f.emax(), 60) - std::max(f.emin(), -60) + 1;
    const int e = std::max(f.emin(), -60) + static_cast<int>(w[0] % static_cast<std::uint32_t>(span));
    const double hi = std::ldexp(1.0 + w[1] * 0x1p-32, e) * ((w[2] & 1) ? -1 : 1);
    const double lo = std::ldexp(static_cast<double>(static_cast<std::int32_t>(w[3])), e - 53 - 31);
    const RefValue ref = ref_from_two_sum(hi, lo);
    const Rounded rn = round_ref(f, ref, {Rounding::NearestEven, Saturation::Finite, NanPayload::Preserve});
    const std::int64_t ord = code_ordinal(f, rn.code) + static_cast<std::int64_t>(w[2] >> 1) % 5 - 2;
    const std::uint64_t mag = static_cast<std::uint64_t>(ord < 0 ? -ord : ord);
    if (mag > f.max_finite_code()) continue;
    v.push_back({mag | (ord < 0 ? f.sign_mask() : 0), ref});
  }
  return v;
}

/// Best of three: seconds for one pass, and the results' bits summed (so the pass is not optimised away).
template <class F>
std::pair<double, std::uint64_t> best_of_three(const std::vector<Item>& v, F dist, std::vector<double>& out) {
  double best = INFINITY;
  std::uint64_t sum = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = dist(v[i]);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sum = 0;
    for (const double d : out) sum += std::bit_cast<std::uint64_t>(d);
  }
  return {best, sum};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000000;
  fmt::print("bench_ulp: {} | 1 thread | {} references per format | load average {}\n", bench::cpu_model(), n, bench::load_average());
  fmt::print("{:<6} {:>14} {:>14} {:>8}  {}\n", "format", "generic ns/el", "quick ns/el", "ratio", "agree");
  bool all = true;
  for (const Format* f : {&f16, &bf16, &f32, &f64}) {
    const std::vector<Item> v = items(*f, n);
    std::vector<double> quick(v.size()), generic(v.size());
    const auto [tg, sg] = best_of_three(v, [f](const Item& x) { return ulp_distance_generic(*f, x.cand, x.ref); }, generic);
    const auto [tq, sq] = best_of_three(v, [f](const Item& x) { return ulp_distance(*f, x.cand, x.ref); }, quick);
    bool agree = sg == sq;
    for (std::size_t i = 0; i < v.size() && agree; ++i) agree = std::bit_cast<std::uint64_t>(quick[i]) == std::bit_cast<std::uint64_t>(generic[i]);
    all = all && agree;
    const double k = 1e9 / static_cast<double>(v.size());
    fmt::print("{:<6} {:>14.1f} {:>14.1f} {:>7.2f}x  {}\n", f->tag, tg * k, tq * k, tg / tq, agree ? "bit for bit" : "DIFFER");
  }
  return all ? 0 : 1;
}
