// cli/scale.hpp — scale-out for the commands that run many cases (docs/scale.md): `--shard I/N`
// (or `slurm`), `--devices all|0,1,...` (one worker process per GPU, the parent merges) and `--mpi`
// (ranks split the work, rank 0 merges). A command describes its plan and how to run a part of it;
// run_scaled does the rest, the same way for every command.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "results/results.hpp"

namespace fpcert::cli {

struct ScaleArgs {
  std::string shard;    ///< --shard I/N | slurm
  std::string devices;  ///< --devices all | 0,1,...
  bool mpi = false;     ///< --mpi
};
void add_scale_options(CLI::App* app, ScaleArgs& s);

/// One item of a run (one case of one kernel), named as its CaseResult will be.
struct PlanKey {
  std::string suite, case_id, kernel;
  std::string spec;  ///< what decides the item's inputs (a generator spec; "" where the name does)
  std::string key() const { return case_key(suite, case_id, kernel); }
};

/// A run's work: every item in a single run's order, and the units the partition deals out (items
/// that share their expensive part, e.g. one case's reference for several kernels, stay together).
struct RunPlan {
  std::vector<PlanKey> items;
  struct Unit {
    std::vector<std::size_t> items;  ///< indices into items
    double cost = 0;
    /// The workers of --devices deal it out as they free up (first come, first served) instead of by the cost
    /// partition: one kernel's cases with its mutation campaign, whose real cost the plan cannot estimate.
    bool claimable = false;
  };
  std::vector<Unit> units;
  std::string options;  ///< the command's options that decide verdicts (variant, baseline, ...), as text
  bool evidence = false;  ///< certify's: the run made whole applies the evidence rule (stamped: ShardStamp::evidence)
  std::vector<std::string> keys() const;
  /// A fingerprint of the run (items, their specs, options): shards of different runs do not merge.
  std::string fingerprint() const;
};

/// The items a part of the run covers: a fixed set (a shard, an MPI rank), or for a worker of --devices the fixed
/// set of its shard plus the claimable units of its parent's shard that it claims first (a file holding the worker's
/// shard, linked into the workers' claims folder under the unit's name: link() fails when another worker's is there):
/// every claimable unit is run by exactly one worker, whichever frees up first.
class Selection {
 public:
  explicit Selection(std::set<std::string> keys) : fixed_(std::move(keys)) {}
  /// A worker's: `fixed` (its shard's items outside claimable units), the claimable units among `eligible`.
  Selection(const RunPlan& plan, std::set<std::string> fixed, const std::vector<std::size_t>& eligible, std::string claims_dir,
            std::string worker);
  /// Whether this part runs the item (a claimable unit's items: only once claimed here; never claims).
  bool has(const std::string& key) const;
  /// has(), after claiming the item's unit when it is claimable and nobody holds it yet.
  bool claim(const std::string& key) const;

 private:
  std::set<std::string> fixed_;
  std::map<std::string, std::size_t> unit_of_;  ///< claimable items -> their unit
  mutable std::map<std::size_t, bool> mine_;    ///< claimable units asked about: claimed here or not
  std::string dir_, worker_;
};

/// The claims folder of a --devices run's workers (inside their marked folder) and the unit file names in it.
std::string claims_dir(const std::string& workers_dir);
std::string claim_file(const std::string& claims_dir, std::size_t unit);

/// Which items a part of the run covers (nullptr: all), whether to print rows as cases finish, and
/// where the partial JSON lines go (empty: nowhere).
struct PartContext {
  const Selection* selected = nullptr;
  bool print_rows = true;
  std::string json;  ///< cases are appended to json + ".partial.jsonl"
};

struct ScaledCommand {
  /// Make the run's plan (called once run_scaled knows which device this process has: a rank's GPU
  /// is chosen before anything can touch CUDA). A run without scale options never asks for it.
  std::function<RunPlan()> make_plan;
  RunPlan plan;  ///< run_scaled fills it from make_plan
  std::string json;  ///< --json of the command (the workers' files go beside it)
  /// Run a part of the plan.
  std::function<RunResult(const PartContext&)> execute;
  /// A result with no cases, as a run of this command would head it (kind, suite, kernels, notes).
  std::function<RunResult()> header;
  /// Print the verdicts, write --json/--junit/--html, give the exit code; print_rows: also the rows
  /// (a merged result, whose rows nobody saw yet).
  std::function<int(const RunResult&, bool print_rows)> finish;
};

/// Run the command as its scale options ask: the whole run, a shard, one worker per device, or an
/// MPI rank. Environment of a worker (set by its parent, docs/scale.md): FPCERT_WORKER_SHARD and
/// FPCERT_WORKER_JSON.
int run_scaled(const ScaleArgs& args, ScaledCommand cmd);

/// The devices of --devices, one entry per worker: "all" (CUDA_VISIBLE_DEVICES when set, else every GPU the driver
/// lists in /proc/driver/nvidia/gpus) or a list of ordinals (mapped through CUDA_VISIBLE_DEVICES when set), each with
/// ":N" for N workers sharing it; "host:N": N workers that see no GPU (entries "host").
std::vector<std::string> parse_devices(const std::string& spec);

/// The items of a plan that a shard covers (by key).
std::set<std::string> shard_selection(const RunPlan& plan, const std::string& shard_text);

}  // namespace fpcert::cli
