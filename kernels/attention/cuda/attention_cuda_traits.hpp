// kernels/attention/cuda/attention_cuda_traits.hpp — the declarations the CUDA attention built-ins share, forward
// (attention_cuda.cu) and backward (attention_bwd_cuda.cu): the GEMM traits of their mma.sync products and of their
// fmaf chains, CUDA exp2f's error, the causal offset.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/attention/attention_kernel.hpp"
#include "kernels/kernel.hpp"

namespace fpcert {

/// The GEMM traits of the mma.sync GEMM of the same instruction (kernels/gemm/cuda/mma.cu: one declaration of the
/// instruction, not typed twice), with the attention kernel's order (`order`, followed by the GEMM's) and k-loop:
/// k-steps of 16, padded to `pad`; `tile_m` rows of the product per CTA.
inline KernelTraits attention_gemm_traits(const std::string& gemm, int mma_k, const char* insn, int pad, const std::string& order,
                                          std::int64_t tile_m) {
  const std::unique_ptr<Kernel> k = make_kernel(gemm);
  if (!k || k->operation() != Operation::Gemm) throw std::logic_error("attention: the mma.sync GEMM " + gemm + " is not registered");
  KernelTraits t = static_cast<const GemmKernel&>(*k).traits();
  t.order = order + gemm + " declares it: " + t.order;
  t.sum_order = SummationOrder::tensor_core(mma_k, insn, pad);
  t.tile_m = tile_m;
  t.tile_n = 0;
  return t;
}
inline KernelTraits attention_mma_traits(bool bf16_in, int pad, const std::string& order, std::int64_t tile_m) {
  return attention_gemm_traits(bf16_in ? "gemm_bf16_f32acc_mma_sm80" : "gemm_f16_f32acc_mma_sm80", 16, bf16_in ? "mma_bf16_f32" : "mma_f16_f32",
                               pad, order, tile_m);
}
/// The same of mma.sync.m16n8k32 e4m3 (gemm_e4m3_f32acc_mma_sm89: k-steps of 32).
inline KernelTraits attention_e4m3_mma_traits(int pad, const std::string& order, std::int64_t tile_m) {
  return attention_gemm_traits("gemm_e4m3_f32acc_mma_sm89", 32, "mma_e4m3_f32", pad, order, tile_m);
}

/// f32 operands, exact products inside the fma, an f32 accumulator rounded to nearest even, out f32: an fmaf chain.
inline KernelTraits attention_fma_f32_traits(const char* what) {
  KernelTraits t;
  t.sum_order = SummationOrder::sequential(StepKind::Fma);
  t.order = what;
  return t;
}

inline ElemFnError exp2_error_cuda_exp2f() {
  return {2, 0, 2 * 0x1p-149,
          "CUDA exp2f: 2 ulp, full range (CUDA C Programming Guide, Mathematical Functions, single precision; this build "
          "passes neither -ftz nor --use_fast_math, so subnormal results are kept)"};
}

/// Causal visibility offset: key j visible from query i iff j <= i + offset.
inline std::int64_t causal_offset(CausalAlign c, const AttentionShape& s, bool off_by_one) {
  const std::int64_t base = c == CausalAlign::BottomRight ? s.len_k - s.len_q : 0;
  return base + (off_by_one ? 1 : 0);
}

}  // namespace fpcert
