// tests/support/test_seed.hpp — the seed of randomised tests: $FPCERT_TEST_SEED, else a fixed one.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace fpcert::test {

/// Randomised tests draw from Philox keyed by this seed. It is printed at start-up; set
/// FPCERT_TEST_SEED to reproduce or to explore other samples.
inline std::uint64_t seed() {
  if (const char* s = std::getenv("FPCERT_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return 20261129;
}

}  // namespace fpcert::test
