// cli/cmd/cmd_certify.cpp — `fpcert certify` (the pre-merge gate) and `fpcert run-suite` (experiments
// side by side): run a suite, print rows as cases finish, write JSON / JUnit, exit per DESIGN.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <vector>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/interrupt.hpp"
#include "base/output_path.hpp"
#include "base/watchdog.hpp"
#include "cli/commands.hpp"
#include "kernels/device/exact_gemm_cuda.hpp"
#include "cli/config.hpp"
#include "cli/exit_codes.hpp"
#include "cli/mutate.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "cli/progress.hpp"
#include "cli/run_outputs.hpp"
#include "cli/scale.hpp"
#include "cli/suite_plan.hpp"
#include "reports/experiment_text.hpp"
#include "cli/tc_cards.hpp"
#include "reports/html/html.hpp"
#include "reports/junit.hpp"
#include "reports/mutation_report.hpp"
#include "reports/table.hpp"
#include "generators/generate.hpp"
#include "plugin/loader.hpp"
#include "results/compare.hpp"
#include "results/results_json.hpp"
#include "suites/verdict/grade.hpp"
#include "suites/ops/conversion/conversion_suite.hpp"
#include "suites/run/environment.hpp"
#include "suites/run/isolate.hpp"
#include "suites/ops/gemm/fault_injectors.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/experiments/presets.hpp"
#include "suites/reveal/revealed_order.hpp"
#include "suites/run/suite.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "reports/diagnose_text.hpp"

namespace fpcert::cli {
namespace {

struct SuiteArgs {
  std::vector<std::string> kernels;
  std::string suite, baseline, json, junit, html, only_case, variant;
  double factor = 2;
  std::int64_t mn = 0;
  std::string sample;               ///< --sample ROWS[,COLS]: grade GEMM cases on a sampled exact reference
  bool isolate = false;
  double timeout_s = 600;
  // Plugins and project config (docs/plugin.md).
  std::vector<std::string> plugins;  ///< --plugin LIB (repeatable): implies --isolate
  bool no_isolate = false;           ///< --no-isolate: run plugin cases in this process
  std::string config;                ///< --config fpcert.toml
  std::vector<std::string> suites;   ///< several suites in one run (from the config); empty: `suite`
  std::string reference = "auto";    ///< --reference cpu|gpu|auto: where exact references are made (docs/oracle.md)
  std::string tier;                  ///< --tier: the strongest verdict tier (default: what the declarations allow)
  std::vector<std::pair<std::string, std::string>> determinism;  ///< fpcert.toml [determinism]: plugin kernel -> run_to_run | deterministic
  std::vector<std::string> orders;   ///< --order KERNEL=SPEC (and [orders] of the config): plugin kernels' orders
  std::vector<std::pair<std::string, std::string>> nan;  ///< fpcert.toml [nan]: plugin conversion kernel -> NaN convention
  // certify: the mutation score of each kernel that passes (docs/mutation.md).
  bool no_mutation = false;          ///< --no-mutation: skip it (stated in the output)
  double mutation_min = -1;          ///< --mutation-min P: fail when a kernel's score is below P %
  std::string preset;                ///< run-suite --preset P: the suite as a published source states it (docs/experiments.md)
  std::string card = "probe";        ///< --card: probe | none | FILE (behaviour cards of the tensor-core instructions)
  std::uint64_t card_samples = 1'000'000;  ///< --card-samples: validation samples per probed instruction
  std::int64_t reveal_max_launches = 20000;  ///< --reveal-max-launches: a revelation's launch budget per class of elements
  std::uint64_t reveal_samples = 4096;       ///< --reveal-samples: elements per class that choose and check the replay's arithmetic
  bool reveal_strict = false;                ///< --reveal-strict: a revealed tree that does not replay the kernel fails its cases
  std::string compare;               ///< --compare OLD.json: what changed from that run (docs/report.md)
  bool error_maps = false;           ///< --error-maps: keep the error map of passing cases too
  std::string diagnose;              ///< --diagnose [FILE]: diagnose every failed GEMM case (docs/diagnose.md), its JSON to FILE
  ScaleArgs scale;                   ///< --shard, --devices, --mpi (docs/scale.md)
  std::vector<std::string> inputs;   ///< every file the command line names as an input (command_inputs)
};



}  // namespace

std::vector<std::string> expand_kernel_list(const std::vector<std::string>& in, Operation op) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) continue;
      if (register_mutant_name(item)) {  // <kernel>~<fault>: a mutant, as mutation reports name them
        out.push_back(item);
        continue;
      }
      const Backend* group = nullptr;
      static constexpr Backend kCpu = Backend::Cpu, kCuda = Backend::Cuda, kCublas = Backend::Cublas;
      if (item == "cpu") group = &kCpu;
      if (item == "cuda") group = &kCuda;
      if (item == "cublas") group = &kCublas;
      if (!group) {
        out.push_back(item);
        continue;
      }
      for (const auto& k : kernel_registry())
        if (!k.mutant && k.backend == *group && k.operation == op) out.push_back(k.name);
    }
  }
  // A kernel named twice (`--kernel a,a`, or a group and one of its members) would run twice and count
  // twice in the verdict: refused, naming it.
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j])
        throw InputError("kernel '" + printable(out[i]) + "' is given twice (directly or through a group: cpu, cuda, cublas); each kernel runs once");
  return out;
}

