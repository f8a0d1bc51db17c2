// kernels/block/block_scaled.hpp — CPU models of block-scaled GEMMs (OCP MX, NVFP4): fp32 inputs quantized
// along K by the declared format and rule (oracle/block/block_format.hpp), then multiplied in one of two ways
// whose operation order is stated exactly, so CUDA kernels with the same order match them bit for bit:
//
//   deqbf16   every element dequantized into bf16 (MX: element * 2^e, exact inside bf16's range; NVFP4:
//             element * S, exact, the tensor scales applied at the end), then fp32 FMA along K from +0
//             (model_gemm_bf16_f32acc's order); NVFP4: C = RN_f32(acc * RN_f32(s_tA * s_tB)).
//   blocksum  per K-block b the exact sum P_b of element products times the block's scale product (MX:
//             2^(e_A + e_B); NVFP4: S_A * S_B), rounded once to fp32, added to an fp32 accumulator with one
//             RN addition, blocks in ascending K from +0. NVFP4 then as deqbf16's last step. (For E2M3, E3M2,
//             E2M1 and int8 elements P_b itself is exact in fp32: at most 23 significant bits.)
//
// Their traits carry the block scaling, so the runner grades them against the exact product of the
// operands as the declared quantizer makes them (suites/verdict/block_reference.hpp), not of the raw inputs.
#pragma once

#include <memory>
#include <string>

#include "kernels/gemm/cpu/model.hpp"
#include "oracle/block/block_format.hpp"

namespace fpcert {

enum class BlockGemmPath : std::uint8_t { DeqBf16, BlockSum };
std::string_view to_string(BlockGemmPath p);

/// model_gemm_<format>_<rule>_<deqbf16|blocksum>_f32acc.
std::string block_gemm_model_name(const BlockFormat& f, ScaleRule rule, BlockGemmPath path);

/// Whether the sum of one block's element products is exact in fp32 whatever the elements: every product is
/// a multiple of the smallest element squared and at most the largest squared, so a block of B spans
/// B max^2 / min^2 units; at most 2^24 fits fp32's significand (E2M1, E2M3, E3M2, int8 yes; E4M3, E5M2 no).
bool block_sums_exact_in_f32(const BlockFormat& f);

/// One built-in block-scaled GEMM: format, rule, path.
struct BlockGemmConfig {
  const BlockFormat* format;
  ScaleRule rule;
  BlockGemmPath path;
};
/// The built-ins, one list for both registries: the CPU models (cuda = false: both paths for every format
/// with its default rule, and deqbf16 with rceil for mxfp8_e4m3, cuBLAS's rule, and mxfp4) or the CUDA
/// kernels (deqbf16 for every format and mxfp8_e4m3 rceil; blocksum where block_sums_exact_in_f32, so any
/// fp32 MMA sums a block exactly — kernels/block/cuda/block_gemm_kernel.cuh).
std::vector<BlockGemmConfig> builtin_block_gemms(bool cuda);
/// The traits both the CPU model and a CUDA kernel with the same order declare.
KernelTraits block_gemm_traits(const BlockFormat& f, ScaleRule rule, BlockGemmPath path);
/// A model for any format, valid rule and path (throws std::invalid_argument for an invalid rule).
std::unique_ptr<CpuModel> make_block_gemm_model(const BlockFormat& f, ScaleRule rule, BlockGemmPath path);

/// The quantized operands of a block-scaled GEMM as a kernel sees them: A (m x k) in blocks along its
/// rows, B (k x n) in blocks down its columns.
struct BlockOperands {
  BlockTensor a, b;
};
BlockOperands quantize_operands(const KernelTraits& t, const double* a, const double* b, std::int64_t m, std::int64_t n,
                                std::int64_t k);

/// Output of a blocksum GEMM from quantized operands, as fp32 values (row-major m x n); `scale_fault`
/// and `swap_scales` inject the faults of the mutants (0 / false: the honest arithmetic).
std::vector<float> blocksum_gemm(const BlockOperands& q, int scale_fault = 0, bool swap_scales = false);
/// Same for the deqbf16 path.
std::vector<float> deqbf16_gemm(const BlockOperands& q, int scale_fault = 0, bool swap_scales = false);

// register_block_scaled_models() (kernels/register.hpp) registers the built-in models and their mutants: scale
// exponent off by one, A and B scales swapped, the element emax never subtracted, round() where rceil's
// ceil() was meant.

}  // namespace fpcert
