// tests/support/splitmix.hpp — the oracle tests' own random numbers (splitmix64): a reference must not share the
// generators' code (Philox, generators/), so its tests draw their inputs from this instead.
#pragma once

#include <cstdint>

namespace fpcert::test {

/// splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
/// Draw i of stream `seed`: a double in [0, 1) with 53 random bits.
inline double unit(std::uint64_t seed, std::uint64_t i) { return static_cast<double>(mix(seed ^ mix(i)) >> 11) * 0x1p-53; }

}  // namespace fpcert::test