namespace {

/// certify --diagnose: the diagnoses (suites/diagnose/diagnose_run.hpp, diagnose_run_cases, computed before the outputs are
/// written so that the HTML report carries them) printed after them; `out` other than "-": their JSON too (an array,
/// read back by fpcert report). The exit code stays certify's.
void print_diagnoses(const std::vector<DiagnosisRecord>& ds, const std::vector<std::string>& unavailable, const std::string& out) {
  nlohmann::json all = nlohmann::json::array();
  for (const DiagnosisRecord& d : ds) {
    if (d.failed_checks.empty() && !d.hint.empty())  // a passing kernel's hint: one line
      fmt::print("hint for {} ({}): {}\n", d.kernel, d.cases.empty() ? std::string() : d.cases.front(), d.hint);
    else
      fmt::print("{}", diagnosis_text(d));
    all.push_back(diagnosis_to_json(d));
  }
  for (const std::string& u : unavailable) fmt::print("{}", u);
  if (out != "-") write_file_atomic(out, all.dump(2) + "\n");
}

int run(const SuiteArgs& a, const char* verb) {
  if (a.isolate && a.no_isolate) throw InputError("--isolate and --no-isolate contradict each other");
  // Plugin kernels run in child processes unless --no-isolate: a crash or hang fails its case only.
  const bool isolate = !a.no_isolate && (a.isolate || !a.plugins.empty());
  // The exact references (docs/oracle.md, "On the GPU"): set before any reference is computed. Not on the GPU with
  // isolated cases: this process's CUDA context would leave their children without a device.
  if (isolate && a.reference == "gpu")
    throw InputError("--reference gpu: not with isolated cases (--isolate, --plugin): the children run the kernels on the "
                     "device, which a CUDA context in this process would take from them; use --reference cpu or auto");
  const std::string reference_engine =
      use_reference_engine(isolate && a.reference == "auto" ? "cpu" : a.reference, gpu_reference_usable);
  load_plugins(a.plugins, a.timeout_s);  // a bad plugin stops here, before anything runs (exit 2; 3: it crashed or hung)
  for (const auto& [kernel, d] : a.determinism) declare_plugin_determinism(kernel, *parse_determinism(d));
  for (const auto& [kernel, n] : a.nan) declare_plugin_nan(kernel, *parse_nan_payload(n));
  // --order: revealed | FILE (a revelation's JSON) | KERNEL=revealed | KERNEL=SPEC (docs/reveal.md, docs/plugin.md).
  OrderSourceOptions order_opt;
  for (const std::string& o : a.orders) {
    if (o == "revealed") {
      order_opt.reveal_all = true;
      continue;
    }
    const auto eq = o.find('=');
    std::error_code ec;
    if (eq == std::string::npos || std::filesystem::is_regular_file(o, ec)) {
      if (!std::filesystem::is_regular_file(o, ec))
        throw InputError("--order: expected revealed, the JSON of fpcert reveal --json, KERNEL=revealed or KERNEL=SPEC (e.g. "
                         "foo_gemm=sequential:step=fma); '" + o + "' is none of them (no such file)");
      order_opt.files.push_back(read_order_file(o));
      continue;
    }
    if (eq == 0) throw InputError("--order: expected KERNEL=SPEC (e.g. foo_gemm=sequential:step=fma), got '" + o + "'");
    if (o.substr(eq + 1) == "revealed") {
      order_opt.reveal_kernels.push_back(o.substr(0, eq));
      continue;
    }
    declare_plugin_order(o.substr(0, eq), parse_order_spec(o.substr(eq + 1)));
  }
  order_opt.max_launches = a.reveal_max_launches;
  order_opt.strict = a.reveal_strict;
  order_opt.check_samples = a.reveal_samples;
  const bool outside_orders = order_opt.reveal_all || !order_opt.reveal_kernels.empty() || !order_opt.files.empty();
  if (outside_orders && a.card != "probe" && a.card != "none") order_opt.cards = block_models_from_cards(a.card);  // measured block models of fused nodes
  const auto order_source = outside_orders ? std::make_shared<OrderSource>(order_opt) : nullptr;
  Tier strongest = Tier::Bitwise;
  if (!a.tier.empty()) {
    const auto t = parse_tier(a.tier);
    if (!t || *t == Tier::None) throw InputError("--tier: expected bitwise, envelope+statistical or envelope, got '" + a.tier + "'");
    strongest = *t;
  }
  // Every output checked before anything runs: writable, not a directory, no two the same file, not
  // the config (base/output_path.hpp). Output folders of a config may not exist yet: made here.
  std::vector<std::pair<std::string, std::string>> outputs = {{"--json", a.json}, {"--junit", a.junit}, {"--html", a.html}};
  for (auto& j : journal_outputs("--json", a.json)) outputs.push_back(std::move(j));  // FILE.partial.jsonl: written too
  std::vector<std::string> inputs = a.inputs;
  inputs.push_back(a.config);
  inputs.push_back(a.compare);
  const auto plans = check_outputs(outputs, inputs, !a.config.empty());
  // --compare: the old run is read before anything runs (a bad file is exit 2 and costs nothing).
  std::optional<RunResult> old_run;
  if (!a.compare.empty()) {
    ReportInput old_in;
    read_report_file(a.compare, old_in);
    if (old_in.runs.size() != 1) throw InputError("--compare " + a.compare + ": expected the results of one certify or run-suite run");
    old_run = std::move(old_in.runs.front());
  }
  for (const OutputPlan& p : plans)
    if (p.how == OutputHow::Replace && !a.config.empty()) {
      const auto dir = std::filesystem::path(p.target).parent_path();
      std::error_code ec;
      if (!dir.empty()) std::filesystem::create_directories(dir, ec);
      if (ec) throw InputError("cannot create the folder '" + dir.string() + "' for '" + p.given + "': " + ec.message());
    }
  // Cases are appended to FILE.partial.jsonl beside a --json file; not beside a device, FIFO or stdout.
  const bool partial_file = !a.json.empty() && plans.front().how == OutputHow::Replace;
  std::vector<std::string> suite_names_run = a.suites.empty() ? std::vector<std::string>{a.suite} : a.suites;
  std::vector<const SuiteInfo*> suites;
  std::vector<SuiteInfo> preset_suites;  // --preset: the suites as the source states them
  preset_suites.reserve(suite_names_run.size());
  for (const auto& name : suite_names_run) {
    const SuiteInfo* s = find_suite(name);
    if (!s) throw InputError(fmt::format("unknown suite '{}' (valid: {})", name, suite_names()));
    if (!a.preset.empty()) s = &preset_suites.emplace_back(preset_suite(name, a.preset));
    suites.push_back(s);
  }
  // A case larger than this machine can hold is refused with the estimate, before anything runs.
  if (a.mn > 0)
    for (const SuiteInfo* s : suites)
      if (s->cases) {
        SuiteContext ctx;
        ctx.mn = a.mn;
        for (const CaseSpec& c : s->cases(ctx)) check_spec_memory(c.spec, true, fmt::format("--mn {}", a.mn));
      }
  const Operation op = suites.front()->operation;
  for (const SuiteInfo* s : suites)
    if ((s->operation == Operation::Conversion) != (op == Operation::Conversion))
      throw InputError("suites of GEMM or reduction kernels and the conversions suite cannot run together: run them apart");
  // Each suite with its kernels (plan_suites: the certify level reaches every operation of the kernels named).
  std::vector<std::vector<std::string>> suite_kernels;
  if (!a.kernels.empty() || op != Operation::Conversion) {
    auto planned = plan_suites(suites, a.kernels, a.preset.empty(), a.only_case.empty());
    suites.clear();
    for (auto& [s, ks] : planned) {
      suites.push_back(s);
      suite_kernels.push_back(std::move(ks));
    }
  } else {  // the conversions suite's own kernels
    std::string where;
    suite_kernels.assign(suites.size(), conversion_suite_kernels(false, &where));
    fmt::print("conversion kernels: {}\n", where);
  }
  std::vector<std::string> kernels;  // every kernel of the run, each once
  for (const auto& ks : suite_kernels)
    for (const auto& k : ks)
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
  if (kernels.empty()) throw InputError("give --kernel NAME (fpcert kernels lists them), or kernels = [...] in --config");
  for (std::size_t i = 0; i < suites.size(); ++i)
    if (suite_kernels[i].empty())
      throw InputError(fmt::format("suite {} certifies {} kernels and --kernel names none (fpcert kernels lists them)", suites[i]->name,
                                   to_string(suites[i]->operation)));
  if (outside_orders && op != Operation::Gemm) throw InputError("--order revealed / FILE: conversion kernels have no summation order");
  for (const std::string& k : order_opt.reveal_kernels)
    if (std::find(kernels.begin(), kernels.end(), k) == kernels.end())
      throw InputError("--order " + k + "=revealed: " + k + " is not a kernel of this run");
  for (const OrderFile& f : order_opt.files)
    if (std::find(kernels.begin(), kernels.end(), f.reveal.kernel) == kernels.end()) {
      std::string list;
      for (const auto& k : kernels) list += (list.empty() ? "" : ", ") + k;
      throw InputError(fmt::format("--order {}: it is the order of kernel {}, which this run does not certify (kernels: {})", f.path, f.reveal.kernel, list));
    }
  // Tensor-core cards: probed here, before anything runs; with --devices or --mpi by each process that
  // runs cases, on its own GPU (cmd.execute below).
  bool cards_ready = a.scale.devices.empty() && !a.scale.mpi;
  if (cards_ready) prepare_cards(a.card, a.card_samples, kernels);
  std::string plugin_args;
  for (const auto& p : a.plugins) plugin_args += " --plugin " + p;
  const bool certify = std::string(verb) == "certify";
  // certify grades each kernel on the suite's cases tailored to its own formats (ranges, edges);
  // run-suite compares kernels on one shared set of cases.
  std::vector<std::vector<std::vector<std::string>>> suite_groups;  // per suite, the kernel lists of its run_suite calls
  for (std::size_t i = 0; i < suites.size(); ++i) {
    auto& groups = suite_groups.emplace_back();
    if (certify && suite_kernels[i].size() > 1 && suites[i]->operation == Operation::Gemm)
      for (const auto& k : suite_kernels[i]) groups.push_back({k});
    else
      groups.push_back(suite_kernels[i]);
  }
  // The mutation score (docs/mutation.md): a conversion kernel's for host kernels (its faults wrap host kernels; a device
  // kernel is named not measured, with the reason: "Conversion kernels").
  const bool mutation = certify;
  // A suite's run options (everything but where the partial JSON lines go and which cases run).
  const auto suite_options = [&](const SuiteInfo& suite) {
    SuiteRunOptions o;
    o.only_case = a.only_case;
    if (a.mn > 0) o.mn = a.mn;
    if (!a.variant.empty()) {
      const auto v = parse_bound_variant(a.variant);
      if (!v) throw InputError("--variant: expected independent, componentwise or worstcase, got '" + a.variant + "'");
      o.variant = *v;
    }
    o.isolate = isolate;
    o.isolate_timeout_s = a.timeout_s;
    o.run.timeout_ms = a.timeout_s * 1000;
    o.run.strongest = strongest;
    o.run.error_maps = a.error_maps;
    if (!a.sample.empty()) o.gemm_sample = parse_sample_spec(a.sample);
    o.run.orders = order_source;
    o.baseline = a.baseline;
    o.baseline_factor = a.factor;
    o.command = command_line();
    o.repro_prefix = fmt::format("fpcert {}{} --suite {}{}{}", verb, plugin_args, suite.name, a.mn > 0 ? fmt::format(" --mn {}", a.mn) : "",
                                 a.preset.empty() ? "" : " --preset " + a.preset) +
                     (a.sample.empty() ? "" : " --sample " + a.sample);
    return o;
  };

  // An order file holds one shape: refused when no case of the run has it (docs/reveal.md).
  for (const OrderFile& f : order_opt.files) {
    std::string shapes;
    bool found = false;
    for (const SuiteInfo* suite : suites)
      for (const PlanItem& it : plan_suite(*suite, {f.reveal.kernel}, suite_options(*suite))) {
        const ParsedSpec ps = parse_generator_spec(it.spec);
        if (!ps.has("m") || !ps.has("n") || !ps.has("k")) continue;
        const std::string shape = fmt::format("{}x{}x{}", ps.integer("m"), ps.integer("n"), ps.integer("k"));
        found = found || (ps.integer("m") == f.reveal.m && ps.integer("n") == f.reveal.n && ps.integer("k") == f.reveal.k);
        if (shapes.find(shape) == std::string::npos) shapes += (shapes.empty() ? "" : ", ") + shape;
      }
    if (!found)
      throw InputError(fmt::format("--order {}: the order of {} revealed at {}x{}x{}, and no case of this run has that shape (M x N x K: {}); "
                                   "reveal it at a case's shape (fpcert reveal --m M --n N --k K --json F), or pick the case with --mn / --case",
                                   f.path, f.reveal.kernel, f.reveal.m, f.reveal.n, f.reveal.k, shapes.empty() ? "none" : shapes));
  }

  // The plan (docs/scale.md): every (case, kernel) in this run's order; a unit is one case of one
  // run_suite call (its kernels share the case's exact reference), or, where kernels have a run_suite call
  // each and their mutation scores are measured, one kernel's cases: its campaign then takes its cases'
  // results from its own part. A kernel's score is measured by the part that holds its last case of the suite.
  std::map<std::string, std::string> last_item;  // suite "\t" kernel -> the key of that kernel's last case
  std::vector<bool> kernel_units(suites.size());  // per suite: its units are kernels (claimable by --devices workers)
  for (std::size_t si = 0; si < suites.size(); ++si)
    kernel_units[si] = mutation && !a.no_mutation && suites[si]->mutation_score && suite_groups[si].size() > 1;
  ScaledCommand cmd;
  cmd.make_plan = [&] {
    RunPlan plan;
    std::string orders;
    for (const auto& o : a.orders) orders += o + ";";
    plan.options = fmt::format("{} variant={} baseline={} factor={} isolate={} tier={} orders={} preset={} card={} mutation={}", verb,
                               a.variant, a.baseline, a.factor, isolate, a.tier, orders, a.preset, a.card, mutation && !a.no_mutation);
    plan.evidence = certify && a.only_case.empty();
    for (std::size_t si = 0; si < suites.size(); ++si) {
      const SuiteInfo* suite = suites[si];
      const SuiteRunOptions o = suite_options(*suite);
      for (const auto& g : suite_groups[si]) {
        std::map<std::string, std::size_t> unit_of_case;
        for (const PlanItem& it : plan_suite(*suite, g, o)) {
          auto [u, fresh] = unit_of_case.emplace(kernel_units[si] ? std::string() : it.case_id, plan.units.size());
          if (fresh) plan.units.push_back({{}, 0, kernel_units[si]});
          plan.units[u->second].items.push_back(plan.items.size());
          plan.units[u->second].cost += it.cost;
          plan.items.push_back({it.suite, it.case_id, it.kernel, it.spec});
          last_item[it.suite + "\t" + it.kernel] = case_key(it.suite, it.case_id, it.kernel);
        }
      }
    }
    return plan;
  };
  cmd.json = partial_file ? a.json : "";
  // In-process cases cannot be stopped when they hang: a watchdog ends the run at --timeout instead.
  std::unique_ptr<Watchdog> watchdog;
  cmd.execute = [&](const PartContext& part) {
    if (!cards_ready) {
      prepare_cards(a.card, a.card_samples, kernels);
      cards_ready = true;
    }
    if (!isolate && !watchdog) watchdog = std::make_unique<Watchdog>(kExitKernelFailed);
    std::vector<RunResult> results(suites.size());
    // A part of a scaled run does its fixed share first (the suites whose units are not claimable: one case of every
    // kernel, dealt out by the cost partition), then claims kernels costliest first: the claims even out whatever the
    // fixed shares left uneven. Results keep the suites' order (the merge requires the same suites in every part).
    std::vector<std::size_t> suite_walk(suites.size());
    std::iota(suite_walk.begin(), suite_walk.end(), std::size_t{0});
    if (part.selected) std::stable_partition(suite_walk.begin(), suite_walk.end(), [&](std::size_t si) { return !kernel_units[si]; });
    bool append = false;  // the first run_suite call starts the partial file afresh; later ones append
    const bool tty = part.print_rows && ::isatty(2);
    for (const std::size_t si : suite_walk) {
      const SuiteInfo* suite = suites[si];
      SuiteRunOptions o = suite_options(*suite);
      if (!part.json.empty()) o.jsonl_path = part.json + ".partial.jsonl";
      if (part.selected) {
        const std::string sname = suite->name;
        o.select = [sel = part.selected, sname](const std::string& case_id, const std::string& kernel) {
          return sel->has(case_key(sname, case_id, kernel));
        };
      }
      if (part.print_rows) {
        if (suites.size() > 1) fmt::print("== suite {} ==\n", suite->name);
        if (!a.preset.empty()) {  // the method first (docs/experiments.md)
          ExperimentRecord h;
          h.experiment = suite->name;
          h.preset = a.preset;
          h.source = find_preset("run-suite " + suite->name, a.preset).source;
          h.method = preset_suite_method(suite->name, a.preset);
          if (a.mn > 0) h.deviations = fmt::format("M = N = {} (--mn).", a.mn);
          fmt::print("{}\n", experiment_header(h));
        }
        std::fputs((op == Operation::Conversion ? conversion_case_header() : case_header()).c_str(), stdout);
      }
      // What an interruption says (base/interrupt.hpp), and the deadline of in-process cases.
      const std::string partial_note =
          o.jsonl_path.empty() ? std::string("; no --json: finished cases are only in the table above")
                               : "; cases finished so far are in " + o.jsonl_path + " (fpcert report reads it)";
      // Wall time per kernel (its cases: problem generation and the exact reference where the kernel is the first to
      // need them, the runs, the grading), printed after the verdict: where a long run's time goes.
      std::map<std::string, double> kernel_wall;
      auto case_clock = std::chrono::steady_clock::now();
      o.on_case = [&watchdog, &kernel_wall, &case_clock, print = part.print_rows](const CaseResult& c) {
        const auto now = std::chrono::steady_clock::now();
        kernel_wall[c.kernel] += std::chrono::duration<double>(now - case_clock).count();
        case_clock = now;
        if (watchdog) watchdog->disarm();
        if (!print) return;
        std::fputs(case_row(c).c_str(), stdout);
        std::fflush(stdout);
      };
      o.on_progress = [tty, &watchdog, &a, suite, partial_note](const std::string& line) {
        set_interrupt_note("running suite " + suite->name + " " + line + partial_note);
        // "[i/n] case: kernel" starts a kernel's run ("[i/n] case: generating ..." its problem).
        if (watchdog && line.find(": generating ") == std::string::npos)
          watchdog->arm(a.timeout_s, fmt::format("suite {} {} did not finish within --timeout {} s; without isolation (--no-isolate) "
                                                 "a hung kernel cannot be stopped, so fpcert ends here (exit 3: hung){}",
                                                 suite->name, line, a.timeout_s, partial_note));
        if (!tty) return;
        std::fprintf(stderr, "\r\033[K%s", line.substr(0, 150).c_str());
        std::fflush(stderr);
      };
      RunResult one;
      bool first = true;
      std::set<std::string> measured;  // kernels whose campaign ran right after their cases
      // A worker of --devices walks the kernels in the parent's claim order (costliest first), claims each as it frees
      // up, runs its cases, then its campaign (docs/scale.md); the merge puts every case back in the plan's order.
      std::vector<const std::vector<std::string>*> walk;
      for (const auto& g : suite_groups[si]) walk.push_back(&g);
      if (kernel_units[si] && part.selected)
        std::stable_sort(walk.begin(), walk.end(), [&](const auto* x, const auto* y) {
          return part.selected->rank(last_item[suite->name + "\t" + x->front()]) < part.selected->rank(last_item[suite->name + "\t" + y->front()]);
        });
      for (const auto* gp : walk) {
        const auto& g = *gp;
        const bool claimed = kernel_units[si] && part.selected && part.selected->claim(last_item[suite->name + "\t" + g.front()]);
        if (kernel_units[si] && part.selected && !claimed && !first) continue;  // another worker's (the first: the suite's header)
        o.jsonl_append = append;
        RunResult part_result = run_suite(*suite, g, o);
        append = true;
        if (claimed) {
          add_mutation_scores(a.no_mutation, *suite, g, o, part_result, part.print_rows, [](const std::string&) { return true; });
          measured.insert(g.front());
          case_clock = std::chrono::steady_clock::now();  // the campaign is not the next kernel's case time
        }
        if (first) {
          one = std::move(part_result);
          one.kernels = suite_kernels[si];
          first = false;
        } else {
          for (auto& c : part_result.cases) one.cases.push_back(std::move(c));
          for (auto& m : part_result.mutation) one.mutation.push_back(std::move(m));
          if (claimed)
            for (const auto& [k, v] : part_result.notes) one.notes.emplace(k, v);
        }
      }
      if (tty) std::fprintf(stderr, "\r\033[K");
      if (part.print_rows) std::fputs((order_text(one) + spread_text(one)).c_str(), stdout);
      if (certify && part.print_rows) {
        const std::string cov = coverage_table(one);
        if (!cov.empty()) fmt::print("{}", cov);
      }
      one.notes["reference_engine"] = reference_engine;  // GemmRefInfo::engine of this run's exact references
      if (!a.preset.empty()) {  // the source's table (of the whole run only), then fpcert's verdict
        one.notes["preset"] = a.preset;
        one.notes["method"] = preset_suite_method(suite->name, a.preset);
        if (part.print_rows && !part.selected)
          for (const auto& t : preset_suite_record(one).tables) fmt::print("\n{}\n", table_text(t));
      }
      if (part.print_rows) std::fputs(verdict_text(one).c_str(), stdout);
      if (part.print_rows && kernel_wall.size() > 1) fmt::print("{}", cli::kernel_time_line(kernel_wall));
      if (mutation)
        add_mutation_scores(a.no_mutation, *suite, suite_kernels[si], o, one, part.print_rows, [&](const std::string& k) {
          return !measured.count(k) && (!part.selected || part.selected->has(last_item[suite->name + "\t" + k]));
        });
      results[si] = std::move(one);
    }
    return join_suites(results);
  };
  cmd.header = [&] {
    std::vector<RunResult> rs;
    for (std::size_t si = 0; si < suites.size(); ++si) {
      const SuiteInfo* suite = suites[si];
      RunResult r;
      r.suite = suite->name;
      r.kernels = suite_kernels[si];
      r.env = make_environment(command_line(), nullptr);
      rs.push_back(std::move(r));
    }
    return join_suites(rs);
  };
  cmd.finish = [&](const RunResult& result, bool merged) -> int {
    RunResult r = result;
    if (certify && !r.shard.present()) {  // what certify decides over the whole run (evidence over every suite)
      const std::size_t before = r.cases.size();
      complete_certify(r, a.only_case.empty());
      if (!merged && r.cases.size() > before) {  // a merged run prints every row below
        for (std::size_t i = before; i < r.cases.size(); ++i) std::fputs(case_row(r.cases[i]).c_str(), stdout);
        std::fputs(verdict_text(split_suites(r).back()).c_str(), stdout);
      }
    }
    set_interrupt_note("writing the outputs");
    std::vector<std::string> unavailable;
    const std::vector<DiagnosisRecord> diagnoses = a.diagnose.empty() ? std::vector<DiagnosisRecord>{} : diagnose_run_cases(r, unavailable);
    const int code = write_run_outputs(r, OutputPaths{a.json, a.junit, a.html}, merged, old_run ? &*old_run : nullptr,
                                       a.diagnose.empty() ? nullptr : &diagnoses);
    if (partial_file) std::remove((a.json + ".partial.jsonl").c_str());
    if (!a.diagnose.empty()) print_diagnoses(diagnoses, unavailable, a.diagnose);
    if (code == kExitPass && a.mutation_min >= 0)
      for (const MutationScore& s : r.mutation)
        if (s.total() == 0 || 100 * s.score() < a.mutation_min) {  // 0 of 0 reads 100 %: no evidence, no pass
          fmt::print("FAILED: a mutation score is below --mutation-min {} %{}\n", a.mutation_min,
                     s.total() == 0 ? " (no applicable mutant: nothing was measured)" : "");
          return kExitGateFailed;
        }
    return code;
  };
  return run_scaled(a.scale, std::move(cmd));
}

/// Options that would do nothing in the combination given are refused, not ignored (docs/errors.md).
void check_combinations(const CLI::App& app, const SuiteArgs& a) {
  refuse_without(app, {"--factor"}, !a.baseline.empty(), "--baseline (the factor scales the baseline's error)");
  refuse_without(app, {"--reveal-max-launches", "--reveal-samples", "--reveal-strict"}, !a.orders.empty(), "--order revealed or FILE");
  refuse_without(app, {"--card-samples"}, a.card == "probe", "--card probe (the default)");
  if (app.get_option_no_throw("--mutation-min")) {
    refuse_without(app, {"--mutation-min"}, !a.no_mutation, "the mutation score, which --no-mutation skips");
  }
}

/// Fill what the command line left unset from --config (the command line wins; plugins add up).
void apply_config(SuiteArgs& a, const CLI::App& app) {
  const ProjectConfig c = load_project_config(a.config);
  std::vector<std::string> plugins = c.plugins;
  plugins.insert(plugins.end(), a.plugins.begin(), a.plugins.end());
  a.plugins = plugins;
  if (!app.count("--kernel")) a.kernels = c.kernels;
  if (!app.count("--suite") && !c.suites.empty()) a.suites = c.suites;
  if (!app.count("--isolate") && !app.count("--no-isolate") && c.isolate) (*c.isolate ? a.isolate : a.no_isolate) = true;
  if (!app.count("--timeout") && c.timeout_s) a.timeout_s = *c.timeout_s;
  if (!app.count("--variant") && c.variant) a.variant = *c.variant;
  if (!app.count("--baseline") && c.baseline) a.baseline = *c.baseline;
  if (!app.count("--factor") && c.factor) a.factor = *c.factor;
  if (!app.count("--mn") && c.mn) a.mn = *c.mn;
  if (!app.count("--json") && c.json) a.json = *c.json;
  if (!app.count("--junit") && c.junit) a.junit = *c.junit;
  if (!app.count("--html") && c.html) a.html = *c.html;
  if (!app.count("--tier") && c.tier) a.tier = *c.tier;
  for (const auto& [kernel, spec] : c.orders) a.orders.push_back(kernel + "=" + spec);
  a.determinism = c.determinism;
  a.nan = c.nan;
  if (a.kernels.empty()) throw InputError(a.config + ": no kernels: add kernels = [\"...\"] (or give --kernel)");
}

void add_common(CLI::App* app, const std::shared_ptr<SuiteArgs>& a) {
  app->add_option("--baseline", a->baseline, "Also gate: error within --factor of this kernel's on every case");
  app->add_option("--factor", a->factor, "Baseline factor")->capture_default_str()->check(positive_number());
  app->add_option("--json", a->json, "Write results JSON here (cases are appended to FILE.partial.jsonl as they finish)")->check(output_path(true));
  app->add_option("--junit", a->junit, "Write JUnit XML here")->check(output_path());
  app->add_option("--html", a->html, "Write a self-contained HTML report here")->check(output_path());
  app->add_option("--compare", a->compare,
                  "Results JSON of an earlier run of the same suite: print what changed (flipped verdicts, error fractions grown "
                  "beyond 2x, speed) and put the comparison in --html")
      ->check(path_text());
  app->add_option("--diagnose", a->diagnose, "Diagnose every failed GEMM or conversion case (fpcert diagnose, docs/diagnose.md); '-': print only, FILE: also its JSON")
      ->check(output_path());
  app->add_flag("--error-maps", a->error_maps, "Keep the error map (err / allowed over C, downsampled) of passing cases too; failing ones always have it");
  app->add_option("--case", a->only_case, "Run only this case of the suite (a trailing * : every case with that prefix, e.g. order_free_*)");
  app->add_option("--mn", a->mn, "Override M = N of the suite's GEMM cases")->check(integer_in(1, 1 << 30));
  app->add_option("--sample", a->sample,
                  "ROWS[,COLS]: grade every GEMM case on a sampled exact reference: the rows and columns at index and grid "
                  "boundaries plus ROWS random rows and COLS random columns ('all': every one); docs/suites.md, \"Sampled references\"");
  app->add_option("--variant", a->variant, "Gate variant for every case: independent, componentwise, worstcase");
  app->add_flag("--isolate", a->isolate, "Run each case in a child process: a crash or hang fails that case only");
  app->add_option("--timeout", a->timeout_s, "Seconds before a case counts as hung (without isolation: before fpcert ends the run)")
      ->capture_default_str()
      ->check(seconds());
  add_plugin_option(app, a->plugins);
  app->add_option("--tier", a->tier, "Strongest verdict tier: bitwise (default: what the kernel declares allows), envelope+statistical, envelope");
  app->add_option("--order", a->orders,
                  "The summation order to certify with (repeatable): revealed (every kernel's, found from outside at each case's shape; "
                  "docs/reveal.md), FILE (the JSON of fpcert reveal --json: that kernel's order at that shape), KERNEL=revealed, or "
                  "KERNEL=SPEC (a plugin kernel that declares none)");
  app->add_option("--reveal-max-launches", a->reveal_max_launches,
                  "With --order revealed: launches allowed per class of elements; beyond it the shape falls back to the declared tier")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_flag("--reveal-strict", a->reveal_strict,
                "With --order revealed or FILE: where the tree was revealed and verified but its replay disagrees with the kernel on "
                "random inputs, fail the case (check bitwise) instead of falling back to the declared tier");
  app->add_option("--reveal-samples", a->reveal_samples,
                  "With --order revealed or FILE: elements per class of random inputs on which the replay's arithmetic is chosen and checked")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--card", a->card,
                  "Tensor-core behaviour cards for the bitwise tier of tensor-core kernels: probe (this device, at the start), none, or a "
                  "JSON file of `fpcert probe tensor-cores --json`")
      ->capture_default_str();
  app->add_option("--card-samples", a->card_samples, "With --card probe: validation samples per instruction")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_flag("--no-isolate", a->no_isolate, "With --plugin: run cases in this process (a crash ends the run)");
  add_scale_options(app, a->scale);
}

}  // namespace

