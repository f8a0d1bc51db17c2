// tests/suites/card_chains_support.hpp — the tensor-core card orders both card-chain tests emulate (card_chains_test.cpp
// on the host's semantics of the job, card_chains_gpu_test.cpp on the device): MMA-Sim's Hopper models as the cards (the
// H200's validated cards have their parameters, docs/tensor_cores.md), each with a CPU model's traits whose operand
// formats its instruction takes.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm/cpu/model.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"

namespace fpcert::test {

/// MMA-Sim's Hopper model of an instruction.
inline FusedDotParams hopper_card(const char* insn) { return *tc::mma_sim_hopper(*tc::find_instruction(insn)); }

struct TcCardOrder {
  const char* model;  ///< the CPU model whose formats the instruction takes
  const char* insn;
  int step, pad;
  const char* source;  ///< the generators' source format of the inputs
  int promote;         ///< fp32 promotion every this many products (0: none)
};

/// f16 (without and with promotion every 128 products), bf16 and tf32.
inline std::vector<TcCardOrder> tc_card_orders() {
  return {{"model_gemm_f16_f32acc", "mma_f16_f32", 16, 32, "f16", 0},
          {"model_gemm_f16_f32acc", "mma_f16_f32", 16, 32, "f16", 128},
          {"model_gemm_bf16_f32acc", "mma_bf16_f32", 16, 32, "bf16", 0},
          {"model_gemm_tf32_f32acc", "mma_tf32_f32", 8, 16, "f32", 0}};
}

/// The traits of a kernel declaring the tensor-core card order o (the K-loop of fpcert's mma.sync GEMMs).
inline KernelTraits tc_card_traits(const TcCardOrder& o) {
  KernelTraits t = make_gemm_kernel(o.model)->traits();
  t.sum_order = SummationOrder::tensor_core(o.step, o.insn, o.pad);
  t.acc_rounding = Rounding::TowardZero;
  t.sum_order.block_model.params = hopper_card(o.insn);
  t.sum_order.block_model.measured = true;
  t.promote_every = o.promote;
  if (o.promote > 0) t.promote_format = &f32;
  return t;
}

}  // namespace fpcert::test
