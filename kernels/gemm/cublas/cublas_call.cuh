// kernels/gemm/cublas/cublas_call.cuh — one GemmOperands call through cuBLAS, shared by the cuBLAS built-ins
// (cublas_gemm.cu, cublas_f64.cu): C apart copied into D's buffer, then cublasGemmEx or, for strided batches,
// cublasGemmStridedBatchedEx with the same types, compute type and algorithm.
//
// Row-major X (rows x cols, ld) is column-major X^T with the same ld, so a row-major C = A B is the column-major call
// C^T = B^T A^T (B first, n x m); a column-major A or B is passed with CUBLAS_OP_T in that call; a column-major C is
// cuBLAS's own C, gemm(opA, opB, m, n, k, A, lda, B, ldb, C, ldc). Batches: the strides go with their operands (0
// broadcasts A or B, as BLAS allows).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/device/cuda_check.cuh"
#include "kernels/gemm/cublas/cublas_loader.cuh"
#include "kernels/kernel.hpp"

namespace fpcert::cublas {

/// D = alpha AB + beta C reads C from D's buffer (BLAS, in place): a C apart (c_in != c, beta != 0) is copied into it
/// first, on the stream, batch by batch (the gaps between batches are not C's); beta = 0 copies nothing.
inline void copy_c_in(const GemmOperands& ops, std::size_t eb) {
  if (ops.beta == 0 || !ops.c_in || ops.c_in == ops.c) return;
  const bool c_col = ops.c_layout == Layout::ColMajor;
  const std::int64_t lines = c_col ? ops.n : ops.m, len = c_col ? ops.m : ops.n, step = ops.stride_c * static_cast<std::int64_t>(eb);
  for (std::int64_t b = 0; b < std::max<std::int64_t>(1, ops.batch); ++b)
    FPCERT_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(ops.c) + b * step, static_cast<std::size_t>(ops.ldc) * eb,
                                        static_cast<const char*>(ops.c_in) + b * step, static_cast<std::size_t>(ops.ldc) * eb,
                                        static_cast<std::size_t>(len) * eb, static_cast<std::size_t>(lines), cudaMemcpyDeviceToDevice,
                                        static_cast<cudaStream_t>(ops.stream)));
}

/// The call itself (the header's orientation); alpha and beta point to scalars of the compute type's scalar type.
inline cublasStatus_t gemm(const Api& cb, cublasHandle_t h, const GemmOperands& ops, const void* alpha, const void* beta, cudaDataType in,
                           cudaDataType out, cublasComputeType_t compute) {
  const bool c_col = ops.c_layout == Layout::ColMajor;
  const auto op = [c_col](Layout l) { return (l == Layout::RowMajor) != c_col ? CUBLAS_OP_N : CUBLAS_OP_T; };
  const auto ld = [](std::int64_t v) { return static_cast<int>(v < 1 ? 1 : v); };
  const auto m = static_cast<int>(ops.m), n = static_cast<int>(ops.n), k = static_cast<int>(ops.k);
  // The first operand of cuBLAS's call and the second: (A, B) for a column-major C, (B, A) for a row-major one.
  struct Side {
    cublasOperation_t op;
    const void* p;
    int ld;
    long long stride;
  };
  const Side a{op(ops.a_layout), ops.a, ld(ops.lda), ops.stride_a}, b{op(ops.b_layout), ops.b, ld(ops.ldb), ops.stride_b};
  const Side& x = c_col ? a : b;
  const Side& y = c_col ? b : a;
  const int rows = c_col ? m : n, cols = c_col ? n : m;
  if (ops.batch > 1)
    return cb.gemm_strided_batched_ex(h, x.op, y.op, rows, cols, k, alpha, x.p, in, x.ld, x.stride, y.p, in, y.ld, y.stride, beta, ops.c,
                                      out, ld(ops.ldc), ops.stride_c, static_cast<int>(ops.batch), compute, CUBLAS_GEMM_DEFAULT);
  return cb.gemm_ex(h, x.op, y.op, rows, cols, k, alpha, x.p, in, x.ld, y.p, in, y.ld, beta, ops.c, out, ld(ops.ldc), compute,
                    CUBLAS_GEMM_DEFAULT);
}

}  // namespace fpcert::cublas
