// oracle/order/tree_replay.hpp — one GEMM element computed in the order a summation tree states, with the
// roundings a TreeArith assumes (docs/reveal.md, "Replay"). `fpcert reveal --replay` runs a kernel on
// random inputs and requires these values bit for bit: the revealed tree plus the behaviour card
// (oracle/fused_dot.hpp) must be the whole story of the kernel's arithmetic.
//
// Node semantics (every partial sum is a value of `acc`):
//   two children, both partial sums      x + y, one rounding (acc_rounding)
//   a partial sum x and a product p      fma: RN(x + a b), one rounding; mul_add: RN(x + RN(a b))
//   two products p, q                    the running sum starts at +0: first one product, then the
//                                        other is added as above (first_low: the lower k first)
//   n > 2 children (a fused node)        the card's block model: fused_block(params, the products in
//                                        k order, C = the one partial-sum child or +0)
//   the root                             rounded into `out` (out_rounding)
// Products in scalar nodes use the operands as the multiplier sees them: the input codes' values
// rounded into a_operand/b_operand (operand_rounding) when those are narrower.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/round.hpp"
#include "oracle/order/sum_tree.hpp"

namespace fpcert {

enum class LeafJoin : std::uint8_t { Fma, MulAdd };
std::string_view to_string(LeafJoin j);

struct TreeArith {
  const Format* a = &f32;  ///< formats of the input codes
  const Format* b = &f32;
  const Format* a_operand = &f32;  ///< what a scalar node's multiplier sees
  const Format* b_operand = &f32;
  Rounding operand_rounding = Rounding::NearestEven;
  const Format* acc = &f32;
  Rounding acc_rounding = Rounding::NearestEven;
  LeafJoin leaf_join = LeafJoin::Fma;
  bool first_low = true;
  std::optional<FusedDotParams> fused;  ///< nodes of more than two children; absent: such nodes cannot be replayed
  std::string fused_source;             ///< where the block model comes from ("card: ...", "MMA-Sim Hopper model (assumed)")
  const Format* out = &f32;
  Rounding out_rounding = Rounding::NearestEven;

  /// One paragraph: what the replay assumes.
  std::string describe() const;
};

/// One operand line (a row of A or a column of B) decoded once for many elements.
struct ReplayLine {
  std::vector<std::uint32_t> codes;  ///< container codes (fused nodes read these)
  std::vector<double> values;        ///< operand values (scalar nodes)
};

class TreeReplay {
 public:
  /// InputError when the tree holds a node this arithmetic cannot evaluate (a fused node without a
  /// block model, one with more products than the model's fused length, or with two partial sums).
  TreeReplay(const SumTree& tree, TreeArith arith);
  const TreeArith& arith() const { return arith_; }
  ReplayLine line_a(std::span<const std::uint64_t> codes) const;
  ReplayLine line_b(std::span<const std::uint64_t> codes) const;
  /// The element's output code (a code of arith.out).
  std::uint64_t run(const ReplayLine& a, const ReplayLine& b) const;

 private:
  enum class Op : std::uint8_t { Add, JoinLeaf, TwoLeaves, Fused };
  struct Step {
    Op op;
    int x, y;                 // Add: slots; JoinLeaf: slot x, leaf y; TwoLeaves: first leaf x, second y; Fused: C slot x (-1: +0)
    std::uint32_t first = 0;  // Fused: products leaves_[first .. first + count)
    std::uint32_t count = 0;
  };
  double add(double x, double y) const;
  double join(double x, double a, double b) const;
  ReplayLine line(std::span<const std::uint64_t> codes, const Format& in, const Format& operand) const;

  TreeArith arith_;
  std::vector<Step> steps_;
  std::vector<int> leaves_;
  int k_ = 0;
  int root_leaf_ = -1;     // a tree of one product
  bool fast_f32_ = false;  // acc fp32 nearest-even, operands exact in float: host float arithmetic
  Rounder acc_r_{}, out_r_{};
};

}  // namespace fpcert
