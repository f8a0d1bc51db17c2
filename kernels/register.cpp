// kernels/register.cpp — every built-in kernel family registers here, and only here.
#include "kernels/register.hpp"

namespace fpcert {

void register_builtin_kernels() {
  register_bf16_on_f16_models();
  register_cpu_models();
  register_mutants();
#if defined(FPCERT_HAVE_CUDA)
  register_pipeline_kernels();
  register_mma_kernels();
  register_cublas_kernels();
  register_emu_split_kernels();
  register_emu_bf16_kernels();
#endif
  // Conversion kernels: fpcert's model of each table conversion, and with CUDA the table's entries.
  register_model_conversion_kernels();
#if defined(FPCERT_HAVE_CUDA)
  register_device_conversion_kernels();
#endif
}

}  // namespace fpcert
