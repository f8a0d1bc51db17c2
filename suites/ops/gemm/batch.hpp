// suites/ops/gemm/batch.hpp — strided batched GEMM cases as cublasGemmStridedBatchedEx calls them (docs/suites.md,
// "batch.strided"): every batch's problem and exact reference, the stacked images of A, B and C with gap rows
// between consecutive matrices, and the merge of the per-batch grades into the case's result.
//
// Layout: matrix b of an operand stored s rows x ld (its stored image, a column-major operand as its transpose) starts
// at b * stride, stride = (s + gap_rows) * ld elements; the gap rows hold A's or B's NaN poison (a kernel that reads
// them gets NaN) and C's pre-fill (a kernel that writes them is caught: guard_output). A or B broadcast: one matrix,
// stride 0. Each batch is graded as its own m x n GEMM against its own exact reference (the oracle's, as any case).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/run/guarded_buffer.hpp"

namespace fpcert {

/// Batch b's spec: `spec` (canonical, with a seed field) with seed + b; batch 0's is `spec` itself. Throws InputError
/// for a spec without a seed (its batches could not differ).
std::string batch_spec(const std::string& spec, std::int64_t b);

/// Every batch's problem and exact reference, batch 0 first (`first` itself, as generated from the case's spec).
struct BatchProblems {
  std::vector<Problem> problems;
  std::vector<GemmRef> refs;
};
/// Batch b generated from batch_spec(first.spec, b); a broadcast A (or B) is batch 0's in every batch.
BatchProblems batch_problems(const Problem& first, const BatchCase& bc);

/// Why a kernel does not take this batch case (empty: it does).
std::string batch_unsupported(const KernelTraits& t, const BatchCase& bc);

/// The elements between consecutive matrices of an operand stored `rows` x ld: (rows + gap_rows) * ld.
inline std::int64_t batch_stride(std::int64_t rows, std::int64_t ld, std::int64_t gap_rows) { return (rows + gap_rows) * ld; }

/// The matrices (each rows x cols codes of eb bytes, row-major, unpadded) one after another with gap_rows rows of
/// `fill` between them: (rows + gap_rows) * count - gap_rows rows of cols codes.
std::vector<std::uint8_t> stack_batches(const std::vector<std::vector<std::uint8_t>>& mats, std::int64_t rows, std::int64_t cols,
                                        int eb, std::int64_t gap_rows, std::uint64_t fill);

/// Values rounded into f under r, as container codes of container_bytes(f) each, packed (how the runner hands inputs over).
std::vector<std::uint8_t> encode_inputs(const std::vector<double>& v, const Format& f, Rounding r);
/// A rows x cols matrix of eb-byte codes, row-major without padding, as its transpose (cols x rows): a column-major
/// operand is handed over as the row-major image of its transpose, with the same padding, guards and poison.
std::vector<std::uint8_t> transpose_codes(const std::vector<std::uint8_t>& v, std::int64_t rows, std::int64_t cols, int eb);

/// A's (b_operand false) or B's stored image over the first `count` batches: each batch's matrix rounded into f under
/// r, transposed when stored column-major (`col`), gap rows of f's poison between consecutive matrices (stack_batches).
std::vector<std::uint8_t> stacked_operand(const std::vector<const Problem*>& batches, std::int64_t count, bool b_operand, const Format& f,
                                          Rounding r, bool col, std::int64_t gap);

/// An alpha/beta case's C over `count` batches (batch t from c_seed + t; beta as the kernel gets it): its values batch
/// after batch (m x n row-major each, alpha_beta_c), and C's stored image (C's layout) with gap rows of the output's
/// pre-fill (`fill`: D's buffer, in place) and of its poison (`poison`: C's own buffer).
struct BatchC {
  std::vector<double> values;
  std::vector<std::uint64_t> fill;  ///< container codes
  std::vector<std::uint8_t> poison; ///< packed bytes
};
BatchC batch_c(const AlphaBetaCase& abc, double beta, const Format& out, std::int64_t m, std::int64_t n, std::int64_t count, std::int64_t gap,
               bool c_col);

/// D's codes (of `out`) batch after batch, m x n row-major each, from a downloaded image whose matrix t starts at
/// stored row t * (c_rows + gap) (c_col: C column-major, stored as its transpose).
std::vector<std::uint64_t> batch_codes(const GuardedBuffer& c, const Format& out, std::int64_t count, std::int64_t m, std::int64_t n,
                                       std::int64_t gap, bool c_col);
/// Elements of C's gap rows (stored c_rows x c_cols matrices, ldc) that no longer hold `fill`; the first described in
/// *first when it is empty.
std::int64_t gap_writes(const GuardedBuffer& c, std::int64_t count, std::int64_t c_rows, std::int64_t c_cols, std::int64_t ldc,
                        std::int64_t gap, std::uint64_t fill, std::string* first);

/// The case's result from its batches' (each graded as a whole case; `per` in batch order): the first failing
/// batch's checks, metrics and worst elements (else the one with the largest err / allowed), their details prefixed
/// "batch b: ", and every batch's outcome in out.batches. `out` keeps its identity fields (suite, case, kernel, ...).
void merge_batch_grades(const std::vector<CaseResult>& per, CaseResult& out);

}  // namespace fpcert
