// kernels/device/row_io.cuh — how the row operations' CUDA kernels (softmax, LayerNorm / RMSNorm and their backward
// passes) read and write f32, f16 and bf16 elements: f32 arithmetic inside, the conversions CUDA's own (exact into f32,
// round to nearest even out of it).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "oracle/format.hpp"

namespace fpcert::row_io {

enum class Io : int { F32, F16, Bf16 };

inline Io io_of(const Format& f) { return f == f16 ? Io::F16 : f == bf16 ? Io::Bf16 : Io::F32; }

/// Element i of p (format io) as f32, exactly.
__device__ inline float load_x(Io io, const void* p, std::int64_t i) {
  switch (io) {
    case Io::F16: return __half2float(static_cast<const __half*>(p)[i]);
    case Io::Bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}
/// v rounded (to nearest even) into element i of p (format io).
__device__ inline void store_y(Io io, void* p, std::int64_t i, float v) {
  switch (io) {
    case Io::F16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case Io::Bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

}  // namespace fpcert::row_io
