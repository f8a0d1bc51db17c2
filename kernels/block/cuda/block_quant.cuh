// kernels/block/cuda/block_quant.cuh — the CUDA block quantizer's launch interface, shared by the quantizer API
// (kernels/block/cuda/block_quant.cu) and the block-scaled GEMM kernels (kernels/block/cuda/block_gemm.cu).
//
// Layout: x is rows x cols fp32, row-major with leading dimension ld. axis 1: blocks of B consecutive
// entries of a row, one warp per 32 / B blocks (lane l of the warp holds entry l % B of block l / B), the
// block maximum by a shuffle reduction over B lanes, codes written one byte per lane; axis 0: blocks of B
// consecutive entries of a column, one thread per (block row, column), consecutive threads on consecutive
// columns so every load and store of a warp is contiguous. Scales: axis 1 rows x ceil(cols / B), axis 0
// ceil(rows / B) x cols (BlockTensor's layout). Element arithmetic: kernels/block/block_quant_arith.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/block/block_quant_arith.cuh"

namespace fpcert::blockq {

struct QuantParams {
  Elem elem;                 ///< the element format
  Rule rule = Rule::Floor;   ///< E8M0 formats
  bool pow2 = true;          ///< E8M0 scales (else NVFP4: UE4M3 scale and a tensor scale)
  Elem scale_elem;           ///< NVFP4: e4m3
  Mode scale_mode = Mode::NearestEven;  ///< NVFP4: how amax / (6 s_t) rounds into the scale
  double ts = 1;             ///< NVFP4: the tensor scale s_t
  int block = 32;            ///< 16 or 32
  int axis = 1;
  const float* x = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  std::uint8_t* codes = nullptr;   ///< rows x cols, leading dimension cols
  std::uint8_t* scales = nullptr;
  std::int64_t scale_cols = 0;
};

/// The parameters for a format and rule (host).
QuantParams quant_params(const BlockFormat& f, ScaleRule r, int block, int axis);
/// Point the parameters at an array and its outputs (scales in BlockTensor's layout for p.axis).
inline void bind(QuantParams& p, const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint8_t* codes,
                 std::uint8_t* scales) {
  p.x = x;
  p.rows = rows;
  p.cols = cols;
  p.ld = ld;
  p.codes = codes;
  p.scales = scales;
  p.scale_cols = p.axis == 1 ? (cols + p.block - 1) / p.block : cols;
}
/// Launch the quantizer on a stream (no synchronisation; launch errors throw DeviceError).
void launch_quantize(const QuantParams& p, cudaStream_t stream);
/// The largest finite |x| of a rows x cols array (ld) as fp32 bits into *amax_bits (device memory, set to 0
/// first by the caller).
void launch_amax(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned* amax_bits, cudaStream_t stream);
/// NVFP4's tensor scale of a device array: the amax reduction, one 4-byte copy back, nvfp4_tensor_scale.
double device_tensor_scale(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned* scratch, cudaStream_t stream);

}  // namespace fpcert::blockq
