// base/parallel.hpp — a minimal parallel-for over index ranges on std::thread (no OpenMP).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace fpcert {

/// Worker threads to use: $FPCERT_THREADS when set (>= 1), else the hardware's count.
unsigned thread_count();

/// Calls fn(begin, end, worker) on disjoint chunks of [0, n) of at most `grain` indices, from
/// `threads` workers (0: thread_count()). Chunks are handed out dynamically. The first
/// exception thrown by fn is rethrown after all workers stop.
void parallel_for(std::uint64_t n, std::uint64_t grain,
                  const std::function<void(std::uint64_t, std::uint64_t, unsigned)>& fn,
                  unsigned threads = 0);

/// Map-reduce over the fixed chunks [c * chunk, (c + 1) * chunk) of [0, n): part(x0, x1) returns chunk c's T (chunks run in
/// parallel), merge(acc, part) folds them into init in chunk order, so the result does not depend on the thread count.
template <class T, class Part, class Merge>
T parallel_reduce(std::uint64_t n, std::uint64_t chunk, T init, const Part& part, const Merge& merge) {
  if (chunk == 0) chunk = 1;
  const std::uint64_t nchunks = (n + chunk - 1) / chunk;
  std::vector<T> parts(nchunks);
  parallel_for(nchunks, 1, [&](std::uint64_t c0, std::uint64_t c1, unsigned) {
    for (std::uint64_t c = c0; c < c1; ++c) parts[c] = part(c * chunk, std::min(n, (c + 1) * chunk));
  });
  for (T& p : parts) merge(init, p);
  return init;
}

/// Wall seconds of a computation's phases, printed to stderr as "<who>: <phase> <seconds> s" when the environment
/// variable `env` is set (and `on`): where a large case's time goes, on a machine without a profiler.
class PhaseTrace {
 public:
  PhaseTrace(const char* env, const char* who, bool on = true) : on_(on && std::getenv(env) != nullptr), who_(who) {}
  void mark(const char* phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%s: %-16s %8.4f s\n", who_, phase, std::chrono::duration<double>(now - t_).count());
    t_ = now;
  }

 private:
  bool on_;
  const char* who_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

}  // namespace fpcert
