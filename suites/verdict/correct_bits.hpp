// suites/verdict/correct_bits.hpp — certifying emulation per element (docs/fp64.md, "Correct bits"): how many leading
// bits of each result agree with the correctly rounded result in the output format.
//
// correct_bits = p - bit_width(d), p the output's precision (53 for fp64) and d the distance in ulps between the result
// and RN(exact) counted along the format's codes (+0 and -0 one point): equal bits give p, one ulp off p - 1, 2 or 3
// ulps p - 2, ..., clipped at 0. A NaN where the rounded reference is NaN counts p, any other NaN or infinite mismatch 0.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"

namespace fpcert {

/// The correct bits of one result code against the correctly rounded code (both codes of f).
int correct_bits(const Format& f, std::uint64_t got, std::uint64_t rounded);

struct CorrectBitsStats {
  int min = -1;                      ///< the fewest correct bits of any element (-1: none)
  double median = -1;
  std::vector<std::uint64_t> hist;   ///< hist[b]: elements with exactly b correct bits, b = 0..p
};

/// Over every element of C (codes of f, row-major m x n) against the exact reference. With `map`, its
/// min_correct_bits receives the fewest correct bits of each of its cells (the grid of its max_frac).
CorrectBitsStats correct_bits_stats(const Format& f, const std::vector<std::uint64_t>& codes, const GemmRef& ref, ErrorMap* map = nullptr);

}  // namespace fpcert
