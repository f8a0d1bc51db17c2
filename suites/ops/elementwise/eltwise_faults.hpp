// suites/ops/elementwise/eltwise_faults.hpp — fault injectors for elementwise kernels (docs/mutation.md, "Elementwise"):
// every fault made around the kernel, a black box (a library function carries no fault of its own): its inputs
// changed before the call (subnormals flushed, the sign dropped, large arguments' low bits cleared), its call changed
// (one element short), or its results changed after it (moved an ulp, narrowed to bf16's precision, flushed, NaN or
// Inf replaced, zeros), or memory it must not touch written (past the end of y, x[0]).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the elementwise kernel `kernel` (empty: it applies).
std::string eltwise_fault_not_applicable(Fault f, const ElementwiseKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_eltwise_mutant(const std::string& kernel, Fault f);

/// The code transformations the injectors apply, on codes of an f32, f16 or bf16 format (exposed for the tests, which
/// check them against values): one ulp further from zero (finite nonzero codes; the largest finite becomes Inf);
/// rounded to nearest-even at `bits` significand bits (bits < the format's precision); subnormals to signed zero.
std::uint32_t eltwise_ulp_away(const Format& f, std::uint32_t code);
std::uint32_t eltwise_narrow(const Format& f, std::uint32_t code, int bits);
std::uint32_t eltwise_flush(const Format& f, std::uint32_t code);

}  // namespace fpcert
