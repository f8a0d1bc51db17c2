// kernels/convert/cuda/convert_kernels.cuh — the sweep kernel shared by every device conversion: one thread
// per source code, the conversion under test, side checks (x2 lanes, stray container bits), one
// result written per code. Each kernels/convert/cuda/convert_*.cu defines its conversions as small "op"
// structs and lists their launchers by table name (kernels/convert/device_convert.cpp holds the table).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/convert/cuda/convert_launch.hpp"

namespace fpcert::cuda_convert {

using DeviceSide = SideResults;  // in device memory, zeroed before each launch

// ---- bit casts (intrinsics: __uint_as_float and friends; never a host type's conversion) ----
__device__ __forceinline__ float f32_of(std::uint32_t c) { return __uint_as_float(c); }
__device__ __forceinline__ float tf32_of(std::uint32_t c) { return __uint_as_float(c << 13); }
__device__ __forceinline__ std::uint32_t bits_of(float f) { return __float_as_uint(f); }

/// Op kinds: an op converts one code (`one`) or an x2 pair of codes at once (`pair`).
struct One {
  static constexpr bool kPair = false;
};
struct Pair {
  static constexpr bool kPair = true;
};

// ---- raw 16-bit values and pairs, as the cuda_fp8/fp6/fp4 headers take them ----
__device__ __forceinline__ __half_raw hraw(std::uint32_t c) {
  __half_raw r;
  r.x = static_cast<unsigned short>(c);
  return r;
}
__device__ __forceinline__ __half2_raw h2raw(std::uint32_t lo, std::uint32_t hi) {
  __half2_raw r;
  r.x = static_cast<unsigned short>(lo);
  r.y = static_cast<unsigned short>(hi);
  return r;
}
__device__ __forceinline__ __nv_bfloat16_raw braw(std::uint32_t c) {
  __nv_bfloat16_raw r;
  r.x = static_cast<unsigned short>(c);
  return r;
}
__device__ __forceinline__ __nv_bfloat162_raw b2raw(std::uint32_t lo, std::uint32_t hi) {
  __nv_bfloat162_raw r;
  r.x = static_cast<unsigned short>(lo);
  r.y = static_cast<unsigned short>(hi);
  return r;
}
/// An x2 storage of two byte-wide codes (fp8, ue8m0, fp6): lane x in bits 0-7, lane y in bits 8-15.
/// Bits above a code's width are kept, so the stray-bit check sees them.
__device__ __forceinline__ void split_bytes(std::uint32_t v, std::uint32_t& lo, std::uint32_t& hi) {
  lo = v & 0xFFu;
  hi = (v >> 8) & 0xFFu;
}

/// A source code and its partner in the x2 forms: code ^ 1 (a valid code of every format), so every
/// code is converted once in the low lane (paired with its partner in the high lane) and once in
/// the high lane (the partner in the low lane).
__device__ __forceinline__ std::uint32_t partner_of(std::uint32_t code) { return code ^ 1u; }

/// Op's result for one code, with the side checks: Op::kPair: Op::pair(lo_in, hi_in, lo_out, hi_out)
/// converts two codes at once; the code's result from the low lane is returned, and its result from
/// the high lane must be the same bits (else a lane difference is recorded). Any result with bits
/// outside valid_mask (the format's code in its container) is recorded as stray.
template <class Op>
__device__ __forceinline__ std::uint32_t produce(std::uint32_t code, DeviceSide* __restrict__ side, std::uint32_t valid_mask) {
  std::uint32_t r;
  if constexpr (Op::kPair) {
    const std::uint32_t partner = partner_of(code);
    std::uint32_t lo, hi, unused;
    Op::pair(code, partner, lo, unused);  // code in the low lane
    Op::pair(partner, code, unused, hi);  // code in the high lane
    r = lo;
    if (lo != hi) {
      const unsigned long long k = atomicAdd(&side->lane_count, 1ull);
      if (k < kSideListed) {
        side->lane_src[k] = code;
        side->lane_lo[k] = lo;
        side->lane_hi[k] = hi;
      }
    }
  } else {
    r = Op::one(code);
  }
  if (r & ~valid_mask) {
    const unsigned long long k = atomicAdd(&side->stray_count, 1ull);
    if (k < kSideListed) {
      side->stray_src[k] = code;
      side->stray_raw[k] = r;
    }
  }
  return r;
}

/// One thread per code: out[i] = Op(first + i), with produce()'s side checks.
template <class Op, class Out>
__global__ void __launch_bounds__(256) sweep_kernel(std::uint64_t first, std::uint32_t n, Out* __restrict__ out,
                                                    DeviceSide* __restrict__ side, std::uint32_t valid_mask) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = static_cast<Out>(produce<Op>(static_cast<std::uint32_t>(first + i), side, valid_mask));
}

/// The launcher of one op: a grid of 256-thread blocks over n codes; the launch is checked by the
/// caller (FPCERT_CUDA_LAUNCH_CHECK), execution errors surface at the caller's synchronisation.
template <class Op, class Out>
void launch(const LaunchArgs& a) {
  const std::uint32_t blocks = (a.n + 255u) / 256u;
  sweep_kernel<Op, Out><<<blocks, 256, 0, static_cast<cudaStream_t>(a.stream)>>>(
      a.first, a.n, static_cast<Out*>(a.out), static_cast<DeviceSide*>(a.side), a.valid_mask);
}

}  // namespace fpcert::cuda_convert

#include "kernels/convert/cuda/convert_check_kernel.cuh"  // the same ops converting and checking in one pass
