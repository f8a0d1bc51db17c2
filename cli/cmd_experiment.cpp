// cli/cmd_experiment.cpp — `fpcert experiment split-scalar`: each split-product method on millions of
// scalar products against the exact product.
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "oracle/atomic_file.hpp"
#include "oracle/error.hpp"
#include "suites/experiments.hpp"

namespace fpcert::cli {
namespace {

struct Args {
  std::string which, json;
  std::uint64_t pairs = 2000000, seed = 1;
  int emin = -60, emax = 60;
};

int run_experiment(const Args& a) {
  if (a.which != "split-scalar") throw InputError("unknown experiment '" + a.which + "' (valid: split-scalar)");
  if (a.emin > a.emax || a.emin < -126 || a.emax > 127)
    throw InputError(fmt::format("--emin/--emax: need -126 <= emin <= emax <= 127 (normal fp32 exponents), got [{}, {}]", a.emin, a.emax));
  if (a.pairs < 1) throw InputError("--pairs must be at least 1");
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = split_scalar_experiment(a.pairs, a.seed, a.emin, a.emax);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("split-product scalar experiment: {} pairs of fp32 normals, exponents uniform in [{}, {}], seed {}\n", a.pairs,
             a.emin, a.emax, a.seed);
  fmt::print("relative error of each method's product against the exact product (fp64)\n");
  fmt::print("{:<12} {:>12} {:>12} {:>12} {:>10}\n", "method", "median", "p99", "max", "zero");
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    fmt::print("{:<12} {:>12.3e} {:>12.3e} {:>12.3e} {:>10}\n", r.method, r.median, r.p99, r.max, r.zero);
    arr.push_back({{"method", r.method}, {"median", r.median}, {"p99", r.p99}, {"max", r.max}, {"zero", r.zero}, {"samples", r.samples}});
  }
  fmt::print("({:.2f} s)\n", secs);
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json({{"kind", "experiment"},
                                              {"experiment", "split-scalar"},
                                              {"command", command_line()},
                                              {"pairs", a.pairs},
                                              {"seed", a.seed},
                                              {"emin", a.emin},
                                              {"emax", a.emax},
                                              {"rows", arr}})
                                      .dump(2) +
                                  "\n");
  return 0;
}

void add_experiment(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("experiment", "Experiments that are not GEMM cases (split-scalar)");
  auto a = std::make_shared<Args>();
  app->add_option("name", a->which, "split-scalar")->required();
  app->add_option("--pairs", a->pairs, "Number of scalar pairs")->capture_default_str();
  app->add_option("--seed", a->seed, "Philox key")->capture_default_str();
  app->add_option("--emin", a->emin, "Smallest exponent")->capture_default_str();
  app->add_option("--emax", a->emax, "Largest exponent")->capture_default_str();
  app->add_option("--json", a->json, "Write the table as JSON");
  reg.push_back({app, [a] { return run_experiment(*a); }});
}

const Registrar kRegistrar("experiment", 75, add_experiment);

}  // namespace
}  // namespace fpcert::cli
