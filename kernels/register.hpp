// kernels/register.hpp — the built-in kernel families, registered in one place (kernels/register.cpp),
// and the CUDA entry points the experiments call directly (defined only in CUDA builds).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/block/block_scaled.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

/// Every built-in family, in this order (the order `certify --kernel cpu` and `selftest` run them):
/// BF16-on-FP16 CPU models, CPU models, CPU models in other summation orders, block-scaled CPU models, and with CUDA the
/// pipeline, mma.sync, cuBLAS, emulation and block-scaled kernels; then the conversion kernels (fpcert's model of each
/// table conversion, and with CUDA the device table's entries). kernel_registry() calls it once.
void register_builtin_kernels();

// Families, each defined beside its kernels.
void register_cpu_models();          ///< kernels/gemm/cpu/models.cpp
void register_order_models();        ///< kernels/gemm/cpu/order_models.cpp: split-K, pairwise, blocked
void register_nondet_models();       ///< kernels/gemm/cpu/nondet_models.cpp: atomics split-K (run to run) and its fixtures
void register_epilogue_models();     ///< kernels/gemm/cpu/epilogue_models.cpp: fused-epilogue models (issue 37) and their fixtures
void register_f64_models();          ///< kernels/gemm/cpu/f64_models.cpp: FP64 GEMM models (docs/fp64.md)
void register_f64_cuda_kernels();    ///< kernels/gemm/cublas/cublas_f64.cu: cuBLAS DGEMM and its fixed-point emulation (docs/fp64.md)
void register_wgmma_kernels();       ///< kernels/gemm/cuda/wgmma.cu: Hopper wgmma + TMA GEMMs (issue 43)
void register_dmma_f64_kernels();    ///< kernels/gemm/cuda/dmma.cu: FP64 GEMM on DMMA tensor cores (docs/fp64.md)
void register_splitk_atomic_kernels();  ///< kernels/gemm/cuda/splitk_atomic.cu: split-K with atomic adds into C
void register_bf16_on_f16_models();  ///< kernels/emu/bf16_on_fp16.cpp
void register_pipeline_kernels();    ///< kernels/gemm/cuda/pipeline.cu: the three-pipeline comparison
void register_mma_kernels();         ///< kernels/gemm/cuda/mma.cu: tensor-core GEMMs with mma.sync
void register_cublas_kernels();      ///< kernels/gemm/cublas/cublas_gemm.cu: cuBLAS baselines, compute type pinned
void register_emu_split_kernels();   ///< kernels/emu/cuda/emu_split.cu: 3xTF32 and nxBF16 split products on tensor cores
void register_emu_bf16_kernels();    ///< kernels/emu/cuda/emu_bf16.cu: BF16 GEMMs on fp16 tensor cores, per strategy
void register_block_scaled_models(); ///< kernels/block/block_scaled.cpp: block-scaled GEMM models (MX, NVFP4) and their mutants
void register_block_gemm_kernels();  ///< kernels/block/cuda/block_gemm.cu: block-scaled GEMMs on bf16/fp16 tensor cores
void register_reduce_models();         ///< kernels/reduce/cpu/reduce_models.cpp: reduction models (sum, dot, nrm2)
void register_reduce_cuda_kernels();   ///< kernels/reduce/cuda/reduce_cuda.cu: warp-shuffle, atomics and CUB reductions
void register_softmax_models();        ///< kernels/softmax/cpu/softmax_models.cpp: softmax and log-softmax models
void register_softmax_cuda_kernels();  ///< kernels/softmax/cuda/softmax_cuda.cu: warp-per-row fused and online softmax
void register_attention_models();      ///< kernels/attention/cpu/attention_models.cpp: naive f32 and flash f16/bf16 attention models
void register_norm_models();           ///< kernels/norm/cpu/norm_models.cpp: LayerNorm and RMSNorm models
void register_norm_cuda_kernels();      ///< kernels/norm/cuda/norm_cuda.cu: warp-per-row LayerNorm and RMSNorm
void register_attention_cuda_kernels(); ///< kernels/attention/cuda/attention_cuda.cu: flash (mma.sync) and naive f32 attention
void register_softmax_bwd_models();        ///< kernels/softmax/cpu/softmax_bwd_models.cpp: softmax / log-softmax backward models
void register_softmax_bwd_cuda_kernels();  ///< kernels/softmax/cuda/softmax_bwd_cuda.cu: warp-per-row softmax backward
void register_norm_bwd_models();       ///< kernels/norm/cpu/norm_bwd_models.cpp: LayerNorm and RMSNorm backward models
void register_norm_bwd_cuda_kernels(); ///< kernels/norm/cuda/norm_bwd_cuda.cu: LayerNorm / RMSNorm backward (atomic and two-stage dgamma)
void register_attention_bwd_models();  ///< kernels/attention/cpu/attention_bwd_models.cpp: naive f32 and flash f16/bf16 attention backward models
void register_model_conversion_kernels();   ///< kernels/convert/model_convert.cpp: model_<entry> per table conversion
void register_device_conversion_kernels();  ///< kernels/convert/device_convert.cpp: the device table's entries
// Attention backward, CUDA (issue 45).
void register_attention_bwd_cuda_kernels();  ///< kernels/attention/cuda/attention_bwd_cuda.cu: flash (atomic and deterministic dQ) and naive f32

