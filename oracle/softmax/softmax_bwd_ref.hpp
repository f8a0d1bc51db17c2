// oracle/softmax/softmax_bwd_ref.hpp — the exact reference of softmax and log-softmax backward (issue 45;
// docs/backward.md, "Softmax and log-softmax backward"): from the codes a kernel receives, the saved forward output y
// and the incoming gradient dy (both exact doubles: values of formats up to binary32), and the forward's scale s,
//   softmax:      dx_j = s y_j (dy_j - D),        D = sum_k dy_k y_k
//   log-softmax:  dx_j = s (dy_j - e^{y_j} G),    G = sum_k dy_k   (over the unmasked k: y_k != -Inf)
// correctly rounded to nearest even into the output format (subnormals included).
//
// Softmax: dx_j is a rational of the codes. D is summed exactly (oracle/exact_sum.hpp: exact products, no rounding);
// a fast evaluation in double-double with a proved error bound decides the rounding where its bracket rounds one way,
// and elsewhere MPFR computes dx_j exactly (every step at a precision that holds its result exactly), then one rounding.
// Log-softmax: e^{y_j} is transcendental: Ziv's method, a fast evaluation (oracle/math/exp_kernel.hpp's exp, relative
// error 2^-48) with a proved bracket, then MPFR at a precision doubled from 128 bits until the bracket rounds one way;
// G exact as D. An e^{y_j} below MPFR's range (y_j < -2^30 ln 2) moves dx_j by less than one ulp at any precision used:
// the value is s dy_j nudged toward -s G (the sign the tiny term gives).
//
// Special values (docs/backward.md): a zero probability (softmax y_j = +0) gives dx_j = +0, and a masked entry
// (log-softmax y_j = -Inf: its logit s x_j + (-Inf) does not depend on x_j) gives dx_j = +0, whatever dy_j; masked
// entries are left out of G (their outputs do not depend on any logit). Otherwise a NaN or an Inf among y_j, dy_j, D or
// G makes dx_j what IEEE arithmetic gives for the formula evaluated in that order (D or G summed in double, then
// softmax s (y_j (dy_j - D)), log-softmax s (dy_j - e^{y_j} G)): NaN or an infinity, never a finite value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/softmax/softmax_ref.hpp"

namespace fpcert {

/// One row's sums: D (softmax) or G (log-softmax) rounded to double, and sum |dy_k y_k| (or sum |dy_k|) rounded up: the
/// bound's condition data. finite: no NaN or Inf reached the sum (then `dot` is exact to 2^-53 relative).
struct SoftmaxBwdRow {
  bool finite = true;
  double dot = 0;      ///< D or G (IEEE double sum when not finite)
  double abs_dot = 0;  ///< sum |dy_k y_k| or sum |dy_k|, rounded upward
  std::int64_t terms = 0;  ///< k in the sum (log-softmax: unmasked entries)
};
SoftmaxBwdRow softmax_bwd_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n);

/// Outcome counts of the reference (how often the fast bracket failed and MPFR decided).
struct SoftmaxBwdRefStats {
  std::int64_t elements = 0, mpfr = 0;
};

/// The row's dx correctly rounded (nearest even) into `out`: codes[i], and value[i] the exact value within 2^-49
/// relative as a double (NaN / Inf / +0 for the special cases). value may be null. scale: the forward's s (an fp32 value).
void softmax_bwd_reference_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n, double scale, const Format& out,
                               std::uint64_t* codes, double* value, SoftmaxBwdRefStats* stats = nullptr);

/// Every row of rows x cols row-major y and dy, rows in parallel (threads 0: every core).
struct SoftmaxBwdRef {
  std::vector<std::uint64_t> code;
  std::vector<double> value;
  SoftmaxBwdRefStats stats;
};
SoftmaxBwdRef softmax_bwd_reference(SoftmaxFn fn, const double* y, const double* dy, std::int64_t rows, std::int64_t cols,
                                    double scale, const Format& out, unsigned threads = 0);

/// Every result of a row whose inputs are finite (masked log-softmax entries aside) computed with MPFR alone at `prec`
/// bits — D or G by mpfr_sum, e^{y_j}, the difference and the products each rounded to `prec` bits — then rounded once
/// into out (nearest even). What tests compare the reference with; special entries as the reference gives them.
void softmax_bwd_mpfr_row(SoftmaxFn fn, const double* y, const double* dy, std::size_t n, double scale, const Format& out, long prec,
                          std::uint64_t* codes);

}  // namespace fpcert
