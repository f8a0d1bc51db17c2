// cli/cmd/cmd_merge.cpp — `fpcert merge`: the results of a run's shards (--shard I/N, each with --json)
// merged into the results, JUnit and HTML that the run in one process would have written; mixtures
// are refused, each named (docs/scale.md).
#include <fmt/format.h>

#include <memory>

#include "base/output_path.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/run_outputs.hpp"
#include "results/merge.hpp"
#include "results/results_json.hpp"

namespace fpcert::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  OutputPaths out;
};

int run_merge(const MergeArgs& a) {
  // Outputs checked before anything is read (base/output_path.hpp): none of them one of the shards' files.
  check_outputs({{"--output", a.out.json}, {"--junit", a.out.junit}, {"--html", a.out.html}}, a.inputs);
  std::vector<NamedRun> parts;
  for (const auto& p : a.inputs) parts.push_back({p, read_results(p)});  // InputError names the file: exit 2
  const bool evidence = !parts.empty() && parts.front().run.shard.evidence;
  RunResult merged = merge_shards(std::move(parts));  // a mixture: exit 2, every problem named
  if (!merged.shard.present()) complete_certify(merged, evidence);  // the run is whole: what certify decides over it
  if (merged.shard.present())
    fmt::print("merged {} shard file(s) into shard {} (merge it with its siblings for the whole run)\n", a.inputs.size(), merged.shard.shard);
  else
    fmt::print("merged {} shard file(s): the whole run, {} case(s)\n", a.inputs.size(), merged.cases.size());
  return write_run_outputs(merged, a.out, true);
}

}  // namespace

void add_merge(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("merge", "Merge the results of a run's shards (--shard I/N --json) into the run's results, JUnit and HTML");
  auto a = std::make_shared<MergeArgs>();
  app->add_option("results", a->inputs, "The shards' results files (--json of each shard)")->required();
  app->add_option("-o,--output,--json", a->out.json, "Write the merged results JSON here")->required()->check(output_path());
  app->add_option("--junit", a->out.junit, "Write JUnit XML here")->check(output_path());
  app->add_option("--html", a->out.html, "Write a self-contained HTML report here")->check(output_path());
  reg.push_back({app, [a] { return run_merge(*a); }});
}

}  // namespace fpcert::cli
