// suites/verdict/block_reference.hpp — what a block-scaled kernel is graded against: the exact product of A and B
// as the kernel's declared quantizer makes them (docs/block_formats.md), C = (s_A ⊙ A_q)(s_B ⊙ B_q), with
// scales along K. The dequantized values are exact doubles, so oracle/gemm_ref takes them as they are.
#pragma once

#include <cstdint>
#include <string>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert {

struct BlockReference {
  Matrix a, b;  ///< the dequantized operands (m x k, k x n)
  double a_tensor_scale = 1, b_tensor_scale = 1;  ///< NVFP4's per-tensor scales inside a and b (1 otherwise)
  GemmRef ref;
  std::int64_t elements = 0, inexact = 0, saturated = 0, flushed = 0, nonfinite_blocks = 0, blocks = 0;
  /// Whether every element times its block scale (NVFP4: without the tensor scale, which the declared
  /// arithmetic applies at the end) is a value of the kernel's operand format: the multiplier then sees
  /// the quantized operands exactly and the bound has no storage term.
  bool a_operand_exact = true, b_operand_exact = true;
  /// The flag a result carries: how much the quantizer rounded (or that it did not).
  std::string flag(const KernelTraits& t) const;
};

/// The problem's inputs as the kernel receives them (rounded into its input formats), quantized by
/// t.block, dequantized exactly, and their exact product. Requires t.block.active().
BlockReference block_reference(const KernelTraits& t, const Problem& p);

}  // namespace fpcert
