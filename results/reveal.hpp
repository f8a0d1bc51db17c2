// results/reveal.hpp — what `fpcert reveal` found, as data (docs/reveal.md): the classes of output
// elements that share a summation tree, each tree with its summary, the checks made (determinism,
// dependence on the values, per-element verification, replay bit for bit) and what it cost (launches
// versus queries). suites/reveal/reveal.cpp fills it; reports/reveal_html.cpp renders it; JSON in between.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "oracle/order/sum_tree.hpp"
#include "results/results.hpp"

namespace fpcert {

/// An element where the kernel and the replay differ.
struct RevealDiff {
  int trial = 0;
  int row = 0, col = 0;
  std::uint64_t kernel = 0, replay = 0;  ///< output codes
  std::string note;                      ///< values and their distance, in words
};

/// The replay of one class's tree on random inputs.
struct RevealReplay {
  bool requested = false;            ///< --replay asked for it
  bool ran = false;
  std::string why_not;               ///< why it could not run (a node without a block model, ...)
  std::string assumed;               ///< the arithmetic the replay used (TreeArith::describe)
  std::vector<std::string> tried;    ///< every arithmetic tried on the first inputs, with its agreement
  std::string inputs;                ///< the input distributions and seed
  int trials = 0;
  std::uint64_t compared = 0, equal = 0;
  std::vector<RevealDiff> diffs;     ///< the first differing elements
  bool passed() const { return ran && compared > 0 && equal == compared; }
};

/// Output elements that answered every probe alike, and their tree.
struct RevealClass {
  std::int64_t elements = 0;
  std::string where;                              ///< "every element", "rows 0..63 x columns 0..127", ...
  std::vector<std::pair<int, int>> examples;      ///< a few of its elements (row, column)
  std::vector<std::int32_t> signature;            ///< its answers to the signature queries (-1: no count)
  bool revealed = false;
  std::string why;                                ///< when not revealed
  SumTree tree;
  std::string headline;                           ///< the tree's summary (oracle/order/sum_tree.hpp)
  std::vector<std::string> details;
  int fused_width = 0;
  std::string card_check;                         ///< the fused width against the behaviour card's fused length
  int rounds = 0;                                 ///< query rounds of the search
  std::int64_t queries = 0;                       ///< pairs asked
  std::int64_t verified = 0, verify_mismatches = 0;  ///< random pairs answered per element, against the tree
  std::vector<std::string> mismatches;            ///< the first few, in words
  RevealReplay replay;
};

struct RevealResult {
  std::string kernel, description, backend, traits;
  std::int64_t m = 0, n = 0, k = 0;
  int focus_row = 0, focus_col = 0;
  int focus_class = -1;                 ///< the class of the focus element
  /// revealed | refused | nondeterministic | inconsistent | failed (a kernel or device failure)
  std::string status;
  std::string message;                  ///< one line: what happened
  std::string plan;                     ///< the probe values and why (suites/reveal/reveal_probe.hpp)
  std::string mode;                     ///< outer | paired
  std::int64_t units_per_pass = 0;
  int passes = 0;
  bool deterministic = true;
  std::string determinism;              ///< how it was checked and what came back
  std::string value_check;              ///< the same queries with other probe values
  std::vector<std::pair<int, int>> signature_pairs;
  std::vector<RevealClass> classes;     ///< largest first
  /// The class of every element, row-major m x n (-1: none); empty when not known (an older file). JSON:
  /// "element_classes", runs [[class, count], ...] in row-major order.
  std::vector<int> class_of;
  std::int64_t launches = 0;            ///< GEMM launches, every phase
  std::int64_t queries = 0;             ///< pairs (x, y) answered and used
  std::vector<std::pair<std::string, std::int64_t>> launches_by_phase;
  std::string complexity;               ///< launches versus queries, in words
  double seconds = 0, kernel_seconds = 0;
  Environment env;

  /// Every class revealed, consistent, and (where it ran) replayed bit for bit.
  bool passed() const;
};

nlohmann::json to_json(const RevealResult& r);
/// InputError on a malformed object.
RevealResult reveal_from_json(const nlohmann::json& j);

}  // namespace fpcert
