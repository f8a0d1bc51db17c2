// base/philox.hpp — counter-based random bits (Random123 Philox4x32-10): the same bits for the
// same (key, counter) on every machine, which is what makes spec strings reproducible.
#pragma once

#include <Random123/philox.h>

#include <array>
#include <cstdint>

namespace fpcert {

/// Four 32-bit words for (key, counter): Philox4x32 with 10 rounds.
inline std::array<std::uint32_t, 4> philox_4x32(std::uint64_t key, std::uint64_t counter_hi, std::uint64_t counter_lo) {
  r123::Philox4x32 gen;
  r123::Philox4x32::ctr_type c = {{static_cast<std::uint32_t>(counter_lo), static_cast<std::uint32_t>(counter_lo >> 32),
                                   static_cast<std::uint32_t>(counter_hi), static_cast<std::uint32_t>(counter_hi >> 32)}};
  r123::Philox4x32::key_type k = {{static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)}};
  const auto r = gen(c, k);
  return {r[0], r[1], r[2], r[3]};
}

/// 32 random bits for (key, index): the stochastic-rounding bits fpcert uses for element `index`.
inline std::uint32_t random_bits32(std::uint64_t key, std::uint64_t index) { return philox_4x32(key, 0, index)[0]; }

}  // namespace fpcert
