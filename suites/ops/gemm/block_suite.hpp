// suites/ops/gemm/block_suite.hpp — the cases of the `block-scaled` suite (suites/ops/gemm/block_suite.cpp).
#pragma once

#include <vector>

#include "suites/run/suite.hpp"

namespace fpcert {

/// Cases for block-scaled GEMMs (MX, NVFP4): ordinary data, per-K-block exponent shifts independent in A
/// and B (so A's and B's block scales differ: swapped scales show), wide exponents, outliers that saturate
/// or flush within their blocks.
std::vector<CaseSpec> block_scaled_cases(const SuiteContext& c);

}  // namespace fpcert
