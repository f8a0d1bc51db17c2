// suites/ops/conversion/fault_classes.hpp — the source codes a conversion fault can touch, for a source too wide to sweep
// (more than 2^24 codes: fp32), as classes swept exhaustively (docs/mutation.md, "Sources of 32 bits").
//
// The class argument: with a deterministic rounding (not stochastic) and a destination with fewer fraction bits q than
// the source, a normal source code's result depends only on its sign, its biased exponent, the top q + 1 bits of its
// fraction (the kept bits and the round bit, for a normal or a subnormal result alike; a NaN keeps the payload's top
// bits, the quiet bit the top one) and whether the rest of the fraction is zero (sticky); a subnormal source's on its
// sign, its leading bit, the q + 1 bits after it and the rest's sticky. Far below the destination's smallest value
// (exponent < that value's - 2) every source of one sign converts alike, and far above its largest (exponent > emax + 2)
// too. So each source code has a representative: the same sign and kept bits, the rest 0 or 1, the exponent clamped to
// that window. Strictly inside the destination's normal range (exponents emin + 2 ... emax - 3) a source converts, under
// every deterministic rounding, to the same significand and carry at any exponent: whether a fault changes a result there
// does not depend on the exponent, and one exponent of that middle stands for all. Every fault of conversion_faults.hpp
// is a function of the declared result and the source's class (the changed rounder; or FTZ, the zero's sign, the quiet
// bit of the result), so a fault that changes no representative's result changes no result of fpcert's model at all.
// tests/suites/fault_classes_test.cpp checks the representative converts as its codes do, for every 32-bit model and
// every fault's rounder, on random codes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"

namespace fpcert {

/// Why the class argument does not hold for this conversion (empty: it holds): stochastic rounding, a destination at
/// least as precise as the source, a source that is not an IEEE format of at most 32 bits.
std::string conversion_classes_problem(const ConversionTraits& t);

/// The representative of a source code (see above). Requires conversion_classes_problem(t) empty.
std::uint64_t conversion_class_representative(const ConversionTraits& t, std::uint64_t code);

/// `code` with its exponent moved to the one that stands for the scaled middle (unchanged outside it): a fault changes
/// the result of one exactly when it changes the other's (tests/suites/fault_classes_test.cpp).
std::uint64_t conversion_class_scaled(const ConversionTraits& t, std::uint64_t code);

struct ConversionClassCodes {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  ///< (first, count) of source codes, ascending, disjoint
  std::uint64_t class_codes = 0;   ///< codes of the classes swept (each representative of the classes the fault touches)
  std::uint64_t sample_codes = 0;  ///< random codes added (Philox), beyond those
  std::string classes;             ///< the classes in words ("every tie: ...")
};

/// The representatives of every class fault `f` can change (ties for ties away, the overflow boundary and Inf/NaN for the
/// saturation faults, the underflow range for FTZ and the zero's sign, NaN sources and the overflow boundary for the NaN
/// faults, every class for toward zero), plus `sample` random source codes. Throws std::invalid_argument when
/// conversion_classes_problem(t) is not empty.
ConversionClassCodes conversion_fault_class_codes(ConversionFault f, const ConversionTraits& t, std::uint64_t sample = 4096);

/// The representatives of every class (all faults together) plus `sample` random codes: the diagnosis's `classes` case.
ConversionClassCodes conversion_all_class_codes(const ConversionTraits& t, std::uint64_t sample = 4096);

}  // namespace fpcert
