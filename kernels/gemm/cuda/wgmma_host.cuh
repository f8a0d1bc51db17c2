// kernels/gemm/cuda/wgmma_host.cuh — host side of the TMA-fed wgmma kernels (kernels/gemm/cuda/wgmma.cu and the
// emulation kernels of kernels/emu/cuda/): the driver's cuTensorMapEncodeTiled, found once through the runtime (no
// -lcuda link), the 2-D tensor maps with the 128-byte swizzle the mainloop reads, and the availability check.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "kernels/gemm/cuda/mma_host.cuh"

namespace fpcert::wgmma_host {

/// cuTensorMapEncodeTiled from the driver, found once through the runtime (no -lcuda link).
inline PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    cudaGetLastError();
  });
  return fn;
}

inline CUtensorMapDataType tma_type(int bytes) {
  return bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32;
}

/// A 2-D tensor map: `inner` x `outer` elements, rows `ld` elements apart, boxes of box_inner x box_outer, 128-byte
/// swizzle, zero fill outside.
inline CUtensorMap make_map(const std::string& who, const void* p, int bytes, std::int64_t inner, std::int64_t outer, std::int64_t ld,
                     int box_inner, int box_outer) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * static_cast<cuuint64_t>(bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode_fn()(&map, tma_type(bytes), 2, const_cast<void*>(p), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DeviceError(who + ": cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ") for " +
                      std::to_string(inner) + " x " + std::to_string(outer) + " elements, ld " + std::to_string(ld));
  return map;
}

/// Can a TMA-fed wgmma kernel run here (shape limits are the caller's)? The driver's cuTensorMapEncodeTiled, an
/// sm_90 device, and sm_90a code of `kernel` in this binary.
template <typename F>
Support hopper_support(F* kernel) {
  if (!encode_fn()) return Support::no("the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)");
  std::string why;
  const int sm = cuda::device_sm(why);
  if (sm == 0) return Support::no(why);
  if (sm != 90)
    return Support::no("wgmma and setmaxnreg are sm_90a instructions (Hopper only); this device is sm_" + std::to_string(sm));
  return cuda::mma_support(0, 0, 0, 90, kernel);
}

/// The shape limits every TMA-fed wgmma kernel shares, for tiles of kBM (128) x tile_n and stages of kStage bytes of K
/// (`stage_k`): int32 tile coordinates and TMA coordinates, and a 1-D grid of at most 2^31 - 1 tiles.
inline Support tile_support(std::int64_t m, std::int64_t n, std::int64_t k, int tile_m, int tile_n, int stage_k) {
  if (m < 0 || n < 0 || k < 0) return Support::no("negative dimension");
  if (m > 0x7FFFFFFF - tile_m || n > 0x7FFFFFFF - tile_n || k > 0x7FFFFFFF - stage_k) return Support::no("a dimension of 2^31 or more");
  if (((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n) > 0x7FFFFFFF) return Support::no("more tiles than the grid's x range");
  return Support::yes();
}

/// The grid of a persistent kernel: one block per tile, at most one per SM of the current device (its SM count
/// read once per device; 132 on an H100 SXM). A failed query falls back to one block per tile.
inline unsigned persistent_grid(std::int64_t tiles) {
  static std::mutex mu;
  static int counts[64] = {};
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < 64) {
    std::lock_guard<std::mutex> lock(mu);
    if (counts[dev] == 0 && cudaDeviceGetAttribute(&counts[dev], cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) counts[dev] = -1;
    sms = counts[dev];
  }
  cudaGetLastError();
  return static_cast<unsigned>(sms > 0 ? std::min<std::int64_t>(tiles, sms) : tiles);
}

}  // namespace fpcert::wgmma_host
