// base/parallel.hpp — a minimal parallel-for over index ranges on std::thread (no OpenMP).
#pragma once

#include <cstdint>
#include <functional>

namespace fpcert {

/// Worker threads to use: $FPCERT_THREADS when set (>= 1), else the hardware's count.
unsigned thread_count();

/// Calls fn(begin, end, worker) on disjoint chunks of [0, n) of at most `grain` indices, from
/// `threads` workers (0: thread_count()). Chunks are handed out dynamically. The first
/// exception thrown by fn is rethrown after all workers stop.
void parallel_for(std::uint64_t n, std::uint64_t grain,
                  const std::function<void(std::uint64_t, std::uint64_t, unsigned)>& fn,
                  unsigned threads = 0);

}  // namespace fpcert
