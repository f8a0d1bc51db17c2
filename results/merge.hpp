// results/merge.hpp — sibling shards of one run merged into the result the run would have given in
// one process (docs/scale.md): `fpcert merge`, the parent of `--devices` workers, MPI rank 0.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace fpcert {

/// One shard's results and the name to blame when it does not fit (a file name, "device 1", "rank 3").
struct NamedRun {
  std::string name;
  RunResult run;
};

/// Merge the shards J/M of one parent shard (or I/N of the whole run). Refuses mixtures with an
/// InputError that names every problem and the shard it comes from: a result that is not a shard,
/// a different kind, suite, kernel list, plan, fpcert version, build or device, shards that differ
/// in their parent or count, a shard given twice or missing, a case outside the plan, in two shards
/// or (when the merge completes the run) in none. The merged result holds the cases in the plan's order, the first shard's
/// environment, every shard's notes and mutation scores (in a single run's order), and the parent's stamp (none when the
/// merge completes the run). What certify decides over the whole run is not applied here (cli/run_outputs.hpp, complete_certify).
RunResult merge_shards(std::vector<NamedRun> parts);

}  // namespace fpcert
