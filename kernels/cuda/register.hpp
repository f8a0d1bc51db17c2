// kernels/cuda/register.hpp — the CUDA kernel families; register_cuda_kernels() calls each.
#pragma once

#include <memory>

#include "kernels/kernel.hpp"

namespace fpcert {

void register_pipeline_kernels();  ///< kernels/cuda/pipeline.cu: the three-pipeline comparison
void register_mma_kernels();       ///< kernels/cuda/mma.cu: tensor-core GEMMs with mma.sync
void register_cublas_kernels();    ///< kernels/cublas/cublas_gemm.cu: cuBLAS baselines, compute type pinned
/// kernels/cuda/mma.cu: the FP8 (e4m3 or e5m2) mma.sync GEMM, with partial sums promoted to fp32
/// every `promote_every` products (a positive multiple of 32; 0: never). Throws
/// std::invalid_argument for other formats or counts. Named gemm_<fmt>_f32acc_mma_sm89[_promote<N>].
std::unique_ptr<Kernel> make_fp8_mma_kernel(const Format& format, int promote_every);

}  // namespace fpcert
