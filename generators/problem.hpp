// generators/problem.hpp — what a generator makes: the exact inputs of a GEMM or dot product, the
// spec string that reproduces them bit for bit, and what the generator achieved (measured).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {

/// A dense row-major matrix of exact input values (each exactly representable in the problem's
/// source format, stored as double).
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> data;
  Matrix() = default;
  Matrix(std::int64_t r, std::int64_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c), 0.0) {}
  double& operator()(std::int64_t i, std::int64_t j) { return data[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(std::int64_t i, std::int64_t j) const { return data[static_cast<std::size_t>(i * cols + j)]; }
  MatrixView view() const { return MatrixView::row_major(data.data(), rows, cols); }
};

/// A GEMM C = A * B (m x k times k x n); a dot product is m = n = 1 (A the row x, B the column y).
struct Problem {
  std::string spec;           ///< canonical spec string: generate(spec) reproduces this problem bit for bit
  std::string family;         ///< generator name, e.g. "normal", "cancel"
  std::uint64_t seed = 0;
  const Format* source = &f32;  ///< every input value is exactly representable in this format
  std::int64_t m = 0, n = 0, k = 0;
  Matrix a;  ///< m x k
  Matrix b;  ///< k x n
  bool dot = false;  ///< generated as a dot product (m = n = 1)

  /// What the generator achieved, measured (with the exact oracle where it matters): e.g.
  /// "kappa_min", "kappa_median", "kappa_max", "exp_span_a", "exp_span_b", "requested_kappa".
  std::map<std::string, double> achieved;
  /// Fraction of input entries (A and B together) that are NOT exactly representable in each
  /// narrower format, by tag: 0 for a format means a kernel storing inputs there sees no
  /// rounding of its inputs (the runner flags a test that cannot fail).
  std::map<std::string, double> not_representable;
};

}  // namespace fpcert
