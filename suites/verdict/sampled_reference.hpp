// suites/verdict/sampled_reference.hpp — the sampled exact reference of a GEMM (docs/suites.md, "Sampled
// references"): the reference of chosen rows and columns of C only, for shapes whose full reference would take
// minutes or more (m up to 2^21, operands of 2^31 elements, 16384 x 8192 x 8192). Element (p, q) of the sample is
// C(rows[p], cols[q]): the exact dot product of row rows[p] of A and column cols[q] of B, which is all that element
// of the full reference depends on, so its bits are the full reference's (tests/suites/sampled_reference_test.cpp).
// The chosen indices: the first and last, both sides of every power of two, of the grid limit (65,535 blocks) times
// the usual tile heights, of the rows and columns whose element offsets cross 2^29..2^32 in A, B or C, and random
// ones (Philox from the seed, reproducible).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {

/// Whether a case is graded on a sample, and how many random rows and columns it adds to the structured ones.
struct SampleSpec {
  bool on = false;
  std::int64_t rows = 16;  ///< random rows besides the structured ones (-1: every row)
  std::int64_t cols = 16;  ///< random columns besides the structured ones (-1: every column)
  bool active() const { return on; }
};

/// The rows and columns graded, ascending and distinct.
struct GemmSample {
  std::vector<std::int64_t> rows, cols;
  std::int64_t elements() const { return static_cast<std::int64_t>(rows.size() * cols.size()); }
  /// "rows {0, 1, 15, ...} x columns {...} (N of M elements)": what the report says was graded (long lists cut).
  std::string describe(std::int64_t m, std::int64_t n) const;
};

/// The indices in [0, extent) a sample takes along one dimension: 0, 1, extent - 2, extent - 1; 2^p - 1 and 2^p;
/// 65,535 t - 1, 65,535 t and 65,535 t + 1 for tile heights t in {1, 8, 16, 32, 64, 128, 256} (the last row a
/// grid of 65,535 blocks of t rows covers, and the first it does not); for every stride in `strides` (the leading
/// dimensions the operands and C are laid out with) and every L in {2^29, 2^30, 2^31, 2^32}, the line whose
/// offsets i * stride .. i * stride + stride - 1 hold L - 1 and L (where an int offset or a byte offset of 2 or
/// 4-byte elements overflows), and the next; plus `random` indices from Philox(seed). random < 0: every index.
std::vector<std::int64_t> sample_indices(std::int64_t extent, const std::vector<std::int64_t>& strides, std::int64_t random,
                                         std::uint64_t seed);

/// The sample of an m x n x k product: rows from the strides of A (k plus the runner's paddings) and C (n plus its
/// padding), columns from the strides of B (n plus paddings) and C.
GemmSample choose_gemm_sample(std::int64_t m, std::int64_t n, std::int64_t k, const SampleSpec& spec, std::uint64_t seed);

/// The problem the sample grades: A's chosen rows (|rows| x k), B's chosen columns (k x |cols|), the rest of p
/// as it is (spec, source format, achieved values).
Problem sampled_problem(const Problem& p, const GemmSample& s);

/// The exact reference of the sample: gemm_reference of sampled_problem(p, s)'s operands.
GemmRef sampled_reference(const Problem& p, const GemmSample& s);

/// Parse --sample's "ROWS[,COLS]": counts of random rows and columns besides the structured ones ("all": every one).
SampleSpec parse_sample_spec(const std::string& text);

}  // namespace fpcert
