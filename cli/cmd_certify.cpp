// cli/cmd_certify.cpp — `fpcert certify` (the pre-merge gate) and `fpcert run-suite` (experiments
// side by side): run a suite, print rows as cases finish, write JSON / JUnit, exit per DESIGN.md.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/exit_codes.hpp"
#include "cli/plugins.hpp"
#include "cli/run_outputs.hpp"
#include "cli/scale.hpp"
#include "reports/table.hpp"
#include "suites/environment.hpp"
#include "results/results_json.hpp"
#include "suites/conversion_suite.hpp"
#include "suites/suite.hpp"

namespace fpcert::cli {
namespace {

struct SuiteArgs {
  std::vector<std::string> kernels;
  std::string suite, baseline, json, junit, html, only_case, variant;
  double factor = 2;
  std::int64_t mn = 0;
  bool isolate = false;
  double timeout_s = 600;
  // Plugins and project config (docs/plugin.md).
  std::vector<std::string> plugins;  ///< --plugin LIB (repeatable): implies --isolate
  bool no_isolate = false;           ///< --no-isolate: run plugin cases in this process
  std::string config;                ///< --config fpcert.toml
  std::vector<std::string> suites;   ///< several suites in one run (from the config); empty: `suite`
  ScaleArgs scale;                   ///< --shard, --devices, --mpi (docs/scale.md)
};

/// Comma-separated kernel names; the groups cpu, cuda and cublas expand to every honest built-in
/// kernel of that backend and of the suite's operation (in registry order).
std::vector<std::string> split_list(const std::vector<std::string>& in, Operation op) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) continue;
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
  return out;
}

/// The suite options of a run (everything but where the partial JSON lines go).
SuiteRunOptions suite_options(const SuiteArgs& a, const SuiteInfo& suite, bool isolate, const std::string& plugin_args, const char* verb) {
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
  o.baseline = a.baseline;
  o.baseline_factor = a.factor;
  o.command = command_line();
  o.repro_prefix = fmt::format("fpcert {}{} --suite {}{}", verb, plugin_args, suite.name, a.mn > 0 ? fmt::format(" --mn {}", a.mn) : "");
  return o;
}

