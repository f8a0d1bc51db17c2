// oracle/reduce/reduce_ref.hpp — exact references of reductions: sums, dot products and Euclidean norms
// (nrm2) of exact inputs, per vector and per row or column of a matrix (docs/reductions.md).
//
// A reference is a RefValue (oracle/refvalue.hpp): hi = RN(v), lo = RN(v - hi), tail = sign(v - hi - lo)
// of the exact real v, so round_ref(format, ref.value, rounder) rounds v correctly into any format under
// any rounding and saturation mode (every rounding through oracle/round.hpp's one core) and ulp_distance
// measures a candidate against it. For a sum or a dot product v is the exact sum (ExactSum, the oracle's
// one superaccumulator); for nrm2 v = sqrt(q) with q = sum x_i^2 exact (ExactSum of the exact squares),
// turned into an MPFR number exactly and its square root taken at a precision that decides hi, lo and the
// tail (round-to-odd; Boldo and Melquiond, IEEE Trans. Computers 57(4), 2008). The RefValue definition
// holds for an irrational v as well: hi, lo and the tail are what v determines, whoever computes them.
//
// Inputs are doubles holding exact values (every format up to f32 decodes exactly into one; f64 too for
// sums and dots), or codes of a Format decoded exactly (reduce_reference_codes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

/// What a reduction computes over a vector x (and y for a dot product).
enum class ReduceKind : std::uint8_t {
  Sum,   ///< sum x_i
  Dot,   ///< sum x_i y_i
  Nrm2,  ///< sqrt(sum x_i^2), the Euclidean norm (BLAS nrm2)
};
std::string_view to_string(ReduceKind k);

/// What nrm2 returns when its inputs hold both an Inf and a NaN (docs/reductions.md, "Special values").
enum class Nrm2Specials : std::uint8_t {
  InfWins,  ///< +Inf: IEEE 754-2019 §9.4 sumSquare (an infinity wins over a quiet NaN) and §9.2 hypot(±Inf, qNaN) = +Inf
  NaNWins,  ///< NaN: what LAPACK 3.10's dnrm2 (Anderson 2017) returns (its big accumulator adds Inf and NaN)
};

/// Status bit of a reduction reference beyond the RefStatus bits (oracle/gemm_ref.hpp: kRefNonFinite,
/// kRefOverflow, kRefTiny): nrm2's inputs hold both an Inf and a NaN, the case in which IEEE 754 and
/// LAPACK disagree (the value follows the Nrm2Specials asked for; a verdict may accept either).
inline constexpr std::uint8_t kRefInfAndNaN = 16;

struct ReduceRef {
  RefValue value;              ///< the exact result (nrm2: of the exact square root), as a RefValue
  /// The reduction's magnitude sum, rounded upward (RU of the exact value): sum |x_i| (Sum), sum |x_i y_i|
  /// (Dot), sum x_i^2 (Nrm2). The bounds' scale (oracle/reduce/reduce_bound.hpp) and kappa's numerator.
  /// +Inf when a non-finite input is present.
  double abs_sum = 0;
  std::uint8_t status = kRefOk;  ///< RefStatus bits, plus kRefInfAndNaN
};

/// sum x_i of n exact doubles (stride inc). Non-finite inputs: NaN if a NaN or both +Inf and -Inf occur,
/// else that Inf (IEEE 754 addition in any order); status kRefNonFinite. An exact zero is +0.
ReduceRef sum_reference(const double* x, std::size_t n, std::ptrdiff_t inc = 1);
/// sum x_i y_i: the oracle's exact_dot (its RefValue, abs_sum and status), as a ReduceRef.
ReduceRef dot_reference(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx = 1,
                        std::ptrdiff_t incy = 1);
/// sqrt(sum x_i^2), exact inputs with every nonzero |x_i| in [2^-537, 2^511) (every format but f64 fits;
/// std::invalid_argument otherwise): the squares are then exact multiples of 2^-1074 below 2^1022.
/// An Inf input gives +Inf and a NaN input NaN; both present: `specials` decides (status kRefInfAndNaN).
ReduceRef nrm2_reference(const double* x, std::size_t n, std::ptrdiff_t inc = 1,
                         Nrm2Specials specials = Nrm2Specials::InfWins);

/// One of the three by kind (y is read for Dot only).
ReduceRef reduce_reference(ReduceKind kind, const double* x, const double* y, std::size_t n,
                           std::ptrdiff_t incx = 1, std::ptrdiff_t incy = 1,
                           Nrm2Specials specials = Nrm2Specials::InfWins);
/// Same, from codes of a format (decoded exactly with to_double; NaN payloads irrelevant).
ReduceRef reduce_reference_codes(ReduceKind kind, const Format& f, const std::uint64_t* x,
                                 const std::uint64_t* y, std::size_t n,
                                 Nrm2Specials specials = Nrm2Specials::InfWins);

/// The transpose as a view (no copy): the columns of `a` are the rows of transposed(a).
MatrixView transposed(const MatrixView& a);

/// The reduction of every row of x (Dot: row i of x with row i of y, same shape; std::invalid_argument
/// otherwise). Column reductions: reduce_rows(kind, transposed(x), ...). threads 0: thread_count().
std::vector<ReduceRef> reduce_rows(ReduceKind kind, const MatrixView& x, const MatrixView* y = nullptr,
                                   Nrm2Specials specials = Nrm2Specials::InfWins, unsigned threads = 0);

}  // namespace fpcert