// GEMM fused epilogues (issue 37, docs/epilogue.md "CUDA subjects").
void register_cublaslt_kernels();      ///< kernels/gemm/cublaslt/cublaslt_gemm.cu: cublasLtMatmul with epilogues and FP8 scaling
void register_epilogue_cuda_kernels(); ///< kernels/gemm/cuda/epilogue.cu: SIMT GEMMs with every fused epilogue
/// kernels/gemm/cuda/epilogue.cu: the epilogue alone as an unfused pass after a plain GEMM, in place on a bf16 row-major
/// m x n D (ldd): D = RN_bf16(act(RN(D + bias_j))) with a bf16 bias per column (null: none), the activation evaluated
/// as the SIMT built-ins do; on `stream` (a cudaStream_t). bench/gpu_epilogue.cpp times it beside the fused epilogues.
void bias_act_bf16_pass_cuda(void* d, std::int64_t m, std::int64_t n, std::int64_t ldd, const void* bias, Activation act, void* stream);

/// kernels/gemm/cuda/mma.cu: the FP8 (e4m3 or e5m2) mma.sync GEMM, with partial sums promoted to fp32
/// every `promote_every` products (a positive multiple of 32; 0: never). Throws
/// std::invalid_argument for other formats or counts. Named gemm_<fmt>_f32acc_mma_sm89[_promote<N>].
std::unique_ptr<GemmKernel> make_fp8_mma_kernel(const Format& format, int promote_every);
/// kernels/emu/cuda/emu_split.cu: the split-scalar experiment on the device. For each method ("fp32",
/// "tf32" (both operands cvt.rna.tf32.f32, then an fp32 product), or a split scheme of
/// kernels/emu/split.hpp) the products a[i] * b[i] computed on the device with the kernels' slicing
/// (kernels/emu/emu_arith.cuh: __fmaf_rn, __fadd_rn, one rounding per step); result[method][i].
/// Throws DeviceError when the device fails, std::invalid_argument for an unknown method.
/// kernels/block/cuda/block_gemm.cu: a block-scaled GEMM for any format, valid rule and path (the registered ones
/// use the formats' default rules; see register_block_gemm_kernels).
std::unique_ptr<GemmKernel> make_block_gemm_cuda(const BlockFormat& f, ScaleRule rule, BlockGemmPath path);
std::vector<std::vector<float>> split_scalar_products_cuda(const std::vector<std::string>& methods, const std::vector<float>& a,
                                                           const std::vector<float>& b);

}  // namespace fpcert
