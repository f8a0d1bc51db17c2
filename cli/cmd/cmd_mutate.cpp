// cli/cmd/cmd_mutate.cpp — `fpcert mutate`: what a suite refuses, measured by fault injectors wrapping the
// kernel (docs/mutation.md); and the mutation score that `certify` and `selftest` print.
#include <fmt/format.h>
#include <unistd.h>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "cli/mutate.hpp"
#include "cli/plugins.hpp"
#include "cli/tc_cards.hpp"
#include "reports/html/html.hpp"
#include "reports/mutation_report.hpp"
#include "reports/table.hpp"
#include "results/results_json.hpp"
#include "suites/run/environment.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/ops/conversion/conversion_faults.hpp"
#include "suites/reveal/reveal.hpp"
#include "suites/reveal/revealed_order.hpp"

namespace fpcert::cli {

std::function<void(const std::string&)> progress_to_terminal() {
  if (!::isatty(2)) return nullptr;
  return [](const std::string& line) {
    std::fprintf(stderr, "\r\033[K%s", line.substr(0, 150).c_str());
    std::fflush(stderr);
  };
}

void clear_progress() {
  if (::isatty(2)) std::fprintf(stderr, "\r\033[K");
}

std::string fault_catalogue_text() {
  std::string s = fmt::format("{:<18} {:<12} {:<40} {}\n", "fault", "class", "killed for its own fault by", "the fault; how it is injected");
  for (const FaultInfo& f : fault_catalogue()) {
    std::string kinds;
    for (CheckKind k : f.expected) kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(k));
    s += fmt::format("{:<18} {:<12} {:<40} {}\n{:<72} {}\n", f.id, to_string(f.cls), kinds, f.what, "", f.realisation);
  }
  // Conversion kernels get these instead (suites/ops/conversion/conversion_faults.hpp; docs/mutation.md, "Conversion kernels").
  s += "\nconversion kernels (host): each fault injected around the kernel, killed by the conversions case's bitwise check\n";
  for (const ConversionFaultInfo& f : conversion_fault_catalogue()) s += fmt::format("{:<22} {}\n", f.id, f.what);
  return s;
}

namespace {

struct MutateArgs {
  std::vector<std::string> kernels;
  std::string suite = "certify", faults, json, html, only_case;
  std::vector<std::string> plugins;
  std::int64_t mn = 0;
  bool all_cases = false, isolate = false, list = false;
  double timeout_s = 600;
  double min_score = -1;
  std::string card = "probe";  ///< --card, as certify's: the mutants are judged with the tiers certify would use
  std::uint64_t card_samples = 1'000'000;
  std::string order;                         ///< --order revealed: every case (and mutant) graded with its revealed order
  bool reveal_strict = false;                ///< --reveal-strict, as certify's
  std::int64_t reveal_max_launches = 20000;  ///< --reveal-max-launches, as certify's
  std::uint64_t reveal_samples = 4096;       ///< --reveal-samples, as certify's
};

int run_mutate(const MutateArgs& a) {
  if (a.list) {
    std::fputs(fault_catalogue_text().c_str(), stdout);
    return kExitPass;
  }
  load_plugins(a.plugins, a.timeout_s);
  const SuiteInfo* suite = find_suite(a.suite);
  if (!suite) throw InputError(fmt::format("unknown suite '{}' (valid: {})", a.suite, suite_names()));
  const std::vector<std::string> kernels = expand_kernel_list(a.kernels);
  if (kernels.empty()) throw InputError("give --kernel NAME (fpcert kernels lists them)");
  // The behaviour cards certify installs (a tensor-core kernel's bitwise tier): without them a mutation
  // run would judge such kernels by the envelope alone and score lower than certify does.
  prepare_cards(a.card, a.card_samples, kernels);
  MutationOptions mo;
  mo.faults = parse_fault_list(a.faults);
  mo.all_cases = a.all_cases;
  if (a.mn > 0) mo.run.mn = a.mn;
  mo.run.only_case = a.only_case;  // every mutant on that case (or those with the prefix) alone, as certify --case
  mo.run.isolate = a.isolate || !a.plugins.empty();
  mo.run.isolate_timeout_s = a.timeout_s;
  mo.run.run.timeout_ms = a.timeout_s * 1000;
  mo.inject.timeout_ms = a.timeout_s * 1000;
  mo.run.command = command_line();
  if (a.order == "revealed") {  // as certify --order revealed: each mutant's own order is revealed from outside at each shape
    OrderSourceOptions oo;
    oo.reveal_all = true;
    oo.strict = a.reveal_strict;
    oo.max_launches = a.reveal_max_launches;
    oo.check_samples = a.reveal_samples;
    if (a.card != "probe" && a.card != "none") oo.cards = block_models_from_cards(a.card);
    mo.run.run.orders = std::make_shared<OrderSource>(oo);
  } else if (a.reveal_strict) {
    throw InputError("--reveal-strict needs --order revealed");
  }
  mo.on_progress = progress_to_terminal();
  RunResult run;
  run.kind = RunKind::Mutation;
  run.suite = suite->name;
  run.kernels = kernels;
  mo.on_honest_case = [&](const CaseResult& c) { run.cases.push_back(c); };
  run.env = make_environment(command_line(), nullptr);
  mo.env = &run.env;
  bool below = false;
  for (const std::string& k : kernels) {
    MutationScore s = run_mutation(*suite, k, mo);
    clear_progress();
    std::fputs(mutation_table(s).c_str(), stdout);
    std::fputs(mutation_summary(s).c_str(), stdout);
    std::fputs(heuristics_table(s).c_str(), stdout);
    std::fflush(stdout);
    // No applicable mutant is no evidence: the score of 0 of 0 reads 100 %, and must not pass a gate.
    below = below || (a.min_score >= 0 && (s.total() == 0 || 100 * s.score() < a.min_score));
    run.mutation.push_back(std::move(s));
  }
  if (kernels.size() > 1) std::fputs(mutation_score_table(run.mutation).c_str(), stdout);
  if (!a.json.empty()) {
    write_file_atomic(a.json, to_json(run).dump(2) + "\n");
    fmt::print("results: {}\n", printable(a.json));
  }
  if (!a.html.empty()) {
    write_html_report(a.html, std::vector<RunResult>{run});
    fmt::print("HTML report: {}\n", printable(a.html));
  }
  if (below) {
    fmt::print("mutation score below --min-score {} % (a kernel with no applicable mutant has no score)\n", a.min_score);
    return kExitGateFailed;
  }
  return kExitPass;
}

}  // namespace

