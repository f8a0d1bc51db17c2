// oracle/convert/convert_batch.hpp — the fast conversion path for arrays of codes (formats up to 32 bits).
//
// Same semantics as round_double() (oracle/round.hpp). Sources that embed in fp32 (fp32, tf32, every
// format of at most 16 bits) go through the conversion model's rounding core on fp32 bits
// (oracle/convert/convert_model.hpp), in Highway vectors on the best target of the CPU
// (oracle/convert/convert_simd.hpp), into every destination of at most 32 bits, ue8m0 included; stochastic
// rounding one pattern at a time. Wider pseudo formats (the scaled bf16 of the round-trip check) go
// through a branch-free rounding of double bit patterns, and into ue8m0 through round_double().
// tests/oracle/convert_batch_test.cpp and convert_simd_test.cpp hold it equal to round_double() and MPFR.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

/// out[i] = code of dst for source code in[i] of src; flags[i] (optional) the RoundFlag bits.
/// Stochastic rounding draws rbits = random_bits32(seed, in[i]). src and dst at most 32 bits.
void convert_codes(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed,
                   const std::uint32_t* in, std::uint32_t* out, std::uint8_t* flags, std::size_t n);

/// Same for the consecutive source codes first, first+1, ..., first+n-1 (exhaustive sweeps).
void convert_code_range(const Format& src, const Format& dst, const Rounder& r, std::uint64_t seed,
                        std::uint64_t first, std::uint32_t* out, std::uint8_t* flags, std::size_t n);

}  // namespace fpcert
