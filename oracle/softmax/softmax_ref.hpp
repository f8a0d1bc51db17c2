// oracle/softmax/softmax_ref.hpp — the exact reference of softmax and log-softmax over the last axis (issue 40;
// docs/softmax.md, "Reference"): y_i = e^{z_i} / sum_j e^{z_j} and y_i = z_i - log sum_j e^{z_j} of a row of exact
// arguments z_j (the kernel's inputs times its scale, plus an additive mask of 0 and -Inf), correctly rounded to
// nearest even into the output format. Ziv's method: a fast evaluation in double (oracle/math/exp_kernel.hpp's exp,
// a compensated row sum, log S through MPFR once per row) with a proved error bound; where the bracket around it
// rounds to two values, MPFR at a precision doubled until it rounds one way.
//
// Special values (IEEE evaluation of the shifted formula, as torch.softmax computes it; docs/softmax.md): a NaN or +Inf
// argument makes the whole row NaN (max = +Inf gives Inf - Inf); a -Inf argument is a zero weight (softmax +0,
// log-softmax -Inf); a row of -Inf only (fully masked) is the declared policy's: NaN (0/0, torch.softmax) or zeros
// (the "safe softmax" of attention kernels; log-softmax -Inf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

enum class SoftmaxFn : std::uint8_t { Softmax, LogSoftmax };
std::string_view to_string(SoftmaxFn f);  ///< "softmax", "log_softmax"

/// What a kernel gives for a row whose arguments are all -Inf (every entry masked).
enum class MaskedRowPolicy : std::uint8_t {
  Nan,   ///< NaN everywhere: exp(-Inf - (-Inf)) = NaN, as torch.softmax and the plain shifted formula
  Zero,  ///< +0 everywhere (log-softmax: -Inf), as FlashAttention and PyTorch's SDPA "safe softmax"
};
std::string_view to_string(MaskedRowPolicy p);  ///< "nan", "zero"

/// How a row's arguments decide its results before any arithmetic.
enum class SoftmaxRowClass : std::uint8_t { Finite, AllMasked, Nan };

/// One row's reference: its class, the shift M = max z_j, and the row sum S = sum_j e^{z_j - M} >= 1 as a
/// double-double with |S - (s_hi + s_lo)| <= kSumRelError S (every e^{z_j - M} >= 2^-150 counted; the others, below
/// that, counted in the bound too).
struct SoftmaxRowRef {
  SoftmaxRowClass cls = SoftmaxRowClass::Finite;
  double max = 0;
  double s_hi = 0, s_lo = 0;
  double log_s_hi = 0, log_s_lo = 0;  ///< log S (LogSoftmax only), |error| <= 1.01 kSumRelError + 2^-100
  std::int64_t unmasked = 0;          ///< arguments other than -Inf
};

/// The fast path's relative error bound on each e^{z_j - M}: exp_fast's 2^-48 (docs/elementwise.md), the product by
/// (1 + lo) of the exact difference's low part (2^-53) and e^lo - (1 + lo) <= lo^2 (2^-92): below 2^-47.9.
inline constexpr double kExpTermRelError = 0x1.1p-48;
/// Below this e^{z_j - M} is left out of the fast sum (z_j - M < -104: e^{-104} < 2^-150) and counted as 2^-150.
inline constexpr double kTailArgument = -104.0;

/// The row's class, M and S; log S when fn is LogSoftmax (one MPFR log at 128 bits).
SoftmaxRowRef softmax_row(SoftmaxFn fn, const double* z, std::size_t n);

/// Outcome counts of the reference (how often Ziv's loop needed MPFR).
struct SoftmaxRefStats {
  std::int64_t elements = 0, mpfr = 0;
};

/// The row's results correctly rounded (to nearest even) into `out`: codes[i], and value[i] the exact result as a
/// double within 2^-45 relative (softmax) or 2^-45 + 2^-51 |y| absolute (log-softmax); NaN / -Inf / +0 for the
/// special cases. value may be null.
void softmax_reference_row(SoftmaxFn fn, const double* z, std::size_t n, const Format& out, MaskedRowPolicy policy,
                           std::uint64_t* codes, double* value, SoftmaxRefStats* stats = nullptr);

/// Every row of a rows x cols row-major matrix of arguments, rows in parallel (threads 0: every core).
struct SoftmaxRef {
  std::vector<std::uint64_t> code;
  std::vector<double> value;
  SoftmaxRefStats stats;
};
SoftmaxRef softmax_reference(SoftmaxFn fn, const double* z, std::int64_t rows, std::int64_t cols, const Format& out,
                             MaskedRowPolicy policy, unsigned threads = 0);

/// Every result of a finite row computed with MPFR at `prec` bits (every term, no fast path, the row sum once), each
/// rounded once into out (nearest even). What tests compare the reference with: at 200 bits the error is below
/// 2^-180 relative for logits of moderate size, so a difference means the reference is wrong unless an exact value
/// lies within that of a rounding boundary. Masked entries give +0 (log-softmax -Inf); a row that is not finite: NaN.
void softmax_mpfr_row(SoftmaxFn fn, const double* z, std::size_t n, const Format& out, long prec, std::uint64_t* codes);

}  // namespace fpcert
