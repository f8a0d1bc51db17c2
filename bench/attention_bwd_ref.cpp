// bench/attention_bwd_ref.cpp — the cost of the attention backward reference (oracle/attention/attention_bwd_ref.hpp) on
// every core of this machine: 1 x 8 heads x 2048 x 2048 x head_dim 128 on sampled rows (512 query rows for dQ, 512 key
// rows for dK and dV, each of which reads all 2048 query rows of its head: the target is < 20 s on the H200's
// 16-core host), and 2 x 4 / 2 heads x 77 x 77 x 64 in full. f16 inputs ~ N(0, 1); O and LSE of a double forward rounded
// to f16 and fp32 (what a forward saves; their cost is printed apart). Seconds, elements and how many Ziv's loop sent to
// MPFR. No assertion: docs/backward.md, "Attention backward", quotes the numbers. Usage: bench_attention_bwd_ref [threads]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/attention/attention_bwd_ref.hpp"
#include "oracle/round.hpp"

using namespace fpcert;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Problem {
  AttentionBwdInputs in;
  std::vector<double> q, k, v, o, g, lse;
};

void make(Problem& p, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t len, std::int64_t d, unsigned threads) {
  std::uint64_t s = 88172645463325252ULL;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  auto gauss = [&] { return (next() + next() + next() + next() - 2) * 1.7320508; };
  auto rn = [](const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); };
  AttentionInputs& f = p.in.fwd;
  f.batch = batch, f.heads_q = hq, f.heads_kv = hkv, f.len_q = f.len_k = len, f.head_dim = d;
  f.scale = static_cast<float>(1 / std::sqrt(static_cast<double>(d)));
  const auto nq = static_cast<std::size_t>(batch * hq * len * d), nk = static_cast<std::size_t>(batch * hkv * len * d);
  p.q.resize(nq), p.g.resize(nq), p.o.resize(nq), p.k.resize(nk), p.v.resize(nk), p.lse.resize(nq / static_cast<std::size_t>(d));
  for (auto* t : {&p.q, &p.k, &p.v, &p.g})
    for (auto& x : *t) x = rn(f16, gauss());
  f.q = p.q.data(), f.k = p.k.data(), f.v = p.v.data();
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(static_cast<std::uint64_t>(f.rows()), 16, [&](std::uint64_t b, std::uint64_t e, unsigned) {
    std::vector<double> z(static_cast<std::size_t>(len));
    for (std::uint64_t ru = b; ru < e; ++ru) {
      const auto r = static_cast<std::int64_t>(ru);
      double m = -INFINITY;
      for (std::int64_t j = 0; j < len; ++j) {
        double x = 0;
        for (std::int64_t c = 0; c < d; ++c) x += f.q_row(r)[c] * f.k[(f.kv_base(r) + j) * d + c];
        z[static_cast<std::size_t>(j)] = f.scale * x;
        m = std::max(m, z[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      std::vector<double> o(static_cast<std::size_t>(d), 0.0);
      for (std::int64_t j = 0; j < len; ++j) {
        const double w = std::exp(z[static_cast<std::size_t>(j)] - m);
        sum += w;
        for (std::int64_t c = 0; c < d; ++c) o[static_cast<std::size_t>(c)] += w * f.v[(f.kv_base(r) + j) * d + c];
      }
      for (std::int64_t c = 0; c < d; ++c) p.o[static_cast<std::size_t>(r * d + c)] = rn(f16, o[static_cast<std::size_t>(c)] / sum);
      p.lse[ru] = rn(f32, m + std::log(sum));
    }
  }, threads ? threads : thread_count());
  std::printf("  the saved forward (double, rounded to f16 / fp32): %.2f s\n", seconds_since(t0));
  p.in.o = p.o.data(), p.in.d_o = p.g.data(), p.in.lse = p.lse.data();
}

void report(const char* what, const AttentionBwdRef& r, double secs) {
  std::printf("  %s: %.2f s, dQ rows %zu, dK/dV rows %zu, %lld elements, %lld by MPFR, %lld unsettled\n", what, secs, r.q_rows.size(),
              r.kv_rows.size(), static_cast<long long>(r.stats.elements), static_cast<long long>(r.stats.mpfr),
              static_cast<long long>(r.stats.unsettled));
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 0;
  std::printf("attention backward reference, %u thread(s)\n", threads ? threads : thread_count());
  {
    std::printf("1 x 8 x 2048 x 2048 x 128, f16, sampled rows:\n");
    Problem p;
    make(p, 1, 8, 8, 2048, 128, threads);
    const auto qr = attention_sample_rows(p.in.fwd, 512), kr = attention_bwd_sample_kv_rows(p.in, 512);
    const auto t0 = std::chrono::steady_clock::now();
    const AttentionBwdRef r = attention_bwd_reference(p.in, f16, f16, f16, qr, kr, threads);
    report("reference", r, seconds_since(t0));
  }
  {
    std::printf("2 x 4 / 2 x 77 x 77 x 64, f16, every row:\n");
    Problem p;
    make(p, 2, 4, 2, 77, 64, threads);
    const auto t0 = std::chrono::steady_clock::now();
    const AttentionBwdRef r = attention_bwd_reference(p.in, f16, f16, f16, {}, {}, threads);
    report("reference", r, seconds_since(t0));
  }
  return 0;
}
