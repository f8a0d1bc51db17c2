// cli/cmd_selftest.cpp — `fpcert selftest`: the framework tests itself. Every mutant (a kernel with
// one injected fault) must be caught by the suite, and every honest CPU model must pass it.
#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "reports/table.hpp"
#include "suites/suite.hpp"

namespace fpcert::cli {
namespace {

int run_selftest(const std::string& suite_name, bool isolate) {
  const SuiteInfo* suite = find_suite(suite_name);
  if (!suite) throw InputError(fmt::format("unknown suite '{}' (valid: {})", suite_name, suite_names()));
  std::vector<std::string> honest, mutants;
  for (const auto& k : kernel_registry()) {
    if (k.backend != Backend::Cpu || k.operation != Operation::Gemm) continue;
    (k.mutant ? mutants : honest).push_back(k.name);
  }
  SuiteRunOptions o;
  o.isolate = isolate;
  o.command = command_line();
  int bad = 0;
  fmt::print("{:<32} {:<8} {:<10} {}\n", "kernel", "kind", "verdict", "detail");
  auto check = [&](const std::string& name, bool mutant) {
    const RunResult r = run_suite(*suite, {name}, o);
    const bool passed = r.passed();
    const bool ok = mutant ? !passed : passed;
    std::string detail;
    for (const auto& c : r.cases)
      if (c.status != CaseStatus::Pass && c.status != CaseStatus::NotSupported) {
        detail = fmt::format("{}: {}", c.case_id, c.reason.substr(0, 90));
        break;
      }
    if (!mutant && passed) {
      double worst = 0;
      for (const auto& c : r.cases) worst = std::max(worst, c.gate_fraction);
      detail = fmt::format("{} cases, worst gate fraction {:.3g}", r.cases.size(), worst);
    }
    fmt::print("{:<32} {:<8} {:<10} {}\n", name, mutant ? "mutant" : "honest",
               mutant ? (ok ? "caught" : "MISSED") : (ok ? "passed" : "FAILED"), detail);
    std::fflush(stdout);
    bad += !ok;
  };
  for (const auto& m : mutants) check(m, true);
  for (const auto& h : honest) check(h, false);
  fmt::print("{}\n", bad ? fmt::format("SELFTEST FAILED: {} kernel(s) misjudged", bad)
                         : fmt::format("SELFTEST PASSED: {} mutants caught, {} honest models passed (suite {})", mutants.size(),
                                       honest.size(), suite_name));
  return bad ? kExitGateFailed : kExitPass;
}

}  // namespace

void add_selftest(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("selftest", "Every mutant must be caught and every honest model pass");
  auto suite = std::make_shared<std::string>("quick");
  auto isolate = std::make_shared<bool>(false);
  app->add_option("--suite", *suite, "Suite to run")->capture_default_str();
  app->add_flag("--isolate", *isolate, "Run each case in a child process");
  reg.push_back({app, [suite, isolate] { return run_selftest(*suite, *isolate); }});
}

}  // namespace fpcert::cli
