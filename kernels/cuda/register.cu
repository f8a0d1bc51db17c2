// kernels/cuda/register.cu — every CUDA kernel family registers here (only in CUDA builds).
#include "kernels/cpu/bf16_on_fp16.hpp"
#include "kernels/cuda/register.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

void register_cuda_kernels() {
  register_pipeline_kernels();
  register_mma_kernels();
  register_cublas_kernels();
  register_emu_split_kernels();
  register_emu_bf16_kernels();
  register_block_gemm_kernels();
  register_bf16_on_f16_models();  // CPU models; here too so that the linker always keeps them
}

}  // namespace fpcert
