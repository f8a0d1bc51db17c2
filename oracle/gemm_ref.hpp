// oracle/gemm_ref.hpp — exact references for dot products and GEMMs: C = A * B from the original
// inputs, each element a RefValue (enough of the exact value to round it correctly into any
// format under any mode) plus sum |a_ik b_kj| (the componentwise bound's and kappa's denominator).
//
// Two paths with one contract: gemm_reference_mpfr() is the ground truth (every product exact,
// mpfr_sum at a precision that makes the sum exact); gemm_reference() is the fast path used in
// production (docs/oracle.md gives its algorithm and proof), which may fall back to exact
// per-element summation where it cannot prove its result. Tests hold them bit-for-bit equal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/huge_pages.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

class ExactGemmEngine;  // oracle/gemm_engine.hpp

enum class Layout : std::uint8_t { RowMajor, ColMajor };

/// A read-only view of a matrix of doubles (each an exact input value) with a leading dimension.
struct MatrixView {
  const double* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;  ///< ld: elements between rows (RowMajor) or columns (ColMajor)
  Layout layout = Layout::RowMajor;
  double at(std::int64_t i, std::int64_t j) const {
    return layout == Layout::RowMajor ? data[i * ld + j] : data[j * ld + i];
  }
  static MatrixView row_major(const double* d, std::int64_t r, std::int64_t c) { return {d, r, c, c, Layout::RowMajor}; }
  static MatrixView col_major(const double* d, std::int64_t r, std::int64_t c) { return {d, r, c, r, Layout::ColMajor}; }
};

/// Per-element status bits of a reference.
enum RefStatus : std::uint8_t {
  kRefOk = 0,
  kRefNonFinite = 1,      ///< a NaN or Inf input reached the element: value is IEEE's NaN or Inf
  kRefOverflow = 2,       ///< RN(exact) to double overflows: hi is +-Inf, lo = 0, tail = 0 (fp64 inputs only)
  kRefTiny = 4,           ///< |exact| is below 2^-969: hi + lo may not carry 106 bits (fp64 inputs only)
  kRefFallback = 8,       ///< the fast path's GEMMs did not cover every product of this element: the
                          ///< rest was added exactly, per element (gemm_reference only; value unaffected)
};

/// How the fast path ran (docs/oracle.md): the Ozaki split it chose and where elements went.
struct GemmRefInfo {
  const char* path = "mpfr";        ///< "mpfr" or "ozaki"
  int slices = 0;                   ///< slices per operand (S)
  int beta = 0;                     ///< bits per slice
  std::int64_t kblock = 0;          ///< K block whose slice GEMMs are exact
  int gemms = 0;                    ///< double GEMMs per K block, |A||B| included
  std::int64_t uncaptured_a = 0;    ///< entries of A outside the slice window (added per element)
  std::int64_t uncaptured_b = 0;
  std::int64_t fast_elements = 0;   ///< elements finished from the GEMM integers alone
  std::int64_t exact_elements = 0;  ///< elements finished through ExactSum (fallbacks, fp64 widths, ranges)
  std::int64_t nonfinite = 0;       ///< elements with a NaN or Inf input
  /// Who computed the slice GEMMs (oracle/gemm_engine.hpp): "cpu-eigen", "gpu-cublas-dgemm", ...; "mpfr" for the
  /// ground truth.
  const char* engine = "mpfr";
  std::int64_t sample_checked = 0;  ///< elements compared with exact_dot (engines other than the built-in one)
};

/// A GemmRef's arrays: std::vector but for resize_unset (base/huge_pages.hpp), by which an engine that writes every
/// element (the GPU's, kernels/device/exact_gemm_fused.cu) skips the value-initialisation of gigabytes.
template <class T>
using RefArray = std::vector<T, ResultAllocator<T>>;

struct GemmRef {
  std::int64_t m = 0, n = 0;
  RefArray<RefValue> c;           ///< row-major m x n
  /// sum_k |a_ik * b_kj|: gemm_reference_mpfr and exact_dot round it upward (RU of the exact sum);
  /// gemm_reference gives an upper bound u with RU(exact) <= u <= RU(exact) * (1 + 3 (K + nb + 2) 2^-53),
  /// nb = the number of K blocks (+ K * 2^-1072 * 2^(e_i + e_j) when fp64 inputs can underflow;
  /// docs/oracle.md, "abs_sum"). +Inf for non-finite elements.
  RefArray<double> abs_sum;
  RefArray<std::uint8_t> status;
  std::int64_t fallbacks = 0;     ///< elements the fast path could not certify and recomputed exactly
  GemmRefInfo info;
  const RefValue& at(std::int64_t i, std::int64_t j) const { return c[static_cast<std::size_t>(i * n + j)]; }
};

struct GemmRefOptions {
  unsigned threads = 0;  ///< 0: thread_count()
  /// Who multiplies the slice matrices (oracle/gemm_engine.hpp); nullptr: the process default
  /// (set_default_gemm_engine), else the built-in Eigen tiles. gemm_reference only.
  ExactGemmEngine* engine = nullptr;
};

/// Exact dot product sum x_i * y_i of exact doubles, with sum |x_i y_i| (rounded upward) and status
/// bits. exact_dot (an ExactSum superaccumulator) and exact_dot_mpfr agree bit for bit.
struct DotRef {
  RefValue value;
  double abs_sum = 0;
  std::uint8_t status = kRefOk;
};
DotRef exact_dot_mpfr(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx = 1, std::ptrdiff_t incy = 1);
DotRef exact_dot(const double* x, const double* y, std::size_t n, std::ptrdiff_t incx = 1, std::ptrdiff_t incy = 1);

/// C = A * B, the ground truth through MPFR (slow: ~100 ns per product). Throws
/// std::invalid_argument when a.cols != b.rows.
GemmRef gemm_reference_mpfr(const MatrixView& a, const MatrixView& b, const GemmRefOptions& opt = {});
/// C = A * B, the fast path (docs/oracle.md): same c as gemm_reference_mpfr bit for bit, same
/// status except kRefFallback, abs_sum an upper bound as documented above.
GemmRef gemm_reference(const MatrixView& a, const MatrixView& b, const GemmRefOptions& opt = {});

}  // namespace fpcert
