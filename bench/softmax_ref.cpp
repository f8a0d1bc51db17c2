// bench/softmax_ref.cpp — the cost of the softmax reference (oracle/softmax/softmax_ref.hpp) on a 4096 x 4096 matrix
// of fp32 logits (uniform in [-4, 4], and a spread of 200 with 5 % masked entries), softmax and log-softmax into f32 and
// f16, on every core of this machine: seconds, elements per second, and how many elements Ziv's loop sent to MPFR.
// Usage: bench_softmax_ref [rows] [cols] [threads]   (issue 40's goal: < 2 s for 4096 x 4096 on the 2-core machine).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "base/parallel.hpp"
#include "oracle/softmax/softmax_ref.hpp"

using namespace fpcert;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4096, cols = argc > 2 ? std::atoll(argv[2]) : 4096;
  const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 0;
  std::printf("softmax reference, %lld x %lld, %u thread(s)\n", static_cast<long long>(rows), static_cast<long long>(cols),
              threads ? threads : thread_count());
  for (double spread : {8.0, 200.0}) {
    std::vector<double> z(static_cast<std::size_t>(rows * cols));
    std::uint64_t x = 88172645463325252ULL;
    for (auto& v : z) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = static_cast<float>(spread * (static_cast<double>(x >> 11) * 0x1p-53 - 0.5));
      if (spread > 100 && (x & 31) == 0) v = -std::numeric_limits<double>::infinity();
    }
    for (SoftmaxFn fn : {SoftmaxFn::Softmax, SoftmaxFn::LogSoftmax})
      for (const Format* out : {&f32, &f16}) {
        const auto t0 = std::chrono::steady_clock::now();
        const SoftmaxRef r = softmax_reference(fn, z.data(), rows, cols, *out, MaskedRowPolicy::Zero, threads);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("  spread %-4g %-11s -> %-3s: %.3f s, %.1f M elements/s, %lld by MPFR\n", spread, std::string(to_string(fn)).c_str(),
                    std::string(out->tag).c_str(), s, static_cast<double>(rows * cols) / s / 1e6, static_cast<long long>(r.stats.mpfr));
      }
  }
  return 0;
}
