// oracle/convert/convert_simd.hpp — the conversion model's rounding core over arrays of fp32 bit patterns,
// vectorised with Google Highway and dispatched at run time to the best target the CPU has
// (AVX-512, AVX2, SSE4, ..., Highway's scalar target as the fallback). Same semantics as the
// one-pattern core in oracle/convert/convert_model.hpp, hence as round_double(); tests/oracle/
// convert_simd_test.cpp checks every target the CPU supports against it and MPFR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/convert/convert_model.hpp"

namespace fpcert {

/// out[i] = the target's code for the fp32 with bits in[i] (in == nullptr: bits first + i, mod 2^32);
/// flags[i] its RoundFlag bits (flags may be null). Every rounding but stochastic (t.rounding must
/// not be Stochastic: its random bits are per code, convert_batch.cpp's scalar loop draws them).
void convert_f32_simd(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                      std::uint8_t* flags, std::size_t n);

/// The same with the one-pattern core in a plain loop (the path before Highway; what the compiler
/// makes of it is its business): the scalar reference the benchmark and the tests set beside it.
void convert_f32_loop(const ConvertTarget& t, const std::uint32_t* in, std::uint32_t first, std::uint32_t* out,
                      std::uint8_t* flags, std::size_t n);

/// Highway targets (HWY_* bits) compiled into convert_f32_simd that this CPU supports, best first.
std::vector<std::int64_t> simd_supported_targets();
/// Every target compiled in, best first (whether or not this CPU has it).
std::vector<std::int64_t> simd_compiled_targets();
std::string simd_target_name(std::int64_t target);
/// The target convert_f32_simd runs on now.
std::int64_t simd_dispatched_target();
/// Make dispatch pick among `targets` only (0: the CPU's own again). A hook for tests and the
/// benchmark (hwy::SetSupportedTargetsForTest): process-wide, not for concurrent use.
void simd_force_targets(std::int64_t targets);

}  // namespace fpcert
