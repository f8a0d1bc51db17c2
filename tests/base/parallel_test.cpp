// tests/base/parallel_test.cpp — parallel_for visits every index exactly once, in chunks of at most
// `grain`, and rethrows the first exception after every worker stopped.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "base/parallel.hpp"

using namespace fpcert;

TEST_CASE("parallel_for: every index once, chunks within the grain, workers within the count") {
  for (unsigned threads : {1u, 3u, 8u})
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{999}, std::uint64_t{10007}}) {
      std::vector<std::atomic<int>> seen(n);
      std::atomic<unsigned> max_worker{0};
      std::atomic<bool> chunk_too_big{false};
      parallel_for(
          n, 64,
          [&](std::uint64_t b, std::uint64_t e, unsigned w) {
            if (e - b > 64 || e <= b) chunk_too_big = true;
            for (std::uint64_t i = b; i < e; ++i) seen[i].fetch_add(1);
            unsigned m = max_worker.load();
            while (w > m && !max_worker.compare_exchange_weak(m, w)) {
            }
          },
          threads);
      int wrong = 0;
      for (auto& s : seen) wrong += s.load() != 1;
      CHECK(wrong == 0);
      CHECK_FALSE(chunk_too_big.load());
      CHECK(max_worker.load() < threads);
    }
}

TEST_CASE("parallel_for: an exception in one chunk reaches the caller") {
  CHECK_THROWS_WITH_AS(parallel_for(
                           100000, 10,
                           [](std::uint64_t b, std::uint64_t, unsigned) {
                             if (b == 5000) throw std::runtime_error("chunk 500 failed");
                           },
                           4),
                       "chunk 500 failed", std::runtime_error);
}
