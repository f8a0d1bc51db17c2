// bench/norm_ref.cpp — the cost of the LayerNorm / RMSNorm reference (oracle/norm/norm_ref.hpp) on a 4096 x 4096 matrix of
// fp32 values (uniform in [-0.5, 1.5], and mean 1e4 with spread 4), with gamma and beta, into f32 and f16, on every
// core of this machine: seconds, elements per second, and how many elements Ziv's loop sent to MPFR.
// Usage: bench_norm_ref [rows] [cols] [threads]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/norm/norm_ref.hpp"

using namespace fpcert;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4096, cols = argc > 2 ? std::atoll(argv[2]) : 4096;
  const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 0;
  std::printf("norm reference, %lld x %lld, %u thread(s)\n", static_cast<long long>(rows), static_cast<long long>(cols),
              threads ? threads : thread_count());
  std::uint64_t s = 88172645463325252ULL;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  std::vector<double> g(static_cast<std::size_t>(cols)), b(static_cast<std::size_t>(cols));
  for (auto& v : g) v = static_cast<float>(0.5 + next());
  for (auto& v : b) v = static_cast<float>(2 * next() - 1);
  for (double offset : {0.5, 1e4}) {
    std::vector<double> x(static_cast<std::size_t>(rows * cols));
    for (auto& v : x) v = static_cast<float>(offset + (offset > 1 ? 4 : 2) * (next() - 0.5));
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RmsNorm})
      for (const Format* out : {&f32, &f16}) {
        const auto t0 = std::chrono::steady_clock::now();
        const NormRef r = norm_reference(kind, x.data(), rows, cols, g.data(), b.data(), 1e-5f, *out, threads);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("  offset %-6g %-9s -> %-3s: %.3f s, %.1f M elements/s, %lld by MPFR\n", offset, std::string(to_string(kind)).c_str(),
                    std::string(out->tag).c_str(), sec, static_cast<double>(rows * cols) / sec / 1e6, static_cast<long long>(r.stats.mpfr));
      }
  }
  return 0;
}