void add_certify(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("certify", "Grade a kernel on a suite; exit 0 only if every gate passes");
  auto a = std::make_shared<SuiteArgs>();
  app->add_option("--kernel", a->kernels,
                  "Kernel(s) to certify (repeat or comma-separate; cpu, cuda, cublas: every built-in of that backend; the "
                  "conversions suite picks its own when none are given)");
  app->add_option("--suite", a->suite, "Suite: " + suite_names())->capture_default_str();
  a->suite = "certify";
  add_common(app, a);
  app->add_option("--reference", a->reference,
                  "Exact references: cpu (the CPU oracle), gpu (on the device from 2^27 products: whole for binary32 "
                  "inputs, else its slice GEMMs; sample-checked against the CPU oracle; and the bitwise tier's tensor-core "
                  "card emulation from 2^24 instruction products and its Ozaki-II residue GEMMs from 2^27), auto (gpu where a "
                  "CUDA device answers and cases are not isolated; the default); docs/oracle.md, \"On the GPU\", "
                  "docs/tensor_cores.md, docs/fp64.md")
      ->capture_default_str();
  app->add_flag("--no-mutation", a->no_mutation, "Skip the mutation score (fault injectors run after the kernel passes; docs/mutation.md)");
  app->add_option("--mutation-min", a->mutation_min, "Fail when a kernel's mutation score (killed for their own fault, %) is below this")
      ->check(number_in(0, 100));
  app->add_option("--config", a->config, "Project config (fpcert.toml): plugins, kernels, suites, gate, outputs; options given here win")
      ->check(path_text());
  reg.push_back({app, [a, app] {
                   SuiteArgs b = *a;
                   b.inputs = command_inputs(*app);
                   if (!b.config.empty()) apply_config(b, *app);
                   check_combinations(*app, b);
                   return run(b, "certify");
                 }});
}

void add_run_suite(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("run-suite", "Run a suite on several kernels side by side");
  auto a = std::make_shared<SuiteArgs>();
  app->add_option("suite", a->suite, "Suite: " + suite_names())->required();
  app->add_option("--kernels", a->kernels,
                  "Kernels, comma-separated (cpu, cuda, cublas: every built-in of that backend); the conversions suite picks "
                  "its own when none are given");
  app->add_option("--preset", a->preset,
                  "Run the suite as a published source states it (panorama: accuracy-vs-k, exponent-range, cancellation; "
                  "docs/experiments.md) and print the source's metrics");
  add_common(app, a);
  reg.push_back({app, [a, app] {
                   SuiteArgs b = *a;
                   b.inputs = command_inputs(*app);
                   check_combinations(*app, b);
                   return run(b, "run-suite");
                 }});
}

}  // namespace fpcert::cli
