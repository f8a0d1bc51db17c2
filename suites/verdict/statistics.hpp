// suites/verdict/statistics.hpp — the statistical verdict tier, on top of the envelope: a round-to-nearest claim
// implies rounding errors without bias; a directed rounding hidden inside the envelope is not
// (docs/bound_model.md, "The statistical tier", derives every constant below).
//
// Per element, the arithmetic error e_ij = c_ij - ref'_ij (ref' the exact product of the inputs as the
// kernel receives them, so fpcert's own storage rounding is not part of it) is the exact sum of the
// kernel's rounding errors (its operand narrowing included)
// delta_s (telescoping over the order's tree of roundings, whatever the order). Under the claim, each
// delta_s has conditional mean zero given the past (the probabilistic model of Higham and Mary, SIAM
// J. Sci. Comput. 41(5), 2019) and |delta_s| <= c_ij (one rounding's largest error on a partial sum of
// magnitude at most (1 + coef) abs'_ij), except where an addend is absorbed: a product smaller than c_ij
// may be dropped whole, a deterministic bias of at most min(|p|, c_ij) (allowance b_ij). The statistic
//   y_ij = (d_ij - b_ij) / sigma_ij,   d_ij = -sign(ref'_ij) e_ij (error toward zero),
//   sigma_ij^2 = R c_ij^2 + c_out,ij^2 + (u_A^2 + u_B^2) abs'^2 (R roundings into the accumulator, one
//   output rounding, the operand narrowing),
// is then 1-sub-Gaussian with mean <= 0 (Azuma-Hoeffding), and so is their mean over the case's
// elements WITHOUT assuming independence between elements that share rows or columns (Hoelder: a mean
// of sigma-sub-Gaussian variables is sigma-sub-Gaussian under any dependence). The check fails when the
// mean exceeds sqrt(2 ln(1/alpha)): a false alarm has probability at most alpha = 1e-6 per case.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "oracle/refvalue.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

inline constexpr double kStatisticalAlpha = 1e-6;  ///< false-alarm rate per case

struct BiasTest {
  double statistic = 0;           ///< mean of y_ij over the elements tested
  double threshold = 0;           ///< sqrt(2 ln(1 / alpha))
  std::int64_t elements = 0;      ///< elements with a defined direction and sigma > 0
  double toward_zero = 0;         ///< share of them whose error points toward zero (reported, not decisive)
  double mean_relative = 0;       ///< mean of d_ij / sigma_ij before the allowance (reported)
  bool allowance_used = false;    ///< the absorption allowance was computed (only when needed to decide)
  std::int64_t worst_index = -1;  ///< the element with the largest y_ij
  bool fired() const { return elements > 0 && statistic > threshold; }
};

/// Why the statistical tier does not apply to these traits (no round-to-nearest or stochastic claim for
/// the accumulation, or the envelope does not exist); empty when it does.
std::string bias_test_unavailable(const KernelTraits& t, const EnvelopeModel& e);

/// The test on one case. a_op (m x k), b_op (k x n): operand values, row-major; ref_op, abs_op: the exact
/// product of the kernel's inputs and its sum of magnitudes per element; got: the kernel's output values.
/// Elements whose output or reference is not finite, or whose reference is 0, are left out.
BiasTest rn_bias_test(const KernelTraits& t, const EnvelopeModel& e, std::int64_t m, std::int64_t n, std::int64_t k,
                      const std::vector<double>& a_op, const std::vector<double>& b_op, std::span<const RefValue> ref_op,
                      std::span<const double> abs_op, const std::vector<double>& got);

}  // namespace fpcert
