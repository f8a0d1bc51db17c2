// base/codes.hpp — load and store format codes in their containers (1, 2, 4 or 8 bytes).
#pragma once

#include <cstdint>
#include <cstring>

namespace fpcert {

inline std::uint64_t load_code(const void* base, std::int64_t idx, int bytes) {
  switch (bytes) {
    case 1: return static_cast<const std::uint8_t*>(base)[idx];
    case 2: return static_cast<const std::uint16_t*>(base)[idx];
    case 4: return static_cast<const std::uint32_t*>(base)[idx];
    default: return static_cast<const std::uint64_t*>(base)[idx];
  }
}

inline void store_code(void* base, std::int64_t idx, int bytes, std::uint64_t code) {
  switch (bytes) {
    case 1: static_cast<std::uint8_t*>(base)[idx] = static_cast<std::uint8_t>(code); break;
    case 2: static_cast<std::uint16_t*>(base)[idx] = static_cast<std::uint16_t>(code); break;
    case 4: static_cast<std::uint32_t*>(base)[idx] = static_cast<std::uint32_t>(code); break;
    default: static_cast<std::uint64_t*>(base)[idx] = code; break;
  }
}

}  // namespace fpcert
