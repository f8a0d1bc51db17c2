// suites/reveal/reveal.hpp — order revelation: the summation tree of a black-box GEMM kernel's elements, found
// with FPRev's queries (Xie et al., USENIX ATC 2025) asked many per launch, checked, and replayed bit for
// bit (docs/reveal.md).
//
// The search (search_tree) keeps FPRev's recursion — a pivot's answers L(pivot, z) name its ancestors
// and split the rest into the subtrees hanging off them — but runs it breadth first: every pending
// subproblem of a round asks its pairs in the same launches, and a small subproblem asks all its pairs
// at once instead of recursing. The pairs come from a PairSource: on a GEMM, one launch answers many
// (suites/reveal/reveal_probe.hpp); on a known tree (the tests), an LCA index.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/fused_dot.hpp"
#include "oracle/order/sum_tree.hpp"
#include "oracle/order/tree_replay.hpp"
#include "results/reveal.hpp"
#include "suites/reveal/reveal_probe.hpp"

namespace fpcert {

/// Every pair (x, y), x in rows, y in cols, x != y.
struct PairBlock {
  std::vector<int> rows, cols;
};

/// Answers L(x, y) by unordered pair; kGarbage where a launch gave no count.
class PairAnswers {
 public:
  void put(int x, int y, std::int32_t l) { map_[key(x, y)] = l; }
  /// The answer, or -2 when the pair was never asked.
  std::int32_t get(int x, int y) const {
    const auto it = map_.find(key(x, y));
    return it == map_.end() ? -2 : it->second;
  }
  bool has(int x, int y) const { return map_.count(key(x, y)) != 0; }
  std::size_t size() const { return map_.size(); }
  const std::unordered_map<std::uint64_t, std::int32_t>& all() const { return map_; }
  static std::pair<int, int> unkey(std::uint64_t k) { return {static_cast<int>(k >> 32), static_cast<int>(k & 0xFFFFFFFFu)}; }

 private:
  static std::uint64_t key(int x, int y) {
    if (x > y) std::swap(x, y);
    return (static_cast<std::uint64_t>(x) << 32) | static_cast<std::uint32_t>(y);
  }
  std::unordered_map<std::uint64_t, std::int32_t> map_;
};

class PairSource {
 public:
  virtual ~PairSource() = default;
  /// Answer every pair of every block into `out`.
  virtual void answer(const std::vector<PairBlock>& blocks, PairAnswers& out) = 0;
  /// The largest group asked for all its pairs at once (smaller groups never recurse).
  virtual int all_pairs_limit() const = 0;
};

struct TreeSearch {
  bool ok = false;
  SumTree tree;
  std::string why;  ///< when not ok: the first answer no tree explains
  int rounds = 0;   ///< query rounds (each one batch of launches)
  std::int64_t queries = 0;
};

/// Recover the tree over k products from a source's answers; refuses (ok = false, why) answers that
/// no tree gives: a count outside [2, bound], an ancestor whose size is not its number of leaves,
/// pairs of one node that disagree.
TreeSearch search_tree(int k, PairSource& src, const std::function<void(const std::string&)>& log = {});

/// A block model (the fused nodes' arithmetic) the replay may assume, and where it comes from.
struct BlockModelChoice {
  std::string source;  ///< "card mma_f16_f32 (NVIDIA H200 (sm_90))", "MMA-Sim's Hopper model of wgmma_f16_f32 (published, not measured here)"
  FusedDotParams params;
};
/// The models for a kernel's fused nodes: the given cards whose input and accumulator formats match the
/// kernel's, else the published Hopper models of matching instructions (kernels/tc/probe.hpp).
std::vector<BlockModelChoice> block_models_for(const KernelTraits& t, const std::vector<BlockModelChoice>& cards);
/// The block models of a cards file (`fpcert probe tensor-cores --json`, or one card): every floating-point
/// card that passed, named by instruction and device. InputError when unreadable or holding none.
std::vector<BlockModelChoice> block_models_from_cards(const std::string& path);

struct RevealOptions {
  std::int64_t m = 0, n = 0, k = 0;
  int focus_row = 0, focus_col = 0;
  std::uint64_t seed = 1;
  int signatures = 12;          ///< queries every element answers (classes of elements)
  int verify_launches = 4;      ///< launches of random pairs per element after the search
  int max_classes = 8;          ///< classes revealed (the focus element's first, then the largest)
  std::int64_t max_launches = 20000;  ///< per class; beyond it the class is left unrevealed
  double timeout_ms = 120000;   ///< one launch
  PlanLimits limits;
  bool replay = false;
  std::uint64_t replay_samples = 1'000'000;  ///< elements compared per class (whole trials)
  int replay_trials_max = 64;
  std::vector<BlockModelChoice> cards;       ///< measured cards (--card); else published models
  std::function<void(const std::string&)> log;
};

/// The whole revelation of a kernel at one shape. Throws InputError when the shape is refused (probe
/// values cannot fit the formats) or bad, DeviceError / NotSupportedError from the kernel.
RevealResult reveal_order(GemmKernel& kernel, DeviceApi& api, const RevealOptions& opt);

/// Replay every revealed class of r on random inputs (fills each class's replay); needs the same shape.
/// `class_of` maps element r * n + c to its class (-1: none). `chosen`, when given, receives per class the
/// arithmetic the replay ran (nullopt where it did not run).
void replay_classes(GemmKernel& kernel, DeviceApi& api, RevealResult& r, const std::vector<int>& class_of, const RevealOptions& opt,
                    std::vector<std::optional<TreeArith>>* chosen = nullptr);

}  // namespace fpcert
