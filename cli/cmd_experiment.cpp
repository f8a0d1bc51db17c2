// cli/cmd_experiment.cpp — `fpcert experiment split-scalar`: each split-product method on millions of
// scalar products against the exact product.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "oracle/atomic_file.hpp"
#include "oracle/error.hpp"
#include "suites/experiments.hpp"
#include "suites/results_json.hpp"
#include "suites/suite.hpp"

namespace fpcert::cli {
namespace {

struct Args {
  std::string which, json, device = "cuda";
  std::int64_t mn = 0;
  std::uint64_t pairs = 2000000, seed = 1;
  int emin = -60, emax = 60;
};

/// The three-pipeline table: one tiled kernel in fp32, fp16-storage/fp32-acc and fp16/fp16-acc,
/// side by side at K = 256, 1024, 2048 (the reference course's experiment).
int run_three_pipeline(const Args& a) {
  const bool cuda = a.device == "cuda";
  if (!cuda && a.device != "cpu") throw InputError("--device: expected cpu or cuda, got '" + a.device + "'");
  const std::vector<std::string> ks = cuda ? std::vector<std::string>{"gemm_f32_tiled", "gemm_f16_f32acc_tiled", "gemm_f16_f16acc_tiled"}
                                           : std::vector<std::string>{"model_gemm_f32", "model_gemm_f16_f32acc", "model_gemm_f16_f16acc"};
  SuiteRunOptions o;
  o.command = command_line();
  if (a.mn > 0) o.mn = a.mn;
  const RunResult r = run_suite(*find_suite("three-pipeline"), ks, o);
  if (r.count(CaseStatus::NotSupported) == static_cast<int>(r.cases.size())) {
    std::fprintf(stderr, "fpcert: nothing ran: %s\n", r.cases.empty() ? "no cases" : r.cases.front().reason.c_str());
    return kExitKernelFailed;
  }
  fmt::print("three-pipeline comparison on {} ({}), M = N = {}, uniform [-1, 1) fp32 inputs; gate: independent (rtol = 4 eps sqrt(K) for fp16 storage)\n",
             r.env.device, cuda ? "CUDA tiled kernels" : "CPU models", r.cases.empty() ? 0 : r.cases.front().m);
  fmt::print("{:>6}  {:<24} {:>11} {:>8} {:>9} {:>8} {:>10} {:>15}\n", "K", "pipeline", "max abs err", "rtol", "gate frac",
             "status", "time ms", "speed vs fp32");
  std::map<std::string, const CaseResult*> by;
  for (const auto& c : r.cases) by[c.case_id + "/" + c.kernel] = &c;
  nlohmann::json rows = nlohmann::json::array();
  for (const char* kc : {"k256", "k1024", "k2048"}) {
    const CaseResult* f32 = by[std::string(kc) + "/" + ks[0]];
    const CaseResult* f16a32 = by[std::string(kc) + "/" + ks[1]];
    const CaseResult* f16a16 = by[std::string(kc) + "/" + ks[2]];
    for (const CaseResult* c : {f32, f16a32, f16a16}) {
      if (!c) continue;
      const double speed = (f32 && f32->time_ms_median > 0 && c->time_ms_median > 0) ? f32->time_ms_median / c->time_ms_median : 0;
      fmt::print("{:>6}  {:<24} {:>11.4g} {:>8.4g} {:>9.4g} {:>8} {:>10.4g} {:>14.2f}x\n", c->k, c->kernel, c->metrics.max_abs, c->bound.rtol,
                 c->gate_fraction, to_string(c->status), c->time_ms_median, speed);
      rows.push_back({{"k", c->k}, {"kernel", c->kernel}, {"max_abs", c->metrics.max_abs}, {"rtol", c->bound.rtol},
                      {"gate_fraction", c->gate_fraction}, {"status", to_string(c->status)}, {"time_ms", c->time_ms_median},
                      {"speed_vs_fp32", speed}});
    }
    if (f16a16 && f16a32 && f16a32->metrics.max_abs > 0)
      fmt::print("{:>6}  fp16-acc / fp32-acc max error ratio: {:.3g}\n", f16a32->k, f16a16->metrics.max_abs / f16a32->metrics.max_abs);
  }
  if (!a.json.empty()) write_file_atomic(a.json, to_json(r).dump(2) + "\n");
  return exit_code(r);
}

int run_experiment(const Args& a) {
  if (a.which == "three-pipeline") return run_three_pipeline(a);
  if (a.which != "split-scalar") throw InputError("unknown experiment '" + a.which + "' (valid: split-scalar, three-pipeline)");
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
  auto* app = root.add_subcommand("experiment", "Experiments: split-scalar (split products vs exact), three-pipeline (fp32 / fp16-fp32acc / fp16-fp16acc table)");
  auto a = std::make_shared<Args>();
  app->add_option("name", a->which, "split-scalar | three-pipeline")->required();
  app->add_option("--device", a->device, "three-pipeline: cuda (tiled CUDA kernels) or cpu (their CPU models)")->capture_default_str();
  app->add_option("--mn", a->mn, "three-pipeline: override M = N");
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
