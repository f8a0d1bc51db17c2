// tests/suites/tc_bitwise_support.hpp — what the tensor-core bitwise tests share (tc_bitwise_test.cpp,
// tc_bitwise_lanes_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "base/philox.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/gemm/cpu/model.hpp"
#include "kernels/tc/cards.hpp"
#include "kernels/tc/instruction.hpp"
#include "kernels/tc/probe.hpp"
#include "oracle/gemm_ref.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/experiments/fp8_accumulation.hpp"
#include "suites/ops/gemm/runner.hpp"
#include "generators/generate.hpp"
#include "tests/support/run_case.hpp"
#include "tests/support/test_seed.hpp"



namespace fpcert::test_tc {

using namespace fpcert;


/// MMA-Sim's Hopper model of mma.sync f16 -> f32 (kernels/tc/probe.cpp: 25 alignment bits below e_a + e_b,
/// discarded toward zero, C in the block, RZ to 23 bits, blocks of 16).
inline FusedDotParams hopper_f16() { return *tc::mma_sim_hopper(*tc::find_instruction("mma_f16_f32")); }

/// A validated card of `id` with these parameters (as `fpcert probe tensor-cores` writes one that passed).
inline BehaviourCard card_of(const std::string& id, const FusedDotParams& p, bool validated = true) {
  const tc::InstructionSpec* s = tc::find_instruction(id);
  BehaviourCard c;
  c.id = id;
  c.instruction = std::string(s->ptx);
  c.device = "simulated: test";
  c.supported = true;
  c.params = p;
  c.validation.push_back({"uniform", 1000, validated ? 0u : 3u});
  return c;
}
inline tc::CardSet cards(std::vector<BehaviourCard> cs) {
  tc::CardSet s;
  s.cards = std::move(cs);
  s.source = "the test's cards";
  return s;
}

/// The traits of fpcert's mma.sync GEMMs (kernels/gemm/cuda/mma.cu): operands of `f`, exact products, fp32
/// accumulator declared toward zero, steps of the instruction's k, K padded to `pad`, the card of `insn`.
inline KernelTraits mma_traits(const Format& f, int k, const char* insn, int pad) {
  KernelTraits t;
  t.a_input = t.b_input = t.a_operand = t.b_operand = &f;
  t.exact_products = true;
  t.acc = &f32;
  t.acc_rounding = Rounding::TowardZero;
  t.out = &f32;
  t.order = "mma.sync steps, k ascending, K zero-padded";
  t.sum_order = SummationOrder::tensor_core(k, insn, pad);
  return t;
}
/// gemm_f16_f32acc_mma_sm80: m16n8k16, K padded to stages of 32.
inline KernelTraits mma_f16_traits() { return mma_traits(f16, 16, "mma_f16_f32", 32); }

/// A CPU model of an mma.sync f16 GEMM: its own K-loop (not the emulator's) over fused_dot with `p`:
/// K padded with zero codes to a multiple of 32, steps of 16, D chained from +0.
class MmaModel final : public CpuModel {
 public:
  MmaModel(std::string name, FusedDotParams p) : CpuModel(std::move(name), "mma.sync f16 model", mma_f16_traits()), p_(p) {}
  std::vector<std::uint64_t> compute(const DecodedOperands& d) const override {
    const std::int64_t kp = (d.k + 31) / 32 * 32;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(d.m * d.n));
    std::vector<std::uint32_t> a(static_cast<std::size_t>(kp)), b(static_cast<std::size_t>(kp));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j) {
        for (std::int64_t q = 0; q < kp; ++q) {
          a[static_cast<std::size_t>(q)] = q < d.k ? static_cast<std::uint32_t>(round_double(f16, d.A(i, q), Rounder::nearest(f16)).code) : 0;
          b[static_cast<std::size_t>(q)] = q < d.k ? static_cast<std::uint32_t>(round_double(f16, d.B(q, j), Rounder::nearest(f16)).code) : 0;
        }
        std::uint64_t c = 0;
        for (std::int64_t q = 0; q < kp; q += 16) c = fused_dot(p_, a.data() + q, b.data() + q, 16, c);
        out[static_cast<std::size_t>(i * d.n + j)] = c;
      }
    return out;
  }

 private:
  FusedDotParams p_;
};

inline const CheckResult* check(const CaseResult& r, CheckKind k) { return find_check(r, k); }

/// Installs a card set for one test and removes it after.
struct Installed {
  explicit Installed(tc::CardSet s) { tc::install_cards(std::move(s)); }
  ~Installed() { tc::install_cards({}); }
};


}  // namespace fpcert::test_tc
