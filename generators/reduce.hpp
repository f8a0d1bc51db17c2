// generators/reduce.hpp — how a reduction's inputs sit in a (GEMM-shaped) Problem, for the families
// sum_cancel, sum_range and nrm2_trap (docs/generators.md, "Reductions"; docs/reductions.md).
//
// A reduction problem holds `vectors` vectors of length `n`. axis=row: A is vectors x n (row v is vector v)
// and B the n x 1 column of ones, so C = A B is the row sums; axis=col: B is n x vectors (column v is vector
// v) and A the 1 x n row of ones, so C = A B is the column sums. Either way the problem stays a valid GEMM
// whose exact C is the exact sums (kappa, references and the GEMM road work unchanged), and
// reduce_vectors() gives the vectors as the rows of a view. Problem::achieved["reduce_axis"] is 0 (row) or
// 1 (col) for these families and absent for every other.
#pragma once

#include "generators/problem.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {

/// True for a problem made by a reduction family (achieved["reduce_axis"] present).
bool is_reduce_problem(const Problem& p);
/// The vectors of a reduction problem as the rows of a view (a transposed view of B for axis=col).
/// std::invalid_argument for any other problem.
MatrixView reduce_vectors(const Problem& p);

}  // namespace fpcert
