// bench/attention_ref.cpp — the cost of the attention reference (oracle/attention/attention_ref.hpp) on every core of this
// machine: batch 1 x 8 heads x 1024 x 1024 x head_dim 128 in full, and 1 x 8 x 4096 x 4096 x 128 on 512 sampled rows
// (what the runner grades beyond 2^28 multiply-adds), f16 inputs ~ N(0, 1), O in f16: seconds, rows per second and how
// many elements Ziv's loop sent to MPFR. No assertion: docs/attention.md, "Cost", quotes the numbers.
// Usage: bench_attention_ref [threads]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/attention/attention_ref.hpp"
#include "oracle/round.hpp"

using namespace fpcert;

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 0;
  std::printf("attention reference, %u thread(s)\n", threads ? threads : thread_count());
  std::uint64_t s = 88172645463325252ULL;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  auto gauss = [&] { return (next() + next() + next() + next() - 2) * 1.7320508; };
  auto f16v = [](double x) { return to_double(f16, round_double(f16, x, Rounder::nearest(f16)).code); };
  for (const std::int64_t len : {1024, 4096}) {
    AttentionInputs in;
    in.heads_q = in.heads_kv = 8;
    in.len_q = in.len_k = len;
    in.head_dim = 128;
    in.scale = static_cast<float>(1 / std::sqrt(128.0));
    const auto n = static_cast<std::size_t>(8 * len * 128);
    std::vector<double> q(n), k(n), v(n);
    for (auto* t : {&q, &k, &v})
      for (auto& x : *t) x = f16v(gauss());
    in.q = q.data();
    in.k = k.data();
    in.v = v.data();
    const std::vector<std::int64_t> rows = len > 1024 ? attention_sample_rows(in, 512) : std::vector<std::int64_t>{};
    const auto t0 = std::chrono::steady_clock::now();
    const AttentionRef r = attention_reference(in, f16, MaskedRowPolicy::Zero, true, rows, threads);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  1 x 8 x %lld x %lld x 128 %s: %zu rows in %.3f s (%.0f rows/s), %lld element(s) by MPFR\n",
                static_cast<long long>(len), static_cast<long long>(len), rows.empty() ? "full" : "sampled", r.rows.size(), sec,
                static_cast<double>(r.rows.size()) / sec, static_cast<long long>(r.stats.mpfr));
  }
  return 0;
}
