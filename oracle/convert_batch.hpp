// oracle/convert_batch.hpp — the fast conversion path for arrays of codes (formats up to 32 bits).
//
// Same semantics as round_double() (oracle/round.hpp), written branch-free over the double
// representation of the source values so that the compiler vectorises it: formats are runtime
// descriptors (their constants hoisted out of the loop), the rounding mode a template
// parameter picked once per call. ue8m0 destinations and fp64 go through round_double().
// tests/oracle/convert_batch_test.cpp holds it equal to round_double() and MPFR.
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
