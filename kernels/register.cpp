// kernels/register.cpp — every built-in kernel family registers here, and only here.
#include "kernels/register.hpp"

#include "kernels/elementwise/eltwise_kernel.hpp"

#include "base/error.hpp"
// oz2 (issue 39): the Ozaki-II FP64 emulation.
#include "kernels/gemm/cpu/ozaki2.hpp"

namespace fpcert {

void register_builtin_kernels() {
  register_bf16_on_f16_models();
  register_cpu_models();
  register_order_models();
  register_nondet_models();
  register_f64_models();
  register_epilogue_models();  // fused epilogues (issue 37): models and fixtures
  register_block_scaled_models();
#if defined(FPCERT_HAVE_CUDA)
  register_pipeline_kernels();
  register_splitk_atomic_kernels();
  register_mma_kernels();
  register_wgmma_kernels();
  register_cublas_kernels();
  register_emu_split_kernels();
  register_emu_bf16_kernels();
  register_block_gemm_kernels();
  register_f64_cuda_kernels();
  register_dmma_f64_kernels();
#endif
  // Reduction kernels: CPU models of sums, dots and nrm2 in the orders GPU kernels use.
  register_reduce_models();
#if defined(FPCERT_HAVE_CUDA)
  register_reduce_cuda_kernels();
#endif
  // Elementwise kernels (issue 42): glibc's functions and fixtures, and with CUDA the device's functions.
  register_eltwise_cpu_kernels();
  register_eltwise_hwy_kernels();
#if defined(FPCERT_HAVE_CUDA)
  register_eltwise_cuda_kernels();
  register_eltwise2_cuda_kernels();           // binary functions (math42)
  register_eltwise_cuda_fastmath_kernels();   // the -use_fast_math twin (math42)
  register_eltwise2_cuda_fastmath_kernels();  // the binary functions' -use_fast_math twin (math42)
#endif
  // Softmax kernels (issue 40): CPU models (shifted, unshifted, online), and with CUDA the warp-per-row kernels.
  register_softmax_models();
#if defined(FPCERT_HAVE_CUDA)
  register_softmax_cuda_kernels();
#endif
  // Normalisation kernels (issue 40): CPU models of LayerNorm and RMSNorm, and with CUDA the warp-per-row kernels.
  register_norm_models();
#if defined(FPCERT_HAVE_CUDA)
  register_norm_cuda_kernels();
#endif
  // Softmax / log-softmax backward kernels (issue 45): CPU models, and with CUDA the warp-per-row kernels.
  register_softmax_bwd_models();
#if defined(FPCERT_HAVE_CUDA)
  register_softmax_bwd_cuda_kernels();
#endif
  // Attention kernels (issue 41): with CUDA the FlashAttention-2-style mma.sync kernels and the naive f32 subject.
#if defined(FPCERT_HAVE_CUDA)
  register_attention_cuda_kernels();
#endif
  // Attention kernels (issue 41): CPU models of a naive f32 attention and FlashAttention-2-style f16 / bf16.
  register_attention_models();
  // Norm backward kernels (issue 45): CPU models of LayerNorm and RMSNorm backward, and with CUDA the built-ins.
  register_norm_bwd_models();
#if defined(FPCERT_HAVE_CUDA)
  register_norm_bwd_cuda_kernels();
#endif
  // Attention backward (issue 45): CPU models of a naive f32 backward and FlashAttention-2-style f16 / bf16.
  register_attention_bwd_models();
  // Conversion kernels: fpcert's model of each table conversion, and with CUDA the table's entries.
  register_model_conversion_kernels();
#if defined(FPCERT_HAVE_CUDA)
  register_device_conversion_kernels();
#endif
  // Attention backward (issue 45), CUDA: FlashAttention-2-style backward (atomic and deterministic dQ), naive f32.
#if defined(FPCERT_HAVE_CUDA)
  register_attention_bwd_cuda_kernels();
#endif
  // GEMM fused epilogues (issue 37): cuBLASLt subjects and the SIMT built-ins with every epilogue.
#if defined(FPCERT_HAVE_CUDA)
  register_cublaslt_kernels();
  register_epilogue_cuda_kernels();
#endif
  // oz2 (issue 39): the Ozaki-II FP64 emulation (docs/fp64.md): the CPU models, and with CUDA the INT8 tensor-core kernel.
  register_ozaki2_models();
#if defined(FPCERT_HAVE_CUDA)
  register_ozaki2_cuda_kernels();
#endif
}

#if !defined(FPCERT_HAVE_CUDA)
void bias_act_bf16_pass_cuda(void*, std::int64_t, std::int64_t, std::int64_t, const void*, Activation, void*) {
  throw DeviceError("bias_act_bf16_pass_cuda: this fpcert was built without CUDA");
}
// A build without CUDA has no device to compute on: the call fails as it would on a machine without
// one (the device tests that call it are skipped there before reaching it).
std::vector<std::vector<float>> split_scalar_products_cuda(const std::vector<std::string>&, const std::vector<float>&,
                                                           const std::vector<float>&) {
  throw DeviceError("split_scalar_products_cuda: this fpcert was built without CUDA");
}
#endif

}  // namespace fpcert
