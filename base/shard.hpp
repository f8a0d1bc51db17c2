// base/shard.hpp — splitting a run's work deterministically (docs/scale.md): the shard spec
// (`--shard I/N`, nested `I/N:J/M` for the workers inside a shard, `slurm` from a job array) and the
// cost-balanced partition that maps every unit of work to exactly one shard.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fpcert {

/// One level of a shard: part `index` (1-based) of `count`.
struct ShardLevel {
  int index = 1;
  int count = 1;
  bool operator==(const ShardLevel&) const = default;
};

/// A shard of a run: the levels from the outermost (`--shard`) to the innermost (a worker of a
/// `--devices` parent, or an MPI rank). No levels: the whole run.
struct Shard {
  std::vector<ShardLevel> levels;
  bool whole() const { return levels.empty(); }
  /// "2/3", "2/3:1/2"; "" for the whole run.
  std::string text() const;
  /// This shard with one more level inside it.
  Shard within(int index, int count) const;
  /// This shard without its innermost level (what merging its siblings gives).
  Shard parent() const;
  bool operator==(const Shard&) const = default;
};

/// Reads an environment variable (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup process_env();

/// Parse a shard spec: "I/N" (1 <= I <= N), nested levels joined by ':', or "slurm": one level from
/// SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN (task ids need not start
/// at 0 or 1; an array with a step, `--array=0-9:2`, is refused: its ids are not consecutive).
/// Throws InputError with the reason.
Shard parse_shard(std::string_view spec, const EnvLookup& env = process_env());

/// The deterministic cost-balanced partition: bin (0-based, < bins) of each unit. Longest
/// processing time first (Graham 1969: within 4/3 of the optimal makespan): units by decreasing
/// cost, ties by position, each into the least-loaded bin, ties to the lowest bin. The result
/// depends only on the costs, so every process that plans the same run agrees on it.
std::vector<int> partition_by_cost(const std::vector<double>& costs, int bins);

/// The units (indices into costs) that a shard covers, in their original order: the partition is
/// applied level by level, each level splitting the units its outer level kept.
std::vector<std::size_t> shard_units(const std::vector<double>& costs, const Shard& shard);

}  // namespace fpcert
