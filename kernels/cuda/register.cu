// kernels/cuda/register.cu — every CUDA kernel family registers here (only in CUDA builds).
#include "kernels/cuda/register.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

void register_cuda_kernels() {
  register_pipeline_kernels();
  register_mma_kernels();
  register_cublas_kernels();
}

}  // namespace fpcert
