// kernels/gemm/cublaslt/cublaslt_gelu_sample.hpp — cuBLASLt's GELU epilogue on arguments of the caller's choice, so that
// what the cublaslt_* subjects declare about it (kernels/gemm/cublaslt/cublaslt_gemm.cu: Z rounded to D's format before
// the activation, the fp32 GELU's error) is re-measured on every device run (tests/kernels/gemm/epilogue_gpu_test.cpp;
// docs/epilogue.md, "What cuBLASLt's GELU computes"). No CUDA header: the implementation is
// cublaslt_gelu_sample.cu, and kernels/gemm/cublaslt/cublaslt_gelu_sample_host.cpp without CUDA.
#pragma once

#include <vector>

#include "oracle/format.hpp"

namespace fpcert {

/// D_j = act(hi_j + lo_j) computed by cublasLtMatmul as a GEMM with k = 2 (A = [1, 1], B's column j = (hi_j, lo_j),
/// COMPUTE_32F: Z_j = hi_j + lo_j exactly when the two fit in fp32's 24 bits), act = CUBLASLT_EPILOGUE_GELU (or none
/// when `gelu` is false). A and B in `io` (bf16 or f16: hi and lo must be representable in it); D in `io`, or in fp32
/// when `f32_out` (cuBLASLt's own fp32 GELU, unrounded). Returns D as floats. NotSupportedError where cuBLASLt declines
/// the call, DeviceError without a device or CUDA.
std::vector<float> cublaslt_gelu_sample(const Format& io, bool f32_out, bool gelu, const std::vector<float>& hi, const std::vector<float>& lo);

}  // namespace fpcert