int run(const SuiteArgs& a, const char* verb) {
  if (a.isolate && a.no_isolate) throw InputError("--isolate and --no-isolate contradict each other");
  load_plugins(a.plugins);  // a bad plugin stops here, before anything runs (exit 2)
  for (const std::string* out : {&a.json, &a.junit, &a.html})  // output folders of a config may not exist yet
    if (!out->empty() && !a.config.empty()) {
      const auto dir = std::filesystem::path(*out).parent_path();
      std::error_code ec;
      if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    }
  const std::vector<std::string> suite_names_run = a.suites.empty() ? std::vector<std::string>{a.suite} : a.suites;
  std::vector<const SuiteInfo*> suites;
  for (const auto& name : suite_names_run) {
    const SuiteInfo* s = find_suite(name);
    if (!s) throw InputError(fmt::format("unknown suite '{}' (valid: {})", name, suite_names()));
    suites.push_back(s);
  }
  const Operation op = suites.front()->operation;
  for (const SuiteInfo* s : suites)
    if (s->operation != op) throw InputError("suites of GEMM kernels and the conversions suite cannot run together: run them apart");
  auto kernels = split_list(a.kernels, op);
  if (kernels.empty() && op == Operation::Conversion) {  // the conversions suite's own kernels
    std::string where;
    kernels = conversion_suite_kernels(false, &where);
    fmt::print("conversion kernels: {}\n", where);
  }
  if (kernels.empty()) throw InputError("give --kernel NAME (fpcert kernels lists them), or kernels = [...] in --config");
  // Plugin kernels run in child processes unless --no-isolate: a crash or hang fails its case only.
  const bool isolate = !a.no_isolate && (a.isolate || !a.plugins.empty());
  std::string plugin_args;
  for (const auto& p : a.plugins) plugin_args += " --plugin " + p;
  // certify grades each kernel on the suite's cases tailored to its own formats (ranges, edges);
  // run-suite compares kernels on one shared set of cases.
  const bool per_kernel = std::string(verb) == "certify" && kernels.size() > 1 && op == Operation::Gemm;
  std::vector<std::vector<std::string>> groups;  // the kernel lists of the run_suite calls, per suite
  if (per_kernel)
    for (const auto& k : kernels) groups.push_back({k});
  else
    groups.push_back(kernels);

  // The plan (docs/scale.md): every (case, kernel) in this run's order; a unit is one case of one
  // run_suite call (its kernels share the case's exact reference).
  ScaledCommand cmd;
  cmd.make_plan = [&] {
    RunPlan plan;
    plan.options = fmt::format("{} variant={} baseline={} factor={} isolate={}", verb, a.variant, a.baseline, a.factor, isolate);
    for (const SuiteInfo* suite : suites) {
      const SuiteRunOptions o = suite_options(a, *suite, isolate, plugin_args, verb);
      for (const auto& g : groups) {
        std::map<std::string, std::size_t> unit_of_case;
        for (const PlanItem& it : plan_suite(*suite, g, o)) {
          auto [u, fresh] = unit_of_case.emplace(it.case_id, plan.units.size());
          if (fresh) plan.units.push_back({});
          plan.units[u->second].items.push_back(plan.items.size());
          plan.units[u->second].cost += it.cost;
          plan.items.push_back({it.suite, it.case_id, it.kernel, it.spec});
        }
      }
    }
    return plan;
  };
  cmd.json = a.json;
  cmd.execute = [&](const PartContext& part) {
    std::vector<RunResult> results;
    bool append = false;  // the first run_suite call starts the partial file afresh; later ones append
    for (const SuiteInfo* suite : suites) {
      SuiteRunOptions o = suite_options(a, *suite, isolate, plugin_args, verb);
      if (!part.json.empty()) o.jsonl_path = part.json + ".partial.jsonl";
      if (part.selected) {
        const std::string sname = suite->name;
        o.select = [sel = part.selected, sname](const std::string& case_id, const std::string& kernel) {
          return sel->count(case_key(sname, case_id, kernel)) != 0;
        };
      }
      const bool tty = ::isatty(2);
      if (part.print_rows) {
        if (suites.size() > 1) fmt::print("== suite {} ==\n", suite->name);
        std::fputs((op == Operation::Conversion ? conversion_case_header() : case_header()).c_str(), stdout);
        o.on_case = [](const CaseResult& c) {
          std::fputs(case_row(c).c_str(), stdout);
          std::fflush(stdout);
        };
        if (tty)
          o.on_progress = [](const std::string& line) {
            std::fprintf(stderr, "\r\033[K%s", line.substr(0, 150).c_str());
            std::fflush(stderr);
          };
      }
      RunResult one;
      bool first = true;
      for (const auto& g : groups) {
        o.jsonl_append = append;
        RunResult part_result = run_suite(*suite, g, o);
        append = true;
        if (first) {
          one = std::move(part_result);
          one.kernels = kernels;
          first = false;
        } else {
          for (auto& c : part_result.cases) one.cases.push_back(std::move(c));
        }
      }
      if (part.print_rows) {
        if (tty) std::fprintf(stderr, "\r\033[K");
        std::fputs(verdict_text(one).c_str(), stdout);
      }
      results.push_back(std::move(one));
    }
    return join_suites(results);
  };
  cmd.header = [&] {
    std::vector<RunResult> rs;
    for (const SuiteInfo* suite : suites) {
      RunResult r;
      r.suite = suite->name;
      r.kernels = kernels;
      r.env = make_environment(command_line(), nullptr);
      rs.push_back(std::move(r));
    }
    return join_suites(rs);
  };
  cmd.finish = [&](const RunResult& r, bool merged) {
    const int code = write_run_outputs(r, OutputPaths{a.json, a.junit, a.html}, merged);
    if (!a.json.empty()) std::remove((a.json + ".partial.jsonl").c_str());
    return code;
  };
  return run_scaled(a.scale, std::move(cmd));
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
  if (a.kernels.empty()) throw InputError(a.config + ": no kernels: add kernels = [\"...\"] (or give --kernel)");
}

void add_common(CLI::App* app, const std::shared_ptr<SuiteArgs>& a) {
  app->add_option("--baseline", a->baseline, "Also gate: error within --factor of this kernel's on every case");
  app->add_option("--factor", a->factor, "Baseline factor")->capture_default_str();
  app->add_option("--json", a->json, "Write results JSON here (cases are appended to FILE.partial.jsonl as they finish)");
  app->add_option("--junit", a->junit, "Write JUnit XML here");
  app->add_option("--html", a->html, "Write a self-contained HTML report here");
  app->add_option("--case", a->only_case, "Run only this case of the suite");
  app->add_option("--mn", a->mn, "Override M = N of the suite's GEMM cases");
  app->add_option("--variant", a->variant, "Gate variant for every case: independent, componentwise, worstcase");
  app->add_flag("--isolate", a->isolate, "Run each case in a child process: a crash or hang fails that case only");
  app->add_option("--timeout", a->timeout_s, "Seconds before a case counts as hung")->capture_default_str();
  add_plugin_option(app, a->plugins);
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
  app->add_option("--config", a->config, "Project config (fpcert.toml): plugins, kernels, suites, gate, outputs; options given here win");
  reg.push_back({app, [a, app] {
                   SuiteArgs b = *a;
                   if (!b.config.empty()) apply_config(b, *app);
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
  add_common(app, a);
  reg.push_back({app, [a] { return run(*a, "run-suite"); }});
}

}  // namespace fpcert::cli
