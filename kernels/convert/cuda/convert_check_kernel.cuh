// kernels/convert/cuda/convert_check_kernel.cuh — the device check: each thread converts a code with the op
// under test (produce(), with the sweep kernel's lane and stray checks) and with fpcert's model
// (oracle/convert/convert_model.hpp, the same source the host runs), counts the model's outcome key, and
// records the code when the results differ. Nothing per code leaves the device except the results
// of NaN inputs (their NaN statements are judged on the host) and the bounded list of differences.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/convert/cuda/convert_check_launch.hpp"
#include "oracle/convert/convert_model.hpp"

namespace fpcert::cuda_convert {

template <class Op, class Out>
__global__ void __launch_bounds__(256) check_kernel(const CheckLaunchArgs a) {
  __shared__ unsigned int hist[kOutcomeKeys];
  for (int k = threadIdx.x; k < kOutcomeKeys; k += blockDim.x) hist[k] = 0;
  __syncthreads();
  DeviceSide* side = static_cast<DeviceSide*>(a.side);
  Out* nan_out = static_cast<Out*>(a.nan_out);
  const std::uint64_t nan0 = a.nan_hi[0] - a.nan_lo[0];
  const std::uint32_t stride = gridDim.x * blockDim.x;
  // The loop condition is the same for every thread of a block, so whole warps run each iteration
  // and the warp-wide match below sees all 32 lanes (a lane past n brings a key that counts nothing).
  for (std::uint32_t base = blockIdx.x * blockDim.x; base < a.n; base += stride) {
    const std::uint32_t i = base + threadIdx.x;
    constexpr std::uint32_t kNoKey = kOutcomeKeys;
    std::uint32_t key = kNoKey;
    if (i < a.n) {
      const std::uint64_t c64 = a.first + i;
      const std::uint32_t code = static_cast<std::uint32_t>(c64);
      const std::uint32_t raw = produce<Op>(code, side, a.valid_mask);
      const std::uint32_t got = (raw >> a.shift) & a.code_mask;
      const ModelResult m = model_convert(a.model, code);
      key = m.key;
      if (c64 >= a.nan_lo[0] && c64 < a.nan_hi[0]) {
        nan_out[c64 - a.nan_lo[0]] = static_cast<Out>(raw);
      } else if (c64 >= a.nan_lo[1] && c64 < a.nan_hi[1]) {
        nan_out[nan0 + (c64 - a.nan_lo[1])] = static_cast<Out>(raw);
      } else if (got != m.code) {
        const unsigned long long k = atomicAdd(&a.counts->differences, 1ull);
        if (k < a.max_listed) {
          a.diff_src[k] = code;
          a.diff_got[k] = got;
        }
      }
    }
    // Most lanes of a warp share a key: one shared-memory atomic per distinct key.
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, key);
    if (key != kNoKey && static_cast<int>(threadIdx.x & 31u) == __ffs(peers) - 1)
      atomicAdd(&hist[key], static_cast<unsigned>(__popc(peers)));
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kOutcomeKeys; k += blockDim.x)
    if (hist[k]) atomicAdd(&a.counts->keys[k], static_cast<unsigned long long>(hist[k]));
}

/// The check launcher of one op; the launch is checked by the caller (FPCERT_CUDA_LAUNCH_CHECK).
template <class Op, class Out>
void launch_check(const CheckLaunchArgs& a) {
  check_kernel<Op, Out><<<a.blocks, 256, 0, static_cast<cudaStream_t>(a.stream)>>>(a);
}

}  // namespace fpcert::cuda_convert
