// base/parallel.cpp — thread pool-free parallel-for: spawn, share an atomic cursor, join.
#include "base/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fpcert {

unsigned thread_count() {
  if (const char* env = std::getenv("FPCERT_THREADS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 1) return static_cast<unsigned>(v);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

void parallel_for(std::uint64_t n, std::uint64_t grain,
                  const std::function<void(std::uint64_t, std::uint64_t, unsigned)>& fn, unsigned threads) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  if (threads == 0) threads = thread_count();
  const std::uint64_t chunks = (n + grain - 1) / grain;
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, chunks));
  if (threads <= 1) {
    for (std::uint64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain), 0);
    return;
  }
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](unsigned worker) {
    for (;;) {
      const std::uint64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      const std::uint64_t b = c * grain;
      try {
        fn(b, std::min(n, b + grain), worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(chunks);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace fpcert
