// oracle/norm/norm_bound.hpp — the per-element error bound of a LayerNorm / RMSNorm kernel from its declared arithmetic
// (docs/normalization.md, "Bound"): the row sum and the sum of squares after Higham, "Accuracy and Stability of
// Numerical Algorithms" (2nd ed., 2002), §4.2 (|error| <= gamma_{n-1} sum |x_j| for any order) and §1.9 / Problem 1.10
// (the variance: two-pass, the textbook one-pass E[x^2] - E[x]^2 that cancels), the updating (Welford) algorithm after
// Chan, Golub and LeVeque, "Algorithms for computing the sample variance: analysis and recommendations", Amer.
// Statist. 37(3), 1983, and its pairwise combination of parts' (n, mean, M2) (Chan, Golub and LeVeque, "Updating formulae
// and a pairwise algorithm for computing sample variances", Stanford CS tech. report STAN-CS-79-773, 1979), as CUDA
// kernels run it over a warp's lanes; then the addition of eps, the rsqrt implementation's documented ulp error, the products by the
// rsqrt and gamma, the addition of beta and the output rounding. Every quantity is bounded rigorously from the data
// (the exact mean and variance of the row, the exact x_j); the terms are printed to first order beside the total.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/norm/norm_ref.hpp"

namespace fpcert {

/// How the variance (RMSNorm: the mean of squares) is computed.
enum class NormVariance : std::uint8_t {
  TwoPass,  ///< mean first, then sum (x_j - mean)^2 / n (Higham §1.9: stable)
  Welford,  ///< one pass updating mean and M2 (Welford 1962; Chan, Golub and LeVeque 1983)
  OnePass,  ///< one pass, E[x^2] - E[x]^2 (cancels when |mean| >> the spread: declared weaker)
  WelfordCombined,  ///< Welford per part (thread), the parts' (n, mean, M2) combined pairwise (Chan, Golub and LeVeque 1979)
};
std::string_view to_string(NormVariance v);  ///< "two_pass", "welford", "one_pass", "welford_combined"

/// How a WelfordCombined kernel splits a row: `parts` threads, thread t runs Welford over the vectors of `vec` consecutive
/// entries whose index is t mod parts (vec = 1: the entries j = t, t + parts, ...), in order; the parts are combined by
/// any binary tree of depth ceil(log2 parts) (a __shfl_xor_sync butterfly, a shfl_down tree, a block reduction of warps).
struct WelfordShape {
  int parts = 32;
  int vec = 1;
};
/// Most entries one part holds for a row of n, and the tree's depth, over the declared shapes (the bound takes both maxima).
std::int64_t welford_part_length(const std::vector<WelfordShape>& shapes, std::int64_t n);
int welford_depth(const std::vector<WelfordShape>& shapes);
/// "32", "512 or 128x4": the shapes as declared (PxV: P parts of V-entry vectors).
std::string to_string(const std::vector<WelfordShape>& shapes);
/// Parses "P" or "PxV", comma-separated (P in 1 .. 2^20, V in 1 .. 64); throws std::invalid_argument with the reason.
std::vector<WelfordShape> parse_welford_shapes(std::string_view s);

/// The declared arithmetic of a normalisation kernel.
struct NormArith {
  NormKind kind = NormKind::LayerNorm;
  NormVariance variance = NormVariance::TwoPass;
  const Format* compute = &f32;  ///< every operation but the row sums, nearest even
  const Format* acc = &f32;      ///< the row sums' accumulator (any order)
  double rsqrt_ulps = 1;         ///< |rsqrt(t) - 1/sqrt(t)| <= rsqrt_ulps ulp of the compute format
  std::string rsqrt_source;      ///< where that number comes from
  const Format* out = &f32;      ///< the result rounded into it once
  std::vector<WelfordShape> welford = {WelfordShape{}};  ///< WelfordCombined: the split(s) of a row (any one of them)
};

struct NormBoundTerm {
  std::string name;
  double value = 0;
  std::string law;
};

/// Per-row quantities of the bound (computed once per row).
struct NormRowBound {
  bool covered = false;  ///< false: the bound does not apply (t - dt <= 0, a non-finite row)
  double e_mean = 0;     ///< bound on |computed mean - mean|
  double d_var = 0;      ///< bound on |computed variance - var|
  double t = 0, d_t = 0; ///< var + eps and the bound on its computed value's error
  double r = 0, d_r = 0; ///< 1/sqrt(t) and the bound on |computed rsqrt - r|
  double rho = 0;        ///< the rsqrt's relative error
};

/// The row part of the bound; x exact, pert[j] >= |x^_j - x_j| (storage; null: 0), st the exact statistics.
NormRowBound norm_row_bound(const NormArith& a, const double* x, const double* pert, std::size_t n, double eps, const NormRowStats& st);
/// Element i's bound on |computed - exact y_i| (+Inf when not covered); y the exact value; g, b null when absent.
double norm_element_bound(const NormArith& a, const NormRowBound& rb, const double* x, const double* pert, std::size_t n,
                          const NormRowStats& st, std::size_t i, double g, double b, bool has_beta, double y);
/// The same, term by term (first order), the exact total last.
std::vector<NormBoundTerm> norm_bound_terms(const NormArith& a, const NormRowBound& rb, const double* x, const double* pert,
                                            std::size_t n, const NormRowStats& st, std::size_t i, double g, double b, bool has_beta,
                                            double y);
std::string to_text(const std::vector<NormBoundTerm>& terms);

}  // namespace fpcert
