// oracle/norm/norm_bwd_bound.hpp — the per-element error bounds of a LayerNorm / RMSNorm backward kernel from its
// declared arithmetic (docs/backward.md, "LayerNorm and RMSNorm backward", "Bound"), after Higham, "Accuracy and
// Stability of Numerical Algorithms" (2nd ed., 2002): the model fl(a op b) = (a op b)(1 + d), |d| <= u (§2.2), products
// of k such factors within gamma_k = k u / (1 - k u) (Lemma 3.1), and a sum of n terms in any order within
// gamma_{n-1} sum |t_k| (§4.2). For dx_j = rstd (g_j - A/n - xh_j B/n): xh's roundings (LayerNorm: x - mean, then
// times rstd: gamma_2; RMSNorm: gamma_1), g's (dy gamma: u), the row sums A = sum g and B = sum g xh in the declared
// accumulator (gamma_{n-1}, any order), their scaling by 1/n (gamma_2), the combination and the multiplication by rstd
// in any grouping of at most six roundings (gamma_6), the output rounding, and underflow's absolute terms. For
// dgamma_j = sum_rows dy xh and dbeta_j = sum_rows dy: each term's roundings, the column sum in the declared parameter
// accumulator (gamma_{rows-1}: any order, atomics included), the rounding into the parameter format. A kernel that
// recomputes the statistics (reads_saved = false) adds the forward's bound on its mean and rstd (oracle/norm/norm_bound.hpp).
// Every bound is rigorous to first order in u; the products of two relative errors (below n u^2 of the terms) are
// covered by a factor 1 + 2^-10. Printed term by term beside the total.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/norm/norm_bound.hpp"
#include "oracle/norm/norm_bwd_ref.hpp"

namespace fpcert {

/// The declared arithmetic of a backward kernel (kernels/norm/norm_backward_kernel.hpp's NormBwdTraits, as the oracle reads it).
struct NormBwdArith {
  NormKind kind = NormKind::LayerNorm;
  const Format* compute = &f32;    ///< every operation but the sums
  const Format* acc = &f32;        ///< the row sums A and B
  const Format* dx_out = &f32;
  const Format* param_acc = &f32;  ///< the column sums (any order)
  const Format* param_out = &f32;
  bool reads_saved = true;
  double eps = 1e-5;               ///< reads_saved = false: the forward's eps
};

/// One row's bounds: bound[j] >= |computed dx_j - exact dx_j| for every j (+Inf where the row is not finite or the
/// recomputed statistics are not covered). x, dy: the row; gamma null: 1; st: the reference's row statistics.
void norm_bwd_dx_bounds(const NormBwdArith& a, const double* x, const double* dy, const double* gamma, std::size_t n,
                        const NormBwdRowStats& st, double* bound);
/// Element j's bound term by term (first order), the total last.
std::vector<NormBoundTerm> norm_bwd_dx_terms(const NormBwdArith& a, const double* x, const double* dy, const double* gamma,
                                             std::size_t n, const NormBwdRowStats& st, std::size_t j);

/// Every column's bound on |computed - exact| of dgamma (and, dbeta not null, of dbeta) over the rows (x, dy rows x
/// cols row-major, the reference's row statistics); +Inf where a row is not finite (dbeta: never).
void norm_bwd_param_bounds(const NormBwdArith& a, const double* x, const double* dy, std::int64_t rows, std::int64_t cols,
                           const std::vector<NormBwdRowStats>& st, double* dgamma, double* dbeta);
/// Column j's bound of dgamma (dbeta = false) or dbeta, term by term, the total last.
std::vector<NormBoundTerm> norm_bwd_param_terms(const NormBwdArith& a, bool dbeta, const double* x, const double* dy, std::int64_t rows,
                                                std::int64_t cols, const std::vector<NormBwdRowStats>& st, std::int64_t j);

}  // namespace fpcert
