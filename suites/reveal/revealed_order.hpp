// suites/reveal/revealed_order.hpp — certification with a revealed order (docs/reveal.md, "Certifying with a
// revealed order"): the summation tree of a kernel that declares no order, found from outside at a case's
// shape (suites/reveal/reveal.hpp) or read from a revelation's JSON, its arithmetic chosen and checked on random
// inputs, then used as the bitwise tier's emulation (suites/verdict/grade.hpp, OrderOverride).
//
// One revelation per (kernel, M, N, K), cached for the run: cuBLAS chooses its algorithm by shape, so a
// tree holds for the shape it was revealed at only. A shape whose revelation fails (refused probe values,
// a nondeterministic or data-dependent kernel, a class not revealed within the launch budget, a replay
// that disagrees with the kernel on random inputs) falls back to the declared tier, and says why.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "oracle/order/tree_replay.hpp"
#include "results/results.hpp"
#include "results/reveal.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/reveal/reveal.hpp"

namespace fpcert {

/// A revelation read from `fpcert reveal --json` (--order FILE).
struct OrderFile {
  std::string path;
  RevealResult reveal;
};
/// Read and check an order file: a successful revelation with the class of every element. InputError otherwise.
OrderFile read_order_file(const std::string& path);

struct OrderSourceOptions {
  bool reveal_all = false;                  ///< --order revealed: every kernel's order is revealed
  std::vector<std::string> reveal_kernels;  ///< KERNEL=revealed: these kernels' (and their mutants')
  std::vector<OrderFile> files;             ///< --order FILE: the order of one kernel at one shape
  std::int64_t max_launches = 20000;        ///< per class of elements: beyond it the class is not revealed (launch budget)
  int max_classes = 8;                      ///< classes searched per shape
  std::uint64_t check_samples = 4096;       ///< elements per class on random inputs that choose and check the replay's arithmetic
  std::vector<BlockModelChoice> cards;      ///< measured block models for fused nodes (else the published ones)
  std::uint64_t seed = 1;
  double timeout_ms = 120000;               ///< one launch
  /// --reveal-strict: a shape whose trees were revealed and verified but do not replay the kernel on random
  /// inputs fails its cases (the kernel contradicts its own observed order) instead of falling back.
  bool strict = false;
};

/// The order of one kernel at one shape, as the bitwise tier uses it.
struct RevealedOrder {
  OrderRecord record;                                   ///< what a case reports (used: whether a case may use it)
  RevealResult reveal;                                  ///< the revelation (trees, checks, costs)
  std::vector<std::shared_ptr<const TreeReplay>> replay;  ///< per class: the tree under the checked arithmetic
  /// Not used because the trees were revealed and verified but their replay disagrees with the kernel on
  /// random inputs (with OrderSourceOptions::strict its cases fail instead of falling back).
  bool refuted = false;
  /// C as the revealed trees compute it (suites/verdict/grade.hpp, OrderOverride::emulate); needs record.used.
  std::vector<std::uint64_t> emulate(const KernelTraits& t, const std::vector<double>& a, const std::vector<double>& b) const;
};

/// The orders of a run, revealed on first need and kept for its other cases.
class OrderSource {
 public:
  explicit OrderSource(OrderSourceOptions o) : opt_(std::move(o)) {}
  /// Whether this kernel's order comes from here (a mutant <kernel>~<fault> follows its kernel).
  bool applies(const std::string& kernel) const;
  /// The kernel's order at this shape: from a file for this kernel and shape, else revealed now (when
  /// asked for), else one that says why there is none (record.used false). Never throws for a kernel
  /// failure during the revelation: the case's own run meets it again.
  std::shared_ptr<const RevealedOrder> order_for(GemmKernel& kernel, DeviceApi& api, std::int64_t m, std::int64_t n, std::int64_t k);
  /// The grading input for a case: its name in the bitwise check, its emulation or why not.
  static OrderOverride as_override(const std::shared_ptr<const RevealedOrder>& o, const KernelTraits& t);
  const OrderSourceOptions& options() const { return opt_; }

 private:
  /// Whether this kernel's order is revealed here (not only read from a file).
  bool reveals(const std::string& kernel) const;

  OrderSourceOptions opt_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const RevealedOrder>> cache_;
};

}  // namespace fpcert
