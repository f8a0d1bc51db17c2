// cli/cmd_certify.cpp — `fpcert certify` (the pre-merge gate) and `fpcert run-suite` (experiments
// side by side): run a suite, print rows as cases finish, write JSON / JUnit, exit per DESIGN.md.
#include <fmt/format.h>
#include <unistd.h>

#include <sstream>

#include "cli/commands.hpp"
#include "oracle/atomic_file.hpp"
#include "oracle/error.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"
#include "reports/table.hpp"
#include "suites/results_json.hpp"
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
};

/// Comma-separated kernel names; the groups cpu, cuda and cublas expand to every honest built-in
/// kernel of that backend (in registry order).
std::vector<std::string> split_list(const std::vector<std::string>& in) {
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
        if (!k.mutant && k.backend == *group) out.push_back(k.name);
    }
  }
  return out;
}

int run(const SuiteArgs& a, const char* verb) {
  const SuiteInfo* suite = find_suite(a.suite);
  if (!suite) throw InputError(fmt::format("unknown suite '{}' (valid: {})", a.suite, suite_names()));
  const auto kernels = split_list(a.kernels);
  if (kernels.empty()) throw InputError("give --kernel NAME (fpcert kernels lists them)");
  SuiteRunOptions o;
  o.only_case = a.only_case;
  if (a.mn > 0) o.mn = a.mn;
  if (!a.variant.empty()) {
    const auto v = parse_bound_variant(a.variant);
    if (!v) throw InputError("--variant: expected independent, componentwise or worstcase, got '" + a.variant + "'");
    o.variant = *v;
  }
  o.isolate = a.isolate;
  o.isolate_timeout_s = a.timeout_s;
  o.run.timeout_ms = a.timeout_s * 1000;
  o.baseline = a.baseline;
  o.baseline_factor = a.factor;
  if (!a.json.empty()) o.jsonl_path = a.json + ".partial.jsonl";
  o.command = command_line();
  o.repro_prefix = fmt::format("fpcert {} --suite {}{}", verb, a.suite, a.mn > 0 ? fmt::format(" --mn {}", a.mn) : "");
  const bool tty = ::isatty(2);
  std::fputs(case_header().c_str(), stdout);
  o.on_case = [](const CaseResult& c) {
    std::fputs(case_row(c).c_str(), stdout);
    std::fflush(stdout);
  };
  if (tty)
    o.on_progress = [](const std::string& line) {
      std::fprintf(stderr, "\r\033[K%s", line.substr(0, 150).c_str());
      std::fflush(stderr);
    };
  // certify grades each kernel on the suite's cases tailored to its own formats (ranges, edges);
  // run-suite compares kernels on one shared set of cases.
  RunResult r;
  if (std::string(verb) == "certify" && kernels.size() > 1) {
    for (const auto& k : kernels) {
      RunResult one = run_suite(*suite, {k}, o);
      if (r.cases.empty() && r.kernels.empty()) {
        r = std::move(one);
      } else {
        r.kernels.push_back(k);
        for (auto& c : one.cases) r.cases.push_back(std::move(c));
      }
      o.jsonl_append = true;  // the first run started the partial file afresh; later ones append
    }
  } else {
    r = run_suite(*suite, kernels, o);
  }
  if (tty) std::fprintf(stderr, "\r\033[K");
  std::fputs(verdict_text(r).c_str(), stdout);
  if (!a.json.empty()) {
    write_file_atomic(a.json, to_json(r).dump(2) + "\n");
    std::remove(o.jsonl_path.c_str());
    fmt::print("results: {}\n", a.json);
  }
  if (!a.junit.empty()) {
    write_file_atomic(a.junit, junit_xml(r));
    fmt::print("JUnit: {}\n", a.junit);
  }
  if (!a.html.empty()) {
    write_html_report(a.html, std::vector<RunResult>{r});
    fmt::print("HTML report: {}\n", a.html);
  }
  if (r.count(CaseStatus::NotSupported) == static_cast<int>(r.cases.size())) {
    std::fprintf(stderr, "fpcert: nothing ran: every case was not supported (%s)\n",
                 r.cases.empty() ? "no cases" : r.cases.front().reason.c_str());
    return kExitKernelFailed;
  }
  return exit_code(r);
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
}

void add_certify(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("certify", "Grade a kernel on a suite; exit 0 only if every gate passes");
  auto a = std::make_shared<SuiteArgs>();
  app->add_option("--kernel", a->kernels, "Kernel(s) to certify (repeat or comma-separate; cpu, cuda, cublas: every built-in of that backend)")->required();
  app->add_option("--suite", a->suite, "Suite: " + suite_names())->capture_default_str();
  a->suite = "certify";
  add_common(app, a);
  reg.push_back({app, [a] { return run(*a, "certify"); }});
}

void add_run_suite(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("run-suite", "Run a suite on several kernels side by side");
  auto a = std::make_shared<SuiteArgs>();
  app->add_option("suite", a->suite, "Suite: " + suite_names())->required();
  app->add_option("--kernels", a->kernels, "Kernels, comma-separated (cpu, cuda, cublas: every built-in of that backend)")->required();
  add_common(app, a);
  reg.push_back({app, [a] { return run(*a, "run-suite"); }});
}

const Registrar kCertify("certify", 60, add_certify);
const Registrar kRunSuite("run-suite", 70, add_run_suite);

}  // namespace
}  // namespace fpcert::cli
