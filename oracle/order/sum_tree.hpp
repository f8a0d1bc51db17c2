// oracle/order/sum_tree.hpp — a summation tree: the order in which one GEMM element's K products were added
// (docs/reveal.md). Leaves are the products p_0 .. p_{K-1}; an internal node is one rounded sum of its
// children: two children for an add or an FMA, more for a fused multi-term node (a tensor-core block:
// w products and the running sum, one rounding). `fpcert reveal` recovers such a tree from a black-box
// kernel; this file holds the tree as data, the queries the revelation asks of it (the size of the
// smallest subtree holding two leaves), known orders to compare with, and a summary a reader can use.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fpcert {

struct SumTree {
  int k = 0;                            ///< leaves 0 .. k-1: the products p_0 .. p_{k-1}
  std::vector<std::vector<int>> nodes;  ///< internal node k + t: the ids of its children (at least two)
  int root = -1;                        ///< the root's id (leaf 0 when k == 1)

  bool is_leaf(int id) const { return id < k; }
  int size() const { return k + static_cast<int>(nodes.size()); }
  const std::vector<int>& children(int id) const { return nodes[static_cast<std::size_t>(id - k)]; }
  /// Append an internal node; returns its id.
  int add(std::vector<int> children);
};

/// Empty when `t` is a tree over the leaves 0 .. k-1 (every leaf and node the child of exactly one node,
/// except the root; every internal node with at least two children); else what is wrong.
std::string check_tree(const SumTree& t);
/// Children ordered by their smallest leaf, node ids in post-order: two trees describe the same order
/// of operations exactly when their canonical forms are equal.
SumTree canonical(const SumTree& t);
bool same_order(const SumTree& a, const SumTree& b);
/// Leaves under every id (size() entries).
std::vector<int> subtree_sizes(const SumTree& t);
/// Parent of every id (-1 for the root).
std::vector<int> parents(const SumTree& t);

/// The FPRev query on a known tree: L(x, y) = the number of leaves of the smallest subtree holding
/// leaves x and y (Xie et al., USENIX ATC 2025). Euler tour and a sparse table: O(size log size) to
/// build, O(1) per query.
class LcaIndex {
 public:
  explicit LcaIndex(const SumTree& t);
  int lca(int x, int y) const;
  int lca_size(int x, int y) const { return size_[static_cast<std::size_t>(lca(x, y))]; }

 private:
  std::vector<int> first_, euler_, depth_, size_;
  std::vector<std::vector<int>> sparse_;  // sparse_[j][i]: the Euler position of least depth in [i, i + 2^j)
};

// ---- known orders (docs/reveal.md, "Known orders"): the trees of the loops they name ----
/// ((p_0 + p_1) + p_2) + ... : one product per step, k ascending (an FMA chain from +0).
SumTree sequential_tree(int k);
/// Recursive halving: the first ceil(n/2) terms, the rest, one add joining them.
SumTree pairwise_tree(int k);
/// A chain of fused nodes: the first `width` products in one node, then each node the previous result
/// and the next `width` products (the last node takes what is left): a tensor-core K-loop.
SumTree fused_chain_tree(int k, int width);
/// How a part of K, and the parts among themselves, are summed.
enum class PartOrder : std::uint8_t { Sequential, Pairwise };
/// K cut into contiguous chunks of `chunk` products (the last shorter), each summed by `inner` from its
/// first product (or a fused chain of `inner_width` when inner_width > 1), the partials joined by
/// `outer` (sequential: ((P_0 + P_1) + P_2) ...). Blocked and split-K loops both take this form.
SumTree partitioned_tree(int k, int chunk, PartOrder inner, PartOrder outer, int inner_width = 1);

// ---- summary ----
/// A maximal chain of the tree: a node whose internal children number at most one, its internal child
/// if that is one too, and so on down. Every leaf belongs to exactly one part's steps (a product added
/// in a combining node directly is a part of one step).
struct TreePart {
  int root = -1;                   ///< the chain's top node (or the leaf)
  std::vector<std::vector<int>> steps;  ///< the products each node adds, first node first, each ascending
  std::uint64_t shape = 0;         ///< shape hash, invariant under shifting every leaf index by one amount
};
struct TreeSummary {
  std::string headline;            ///< one line: "sequential chain over k = 0..2047 ascending (one rounding per product)"
  std::vector<std::string> details;  ///< the parts, how they combine, node widths
  int height = 0;                  ///< longest root-to-leaf path, in nodes
  std::vector<std::pair<int, int>> widths;  ///< (children, nodes with that many), ascending
  int fused_width = 0;             ///< products per fused node when the tree's nodes with > 2 children add one
                                   ///< running sum and w products each (0: none, -1: mixed)
  std::vector<TreePart> parts;     ///< the maximal chains, by smallest leaf
  std::string known;               ///< the name of the known order it equals ("sequential", "pairwise", ...), or ""
};
TreeSummary summarize(const SumTree& t);

/// A drawing of the tree that stays small for any K: chains show their first and last nodes around an
/// ellipsis, runs of like siblings their first and last, contiguous products one box "p_a..p_b".
struct DisplayNode {
  enum class Kind : std::uint8_t { Node, Leaf, Leaves, Ellipsis, Subtree } kind = Kind::Node;
  std::string label;               ///< "+", "Σ17", "p_3", "p_16..p_31", "... 4093 more nodes", "subtree of 512"
  std::vector<DisplayNode> children;
};
DisplayNode display_tree(const SumTree& t, int max_boxes = 60);

// ---- JSON: {"k": K, "root": id, "nodes": [[children], ...]} (leaves implicit: ids 0..K-1) ----
nlohmann::json to_json(const SumTree& t);
/// InputError on a malformed object or one that is not a tree (check_tree).
SumTree sum_tree_from_json(const nlohmann::json& j);

}  // namespace fpcert
