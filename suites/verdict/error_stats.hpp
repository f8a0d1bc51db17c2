// suites/verdict/error_stats.hpp — the per-element statistics of a graded case that reports print: ULP and error-fraction
// histograms, quantiles, the worst elements and the error map. Every pass runs over parallel chunks merged in chunk
// order, so results do not depend on the thread count (a 4096 x 4096 case's 16M elements: fill_device, issue 39).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"

namespace fpcert {

/// Elements per chunk of the graders' per-element passes.
inline constexpr std::uint64_t kGradeChunk = std::uint64_t{1} << 16;

/// Histogram bucket of a ulp distance: 0: [0, 0.5], 1: (0.5, 1], 2: (1, 2], ..., 16: (2^14, inf), 17: non-finite.
int ulp_bucket(double u);

/// The values at the given ranks (0-based, each below the count of non-NaN values) of v's non-NaN values in ascending
/// order, exactly as sorting would give them: a radix select on order-preserving 64-bit keys, 16 bits a pass, each
/// pass a histogram over parallel chunks (std::nth_element on a copy for fewer than 2^20 values).
std::vector<double> order_statistics(const std::vector<double>& v, const std::vector<std::size_t>& ranks);

/// The 0.99 quantile and the median of v's non-NaN values (0, 0 when there are none): ranks
/// floor(q (n - 1) + 0.5), the metrics' definition.
std::pair<double, double> p99_and_median(const std::vector<double>& v);

/// The ULP histogram (ulp_bucket) of output codes against the exact reference, leaving out the finite outputs of
/// cancellation-dominated elements (results/results.hpp, kCancellationRatio).
std::vector<std::uint64_t> ulp_histogram(const Format& of, const std::vector<std::uint64_t>& codes, const GemmRef& ref);

/// The histogram of error fractions (err_frac_bucket), NaN (not graded) left out.
std::vector<std::uint64_t> err_frac_histogram(const std::vector<double>& fracs);

/// The error fraction's statistics, histogram, map and `keep` worst elements (largest first, ties: the smaller index
/// first) of m x n fractions (NaN: not graded) into out.
void record_error_fractions(const std::vector<double>& fracs, std::int64_t m, std::int64_t n, std::size_t keep, CaseResult& out);

}  // namespace fpcert
