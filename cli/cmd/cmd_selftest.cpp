// cli/cmd/cmd_selftest.cpp — `fpcert selftest`: the framework tests itself. Every built-in CPU model (every
// format family, the split emulations, and correct models in other summation orders) must pass the
// suite, and every fault injected into it (suites/ops/gemm/fault_injectors.hpp) must be refused for its own
// fault (docs/mutation.md).
#include <algorithm>
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/shard.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/mutate.hpp"
#include "cli/options.hpp"
#include "reports/mutation_report.hpp"
#include "results/results_json.hpp"
#include "suites/run/environment.hpp"
#include "suites/mutation/faults.hpp"
#include "suites/mutation/mutation.hpp"

namespace fpcert::cli {
namespace {

struct SelftestArgs {
  std::string suite = "certify";
  std::vector<std::string> kernels;  ///< default: every built-in CPU model
  std::string faults, json, shard;   ///< shard "I/N": the models whose index is I modulo N (ctest runs the shards side by side)
  std::string known;                 ///< --known-survivors FILE: the survivors the suite cannot yet see, with why
  bool isolate = false;
};

/// The known survivors: "<model> <fault id>  # why" per line (blank lines and lines starting with '#'
/// skipped). Each needs its reason: a survivor is a gap in the suite, written down, not hidden.
std::map<std::pair<std::string, std::string>, std::string> read_known_survivors(const std::string& path) {
  std::map<std::pair<std::string, std::string>, std::string> r;
  if (path.empty()) return r;
  std::istringstream in(read_input_file(path, std::size_t{1} << 20, "--known-survivors"));
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto hash = line.find('#');
    std::istringstream fields(line.substr(0, hash));
    std::string model, fault, extra;
    fields >> model >> fault >> extra;
    const std::string why = hash == std::string::npos ? "" : line.substr(line.find_first_not_of(" #", hash));
    if (model.empty() || fault.empty() || !extra.empty() || why.empty())
      throw InputError(fmt::format("--known-survivors {}:{}: expected '<model> <fault id>  # why', got '{}'", path, no, line));
    if (!find_fault(fault)) throw InputError(fmt::format("--known-survivors {}:{}: unknown fault '{}' (valid: {})", path, no, fault, fault_ids()));
    r[{model, fault}] = why;
  }
  return r;
}

/// The models of shard "I/N", numbered from 1 as every --shard of fpcert (base/shard.hpp): the models
/// whose 0-based index is I - 1 modulo N (all of them when empty). Throws InputError for a malformed
/// shard, a nested one, or a shard that holds no model (nothing checked is no pass).
std::vector<std::string> shard_of(const std::vector<std::string>& all, const std::string& shard) {
  if (shard.empty()) return all;
  const Shard s = parse_shard(shard);
  if (s.levels.size() != 1) throw InputError("--shard: expected I/N (1 <= I <= N), got '" + shard + "'");
  const auto [i, n] = s.levels.front();
  std::vector<std::string> r;
  for (std::size_t x = static_cast<std::size_t>(i - 1); x < all.size(); x += static_cast<std::size_t>(n)) r.push_back(all[x]);
  if (r.empty())
    throw InputError(fmt::format("--shard {}: holds no model (there are {}); give N <= {}", shard, all.size(), all.size()));
  return r;
}

int run_selftest(const SelftestArgs& a) {
  const SuiteInfo* suite = find_suite(a.suite);
  if (!suite) throw InputError(fmt::format("unknown suite '{}' (valid: {})", a.suite, suite_names()));
  // The models of every operation the suite's level reaches (GEMM's certify -> reductions on reduce, ..., attention
  // backward on attention_backward). Elementwise models are not run here (their own suites, docs/elementwise.md).
  std::vector<Operation> ops = {suite->operation};
  for (const Operation op : {Operation::Reduction, Operation::Softmax, Operation::Norm, Operation::Attention, Operation::SoftmaxBackward,
                             Operation::NormBackward, Operation::AttentionBackward})
    if (suite->operation == Operation::Gemm && !suite_at_level(suite->name, op).empty()) ops.push_back(op);
  std::vector<std::string> kernels;
  for (const Operation op : ops)
    for (auto& k : expand_kernel_list(a.kernels, op))
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(std::move(k));
  if (a.kernels.empty())
    for (const Operation op : ops)
      for (const auto& k : kernel_registry())
        if (k.backend == Backend::Cpu && k.operation == op && !k.mutant && k.origin.empty()) kernels.push_back(k.name);
  kernels = shard_of(kernels, a.shard);
  if (kernels.empty()) throw InputError("no model to check: --kernel selected none (fpcert kernels lists them)");
  MutationOptions mo;
  mo.faults = parse_fault_list(a.faults);
  mo.run.isolate = a.isolate;
  mo.run.command = command_line();
  mo.on_progress = progress_to_terminal();
  RunResult run;
  run.kind = RunKind::Mutation;
  run.suite = suite->name;
  run.kernels = kernels;
  run.env = make_environment(command_line(), nullptr);
  const auto known = read_known_survivors(a.known);
  int bad = 0, mutants = 0, known_seen = 0;
  fmt::print("selftest on suite {}: every model must pass, every fault injected into it be refused for its own fault\n", suite->name);
  std::fputs(mutation_score_header().c_str(), stdout);
  for (const std::string& k : kernels) {
    // Each model on the suite of its own operation at this level (a reduction model: reduce for certify).
    const KernelInfo* info = find_kernel_info(k);
    const Operation op = info ? info->operation : suite->operation;
    const SuiteInfo* own = op == suite->operation ? suite : find_suite(suite_at_level(suite->name, op));
    if (!own) throw InputError(fmt::format("model {} is a {} kernel and suite {} has no counterpart for it: give --suite certify or quick", k, to_string(op), suite->name));
    MutationScore s = run_mutation(*own, k, mo);
    clear_progress();
    std::fputs(mutation_score_row(s).c_str(), stdout);
    // A model is misjudged when it fails a case, when a mutant escapes that the known-survivor list does
    // not name, or when a listed survivor is now killed (the list only shrinks: remove the line).
    bool ok = s.invalid_cases.empty();
    for (const std::string& c : s.invalid_cases) fmt::print("    FAILED: the unmutated model did not pass {}\n", c);
    for (const MutantResult& m : s.mutants) {
      const bool missed = m.outcome == MutantOutcome::Survived || m.outcome == MutantOutcome::KilledOther;
      const auto it = known.find({k, m.fault});
      if (missed && it != known.end()) {
        ++known_seen;
        fmt::print("    KNOWN: {} ({}): {}\n", m.fault, to_string(m.outcome), it->second);
      } else if (missed) {
        ok = false;
        fmt::print("    MISSED: {} ({}): {}\n", m.fault, to_string(m.outcome), m.detail);
      } else if (it != known.end()) {
        ok = false;
        fmt::print("    STALE: {} is listed as a known survivor but was {}: remove it from {}\n", m.fault, to_string(m.outcome), printable(a.known));
      }
    }
    if (!ok) ++bad;
    mutants += s.total();
    std::fflush(stdout);
    run.mutation.push_back(std::move(s));
  }
  if (!a.json.empty()) {
    write_file_atomic(a.json, to_json(run).dump(2) + "\n");
    fmt::print("results: {}\n", printable(a.json));
  }
  if (bad) {
    fmt::print("SELFTEST FAILED: {} of {} model(s) misjudged (suite {})\n", bad, kernels.size(), suite->name);
    return kExitGateFailed;
  }
  if (mutants == 0) {  // an empty selection is no pass: the faults chosen apply to none of the models
    fmt::print("SELFTEST FAILED: no mutant applied to the {} model(s) selected (--kernel, --fault): nothing was checked\n", kernels.size());
    return kExitGateFailed;
  }
  fmt::print("SELFTEST PASSED: {} models passed; {} mutants, {} killed for their own fault, {} known survivor(s) listed in {} (suite {})\n",
             kernels.size(), mutants, mutants - known_seen, known_seen, a.known.empty() ? "no file" : a.known, suite->name);
  return kExitPass;
}

}  // namespace

void add_selftest(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("selftest", "Every built-in CPU model must pass and every fault injected into it be refused for its own fault");
  auto a = std::make_shared<SelftestArgs>();
  app->add_option("--suite", a->suite, "Suite to run")->capture_default_str();
  app->add_option("--kernel", a->kernels, "Only these models (default: every built-in CPU model)");
  app->add_option("--fault", a->faults, "Only these faults, comma-separated (fpcert mutate --list)");
  app->add_option("--json", a->json, "Write the mutation scores as JSON")->check(output_path());
  app->add_flag("--isolate", a->isolate, "Run each case in a child process");
  app->add_option("--shard", a->shard, "I/N (1 <= I <= N, as every --shard): only the models whose position in the list (from 1) is I modulo N");
  app->add_option("--known-survivors", a->known,
                  "File of '<model> <fault id>  # why' lines: survivors the suite cannot see yet, reported as KNOWN; a listed one that is killed fails")
      ->check(path_text());
  reg.push_back({app, [a] { return run_selftest(*a); }});
}

}  // namespace fpcert::cli
