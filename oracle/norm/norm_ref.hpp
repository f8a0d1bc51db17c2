// oracle/norm/norm_ref.hpp — the exact reference of LayerNorm and RMSNorm over the last axis (issue 40;
// docs/normalization.md, "Reference"): for a row x of n exact values, optional gamma, beta and eps,
//   LayerNorm  y_i = (x_i - mean) / sqrt(var + eps) * gamma_i + beta_i,  mean = S/n, var = (1/n) sum (x_j - mean)^2,
//   RMSNorm    y_i = x_i / sqrt(Q/n + eps) * gamma_i + beta_i,            Q = sum x_j^2,
// the whole composite correctly rounded once (to nearest even) into the output format. Mean and variance are
// rational: with S = sum x_j and Q = sum x_j^2 computed exactly (MPFR at a precision covering the row's exponent
// span), y_i = N_i gamma_i / sqrt(D) + beta_i with N_i = n x_i - S (RMS: n x_i) and D = n Q - S^2 + eps n^2 (RMS:
// n Q + eps n^2), all exact; only 1/sqrt(D) is irrational. A double evaluation with a proved error bound decides
// most roundings; where its bracket rounds two ways, Ziv's loop: 1/sqrt(D) with MPFR rounded down and up at a
// precision doubled until both ends of y round to the same value (docs/normalization.md).
// Special values, as the IEEE evaluation of the formula gives them: a NaN in the row, an Inf in a LayerNorm row (Inf -
// Inf in the variance) or D = 0 (a constant row with eps = 0: 0/0) makes the whole row NaN; an RMSNorm row with +-Inf
// (no NaN) has rsqrt(Inf) = 0: beta_j (+0 without beta) where x_j is finite, NaN where it is infinite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

enum class NormKind : std::uint8_t { LayerNorm, RmsNorm };
std::string_view to_string(NormKind k);  ///< "layernorm", "rmsnorm"

/// One row's exact statistics, rounded to double (what the bound reads): mean (RMS: 0), var (RMS: Q/n), and
/// whether the row is finite (D > 0, every entry finite).
struct NormRowStats {
  bool finite = true;
  double mean = 0, var = 0;
};

struct NormRefStats {
  std::int64_t elements = 0, mpfr = 0, unsettled = 0;  ///< unsettled: Ziv's loop reached its cap (2^16 bits)
};

/// The row's results correctly rounded (to nearest even) into `out`: codes[i], and value[i] the exact result as a
/// double (within 2^-50 relative plus 2^-1060); gamma, beta null when absent; eps >= 0.
NormRowStats norm_reference_row(NormKind kind, const double* x, std::size_t n, const double* gamma, const double* beta, double eps,
                                const Format& out, std::uint64_t* codes, double* value, NormRefStats* stats = nullptr);

struct NormRef {
  std::vector<std::uint64_t> code;
  std::vector<double> value;
  std::vector<NormRowStats> rows;
  NormRefStats stats;
};
/// Every row of a rows x cols row-major matrix, rows in parallel (threads 0: every core).
NormRef norm_reference(NormKind kind, const double* x, std::int64_t rows, std::int64_t cols, const double* gamma, const double* beta,
                       double eps, const Format& out, unsigned threads = 0);

/// The textbook formula evaluated with MPFR at `prec` bits, every operation rounded to nearest (mean = S/n, the
/// variance by two passes, sqrt, division, gamma, beta), each result rounded once into out. What the tests compare
/// the reference with: an independent evaluation (no shared code but MPFR).
void norm_mpfr_row(NormKind kind, const double* x, std::size_t n, const double* gamma, const double* beta, double eps, const Format& out,
                   long prec, std::uint64_t* codes);

}  // namespace fpcert
