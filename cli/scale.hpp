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
/// every claimable unit is run by exactly one worker, whichever frees up first. Workers walk the claimable units in
/// the parent's claim order (costliest first, claim_order()), so that the longest units do not start last.
class Selection {
 public:
  explicit Selection(std::set<std::string> keys) : fixed_(std::move(keys)) {}
  /// A worker's: `fixed` (its shard's items outside claimable units), the claimable units among `eligible`, to be
  /// claimed in `order` (unit indices; units not in it after those in it, in plan order).
  Selection(const RunPlan& plan, std::set<std::string> fixed, const std::vector<std::size_t>& eligible, std::string claims_dir,
            std::string worker, const std::vector<std::size_t>& order = {});
  /// Whether this part runs the item (a claimable unit's items: only once claimed here; never claims).
  bool has(const std::string& key) const;
  /// has(), after claiming the item's unit when it is claimable and nobody holds it yet.
  bool claim(const std::string& key) const;
  /// Where the item's unit comes in the claim order (0 first); items outside claimable units: after every unit.
  /// A command walks its claimable work sorted by this rank (stable: plan order where ranks tie).
  std::size_t rank(const std::string& key) const;

 private:
  std::set<std::string> fixed_;
  std::map<std::string, std::size_t> unit_of_;  ///< claimable items -> their unit
  std::map<std::size_t, std::size_t> rank_;     ///< claimable units -> their place in the claim order
  mutable std::map<std::size_t, bool> mine_;    ///< claimable units asked about: claimed here or not
  std::string dir_, worker_;
};

/// The seconds each claimable unit took in earlier runs on this machine (like CTest's cost data): the unit's cases'
/// wall_seconds plus its kernels' mutation campaigns, keyed by "suite<TAB>kernel". Kept in FPCERT_COST_FILE, else
/// $XDG_CACHE_HOME/fpcert/unit-seconds.json, else ~/.cache/fpcert/unit-seconds.json; FPCERT_COST_FILE set empty:
/// none. They decide only the order in which workers claim units, never a result (docs/scale.md, "Claims").
std::string cost_file();
std::map<std::string, double> read_unit_seconds(const std::string& path, std::string* problem = nullptr);
/// `history` with the units it lacks taken from fpcert's own measured run of the main job (cli/unit_prior.cpp: the
/// built-in CUDA kernels' certify units on an H100 host), so that a machine with no history of its own (a fresh CI
/// runner) does not claim a long unit last. `from_prior`: how many came from there.
std::map<std::string, double> with_built_in_prior(std::map<std::string, double> history, std::size_t* from_prior = nullptr);
/// The history key of a unit ("suite<TAB>kernel" of its first item; a certify unit holds one kernel's cases).
std::string unit_history_key(const RunPlan& plan, std::size_t unit);
/// The claimable units among `units`, costliest first: a unit's estimate is its seconds in `history`, else its plan
/// cost times the median seconds per plan cost of the units `history` knows (none known: plan cost); ties keep plan
/// order. `known`: how many units history knew.
std::vector<std::size_t> claim_order(const RunPlan& plan, const std::vector<std::size_t>& units,
                                     const std::map<std::string, double>& history, std::size_t* known = nullptr);
/// The seconds each claimable unit of a finished run took (the history claim_order reads back).
std::map<std::string, double> unit_seconds(const RunPlan& plan, const std::vector<std::size_t>& units, const RunResult& run);

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
