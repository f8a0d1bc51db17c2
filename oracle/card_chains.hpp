// oracle/card_chains.hpp — the bitwise tier's tensor-core card chains as one job an engine with a device may compute
// (docs/tensor_cores.md, "The card emulation on the GPU"). No CUDA here.
//
// A kernel on tensor cores runs, per output element and per K step of its instruction, a few instructions (one for a
// plain MMA kernel, 3 to 9 slice products for the split schemes), each a fused_dot chained from the previous step's D
// in its accumulator. Where the card's parameters take fused_dot's fast path (fused_detail::fast_applies, c_join
// in-block), every block is fast_block's int64 arithmetic: the same source (oracle/fused_dot_fast.hpp) runs on the
// device, one thread per element. A block the fast path does not decide (an Inf or NaN operand, a result outside
// fp32's normal range) marks its element `general`: the host computes that element again by fused_dot, which is the
// definition; every other element is fused_dot's D bit for bit by construction (tests/suites/card_chains_gpu_test.cpp
// holds the two equal on random, adversarial and special inputs).
#pragma once

#include <cstdint>

#include "oracle/fused_dot_fast.hpp"

namespace fpcert {

/// One instruction of each K step: A's slice a_slice times B's slice b_slice, chained in accumulator `slot` (0 or 1).
struct CardChainTerm {
  int a_slice = 0, b_slice = 0, slot = 0;
};
inline constexpr int kCardChainMaxSlices = 4;
inline constexpr int kCardChainMaxTerms = 16;
/// The most inputs of one instruction the device path takes (fused_dot's fast path takes 64).
inline constexpr int kCardChainMaxStep = 64;

/// Per element (i, j) of an m x n output: both slots from +0; for each K step q (0, step, ..., kp - step) and each term in
/// order, slot = fused_dot(card, A[a_slice] row i [q, q + step), B[b_slice] column j [q, q + step), step, slot). The
/// result: slot 1 when `add_slots` is false; else RN_f32(slot 0 + slot 1), one fp32 addition (the split schemes: the
/// small terms' chain plus the leading term's); with promote_every, slot 1 promoted into fp32 (below).
struct CardChains {
  explicit CardChains(const FusedDotParams& p) : block(fused_detail::fast_block_params(p)), a_dec(p.a), b_dec(p.b) {}
  fused_detail::FastBlockParams block;
  fused_detail::Decoder a_dec, b_dec;
  int step = 16;
  std::int64_t m = 0, n = 0, kp = 0;  ///< kp: K zero-padded to a multiple of step
  int slices = 1;
  const std::uint32_t* a[kCardChainMaxSlices] = {};  ///< operand codes, row i at a[s] + i kp
  const std::uint32_t* b[kCardChainMaxSlices] = {};  ///< operand codes, column j at b[s] + j kp
  int terms = 0;
  CardChainTerm term[kCardChainMaxTerms];
  bool add_slots = false;
  /// > 0: slot 1's chain is promoted every promote_every inputs (a multiple of step): outer = RN_f32(outer + slot 1),
  /// slot 1 restarts from +0, and the result is RN_f32(outer + slot 1) at the end (outer from +0; a tensor-core kernel
  /// promoting its MMA accumulator into fp32 registers). Not with add_slots.
  long long promote_every = 0;
  /// Instruction products of the job: m n kp terms (an engine's size threshold).
  double products() const { return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(kp) * terms; }
};

/// Whether a card's parameters and an instruction of `step` inputs can be a CardChains job: fused_dot's fast path with
/// c_join in-block, step <= kCardChainMaxStep.
bool card_chains_apply(const FusedDotParams& p, int step);

}  // namespace fpcert
