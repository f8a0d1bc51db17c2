// base/parallel.hpp — a minimal parallel-for over index ranges on std::thread (no OpenMP).
#pragma once

#include <algorithm>
#include <cstdint>
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

}  // namespace fpcert
