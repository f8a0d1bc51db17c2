// kernels/elementwise/cuda/eltwise2_cuda_fastmath.cu — the -use_fast_math twin of eltwise2_cuda.cu (docs/elementwise.md,
// "-use_fast_math builds"): the binary subjects compiled a second time with --use_fast_math (kernels/CMakeLists.txt),
// registered as cuda_fastmath_* (x / y and fdividef as __fdividef) with DAZ/FTZ declared.
#define FPCERT_ELT_FASTMATH 1
#include "kernels/elementwise/cuda/eltwise2_cuda.cu"
