// oracle/norm/norm_bwd_ref.hpp — the exact reference of LayerNorm and RMSNorm backward (issue 45; docs/backward.md,
// "LayerNorm and RMSNorm backward"). For a row of n = cols exact values x, the incoming gradient dy, gamma (1 when
// absent) and the statistics the forward saved (mean: LayerNorm only; rstd), with xh_j = (x_j - mean) rstd (RMSNorm:
// x_j rstd) and g_j = dy_j gamma_j:
//   dx_j = rstd (n g_j - A - xh_j B) / n,  A = sum_k g_k (RMSNorm: A = 0), B = sum_k g_k xh_k,
//   dgamma_j = sum_rows dy_j xh_j,  dbeta_j = sum_rows dy_j.
// Every quantity but the division by n is a sum of products of the given values: computed exactly in MPFR at a
// precision covering the row's (column's) bit span (checked through MPFR's inexact flag); the quotient by n is rounded
// once into the output format (subnormals and overflow as the format has them) by MPFR at a precision doubled until
// its rounding down and up agree (a quotient that is a dyadic number is exact at the numerator's precision). dgamma and
// dbeta are exact sums rounded once.
// reads_saved = false (a kernel that recomputes the statistics): mean and rstd are the exact statistics of x and eps,
// as oracle/norm/norm_ref.hpp defines them. With S = sum x, Q = sum x^2, D = n Q - S^2 + eps n^2 (RMSNorm: n Q + eps
// n^2), N_j = n x_j - S (RMSNorm: n x_j) and G = sum_k g_k N_k, dx_j = (D (n g_j - A) - N_j G) D^{-3/2} and dgamma_j =
// sum_rows dy_j N_j D^{-1/2}: exact numerators times an irrational power of D, bracketed by directed roundings at a
// precision doubled until both ends round alike (Ziv), as the forward reference does.
// Special values: a row whose x, dy, mean or rstd holds a non-finite value gets dx NaN everywhere (the row sums carry
// it to every element); dgamma_j (dbeta_j) is NaN when any row's dy_j or xh_j (dy_j) is not finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/norm/norm_ref.hpp"

namespace fpcert {

/// The exact inputs of one backward call (row-major rows x cols, leading dimension cols).
struct NormBwdInputs {
  NormKind kind = NormKind::LayerNorm;
  std::int64_t rows = 0, cols = 0;
  const double* x = nullptr;
  const double* dy = nullptr;
  const double* gamma = nullptr;  ///< cols values, null: gamma = 1
  const double* mean = nullptr;   ///< rows values (LayerNorm, reads_saved); ignored otherwise
  const double* rstd = nullptr;   ///< rows values (reads_saved); ignored otherwise
  bool reads_saved = true;
  double eps = 1e-5;              ///< reads_saved = false: the forward's eps
};

/// What the bound reads of a row: whether its inputs are finite, and the statistics the reference used (the saved
/// ones, or the exact ones of x rounded to double when reads_saved = false).
struct NormBwdRowStats {
  bool finite = true;
  double mean = 0, rstd = 0;
  double a = 0, b = 0;  ///< A = sum g and B = sum g xh (exact, rounded to double)
};

struct NormBwdRefStats {
  std::int64_t elements = 0;   ///< dx, dgamma and dbeta elements computed
  std::int64_t unsettled = 0;  ///< Ziv's loop reached its cap (2^16 bits): the code is the lower end's rounding
};

struct NormBwdRef {
  std::vector<std::uint64_t> dx_code, dgamma_code, dbeta_code;  ///< dbeta empty for RMSNorm
  std::vector<double> dx_value, dgamma_value, dbeta_value;      ///< the exact values as doubles (within 2^-50 relative)
  std::vector<NormBwdRowStats> rows;
  NormBwdRefStats stats;
};

/// dx correctly rounded into dx_out, dgamma and dbeta into param_out (to nearest even); rows, then columns, in
/// parallel (threads 0: every core). Throws std::invalid_argument on missing inputs.
NormBwdRef norm_bwd_reference(const NormBwdInputs& in, const Format& dx_out, const Format& param_out, unsigned threads = 0);

/// The statistics a forward saves for row x of n values: mean (LayerNorm; 0 for RMSNorm) and rstd = 1/sqrt(var + eps)
/// (RMSNorm: 1/sqrt(mean(x^2) + eps)), each the correctly rounded fp32 value of the exact statistic (to nearest even,
/// subnormals included), returned as doubles; a non-finite row or var + eps = 0 gives NaN for both.
void norm_saved_stats(NormKind kind, const double* x, std::size_t n, double eps, double* mean, double* rstd);

/// The textbook formulas evaluated with MPFR at `prec` bits, every operation rounded to nearest (reads_saved = false:
/// mean = S/n, the two-pass variance, sqrt and division first), each result rounded once into its format: what the tests
/// compare the reference with (no shared code but MPFR). dx: rows x cols codes; dgamma, dbeta: cols codes (dbeta
/// ignored for RMSNorm).
void norm_bwd_mpfr(const NormBwdInputs& in, const Format& dx_out, const Format& param_out, long prec, std::uint64_t* dx,
                   std::uint64_t* dgamma, std::uint64_t* dbeta);

}  // namespace fpcert
