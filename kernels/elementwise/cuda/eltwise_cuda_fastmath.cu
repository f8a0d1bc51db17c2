// kernels/elementwise/cuda/eltwise_cuda_fastmath.cu — the -use_fast_math twin of eltwise_cuda.cu (docs/elementwise.md,
// "-use_fast_math builds"): the same subjects, run() and device sweep compiled a second time with --use_fast_math
// (kernels/CMakeLists.txt sets it on this file), registered as cuda_fastmath_* with the bounds of what fast math maps them
// to and DAZ/FTZ declared. The sweep's reference computes in double and integers: -ftz and -prec-div/-prec-sqrt touch f32
// arithmetic only, and an input the reference reads through a flushed float conversion is one the declared DAZ flushes too.
#define FPCERT_ELT_FASTMATH 1
#include "kernels/elementwise/cuda/eltwise_cuda.cu"
