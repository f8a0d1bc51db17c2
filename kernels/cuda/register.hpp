// kernels/cuda/register.hpp — the CUDA kernel families; register_cuda_kernels() calls each.
#pragma once

namespace fpcert {

void register_pipeline_kernels();  ///< kernels/cuda/pipeline.cu: the three-pipeline comparison

}  // namespace fpcert
