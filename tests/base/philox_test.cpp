// tests/base/philox_test.cpp — Philox4x32-10 against Random123's published known answers, and the
// stochastic-rounding bits drawn from it.
#include <doctest/doctest.h>

#include <cstdint>

#include "base/philox.hpp"

using namespace fpcert;

// Random123's kat_vectors file, the three "philox4x32 10" lines: counter (4 words), key (2 words),
// expected output (4 words). philox_4x32(key, counter_hi, counter_lo) packs counter words 0-1
// into counter_lo and 2-3 into counter_hi (low word first), key word 0 into the key's low half.
TEST_CASE("philox_4x32: Random123 known-answer vectors") {
  struct Kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    const std::uint64_t lo = (static_cast<std::uint64_t>(k.ctr[1]) << 32) | k.ctr[0];
    const std::uint64_t hi = (static_cast<std::uint64_t>(k.ctr[3]) << 32) | k.ctr[2];
    const std::uint64_t key = (static_cast<std::uint64_t>(k.key[1]) << 32) | k.key[0];
    const auto r = philox_4x32(key, hi, lo);
    for (int i = 0; i < 4; ++i) CHECK(r[i] == k.out[i]);
  }
}

TEST_CASE("random_bits32: the first word of philox_4x32(key, 0, index)") {
  // The bits of element i depend on (key, i) only: two keys or two indices give other bits.
  CHECK(random_bits32(7, 12345) == philox_4x32(7, 0, 12345)[0]);
  CHECK(random_bits32(7, 12345) != random_bits32(8, 12345));
  CHECK(random_bits32(7, 12345) != random_bits32(7, 12346));
}