void add_mutate(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("mutate", "Run a suite on fault-injected copies of a kernel: which faults does it refuse, by which check");
  auto a = std::make_shared<MutateArgs>();
  app->add_option("--kernel", a->kernels, "Kernel(s) to wrap (repeat or comma-separate; cpu, cuda, cublas: every built-in of that backend)");
  app->add_option("--suite", a->suite, "Suite: " + suite_names())->capture_default_str();
  app->add_option("--fault", a->faults, "Only these faults, comma-separated (--list shows them)");
  app->add_option("--case", a->only_case, "Only this case of the suite (a trailing * : every case with that prefix), for the kernel and every mutant");
  app->add_flag("--all-cases", a->all_cases, "Run every case on every mutant (default: a mutant stops at its first kill for its own fault)");
  app->add_flag("--list", a->list, "List the faults, the checks expected to kill each, and how each is injected");
  app->add_option("--json", a->json, "Write the results (the unmutated kernel's cases and the mutation score) as JSON")->check(output_path());
  app->add_option("--html", a->html, "Write a self-contained HTML report")->check(output_path());
  app->add_option("--mn", a->mn, "Override M = N of the suite's GEMM cases")->check(integer_in(1, 1 << 30));
  app->add_flag("--isolate", a->isolate, "Run each case in a child process");
  app->add_option("--timeout", a->timeout_s, "Seconds before a case counts as hung")->capture_default_str()->check(seconds());
  app->add_option("--min-score", a->min_score, "Exit 1 when a kernel's score (killed for their own fault, %) is below this")
      ->check(number_in(0, 100));
  app->add_option("--card", a->card,
                  "Tensor-core behaviour cards, as certify: probe (this device, at the start), none, or a JSON file of "
                  "`fpcert probe tensor-cores --json`")
      ->capture_default_str();
  app->add_option("--card-samples", a->card_samples, "With --card probe: validation samples per instruction")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--order", a->order,
                  "revealed: grade every case with the summation order revealed from outside at its shape, each mutant's its own "
                  "(as certify --order revealed; docs/reveal.md)")
      ->check(CLI::IsMember({"revealed"}));
  app->add_flag("--reveal-strict", a->reveal_strict,
                "With --order revealed: a revealed tree whose replay disagrees with the kernel on random inputs fails the case");
  app->add_option("--reveal-max-launches", a->reveal_max_launches, "With --order revealed: launches allowed per class of elements")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--reveal-samples", a->reveal_samples, "With --order revealed: elements per class on which the replay is checked")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  add_plugin_option(app, a->plugins);
  reg.push_back({app, [a, app] {
                   // Options that would do nothing in this combination are refused, not ignored (docs/errors.md).
                   refuse_without(*app, {"--reveal-max-launches", "--reveal-samples", "--reveal-strict"}, a->order == "revealed",
                                  "--order revealed");
                   refuse_without(*app, {"--card-samples"}, a->card == "probe", "--card probe (the default)");
                   return run_mutate(*a);
                 }});
}

}  // namespace fpcert::cli
