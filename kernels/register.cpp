// kernels/register.cpp — every built-in kernel family registers here, and only here.
#include "kernels/register.hpp"

namespace fpcert {

void register_builtin_kernels() {
  register_bf16_on_f16_models();
  register_cpu_models();
  register_order_models();
#if defined(FPCERT_HAVE_CUDA)
  register_pipeline_kernels();
  register_mma_kernels();
  register_cublas_kernels();
  register_emu_split_kernels();
  register_emu_bf16_kernels();
#endif
}

}  // namespace fpcert
