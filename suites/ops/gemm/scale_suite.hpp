// suites/ops/gemm/scale_suite.hpp — the cases of the opt-in `scale` suite (suites/ops/gemm/scale_suite.cpp).
#pragma once

#include <vector>

#include "suites/run/suite.hpp"

namespace fpcert {

/// Shapes at the edges of a GPU's launch and index limits, each graded on a sampled exact reference
/// (suites/verdict/sampled_reference.hpp): tall-skinny and short-wide products past gridDim.y/z = 65,535 blocks
/// (m or n up to 2^21 + 3 with small k), operands of 2^31 elements or more (m lda >= 2^31, k ldb >= 2^31), and an
/// LLM-sized 16384 x 8192 x 8192. On the CPU (SuiteContext::device false) the same cases at sizes a model runs in
/// seconds (the shapes' kinds, not their limits).
std::vector<CaseSpec> scale_cases(const SuiteContext& c);

}  // namespace fpcert
