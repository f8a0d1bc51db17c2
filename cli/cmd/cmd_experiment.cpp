// cli/cmd/cmd_experiment.cpp — `fpcert experiment`: split-scalar (each split-product method on millions of
// scalar products against the exact product, on the CPU or the device), three-pipeline, and
// bf16-on-fp16 (the single-scale span boundary and the three correctness levels of every strategy), and
// fp8-accumulation (the FP8 mma.sync GEMMs at K = 4096, measured against their behaviour card's prediction).
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/cmd/experiment_presets.hpp"
#include "cli/cmd/experiment_scale_rules.hpp"
#include "cli/options.hpp"
#include "cli/tc_cards.hpp"
#include "results/results_json.hpp"
#include "suites/experiments/experiments.hpp"
#include "suites/experiments/fp8_accumulation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::cli {
namespace {

struct Args {
  std::string which, json, device = "cuda";
  bool device_given = false;  // split-scalar and bf16-on-fp16 run on the CPU unless --device is given
  std::int64_t mn = 0;
  std::int64_t k = 4096;
  std::string card = "probe";
  std::uint64_t card_samples = 1'000'000;
  std::uint64_t pairs = 2000000, seed = 1;
  int emin = -60, emax = 60;
  std::string preset, html;   // --preset: a published method (cli/cmd/experiment_presets.hpp); --html: its report
  bool range_given = false;
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

std::string fmt_count(std::int64_t v) { return v < 0 ? "-" : fmt::format("{}", v); }

int run_split_scalar(const Args& a) {
  const bool cuda = a.device_given && a.device == "cuda";
  if (a.device_given && !cuda && a.device != "cpu") throw InputError("--device: expected cpu or cuda, got '" + a.device + "'");
  if (a.emin > a.emax || a.emin < -126 || a.emax > 127)
    throw InputError(fmt::format("--emin/--emax: need -126 <= emin <= emax <= 127 (normal fp32 exponents), got [{}, {}]", a.emin, a.emax));
  if (a.pairs < 1) throw InputError("--pairs must be at least 1");
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = split_scalar_experiment(a.pairs, a.seed, a.emin, a.emax, 0, cuda);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("split-product scalar experiment: {} pairs of fp32 normals, exponents uniform in [{}, {}], seed {}\n", a.pairs,
             a.emin, a.emax, a.seed);
  if (cuda)
    fmt::print("products computed on the CUDA device with the kernels' slicing (kernels/emu/emu_arith.cuh: __fmaf_rn, __fadd_rn, "
               "__float2bfloat16_rn, tf32 on the bits; the tf32 row uses cvt.rna.tf32.f32); 'cpu diff' counts pairs whose device "
               "product differs in any bit from the CPU's (kernels/emu/split.cpp): it must be 0\n");
  fmt::print("relative error of each method's product against the exact product (fp64)\n");
  fmt::print("{:<12} {:>12} {:>12} {:>12} {:>10}{}\n", "method", "median", "p99", "max", "zero", cuda ? fmt::format(" {:>9}", "cpu diff") : "");
  nlohmann::json arr = nlohmann::json::array();
  std::int64_t mismatches = 0;
  for (const auto& r : rows) {
    fmt::print("{:<12} {:>12.3e} {:>12.3e} {:>12.3e} {:>10}{}\n", r.method, r.median, r.p99, r.max, r.zero,
               cuda ? fmt::format(" {:>9}", fmt_count(r.cpu_mismatches)) : "");
    if (r.cpu_mismatches > 0) {
      mismatches += r.cpu_mismatches;
      fmt::print("    first difference: {}\n", r.first_mismatch);
    }
    nlohmann::json row = {{"method", r.method}, {"median", r.median}, {"p99", r.p99}, {"max", r.max}, {"zero", r.zero}, {"samples", r.samples}};
    if (cuda) row["cpu_mismatches"] = r.cpu_mismatches;
    arr.push_back(row);
  }
  if (cuda)
    fmt::print("device vs CPU: {}\n", mismatches == 0 ? "every product equal bit for bit" : fmt::format("{} products differ: FAIL", mismatches));
  fmt::print("({:.2f} s)\n", secs);
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json({{"kind", "experiment"},
                                              {"experiment", "split-scalar"},
                                              {"command", command_line()},
                                              {"device", cuda ? "cuda" : "cpu"},
                                              {"pairs", a.pairs},
                                              {"seed", a.seed},
                                              {"emin", a.emin},
                                              {"emax", a.emax},
                                              {"rows", arr}})
                                      .dump(2) +
                                  "\n");
  return mismatches == 0 ? 0 : kExitGateFailed;
}

int run_bf16_on_fp16(const Args& a) {
  const bool cuda = a.device_given && a.device == "cuda";
  if (a.device_given && !cuda && a.device != "cpu") throw InputError("--device: expected cpu or cuda, got '" + a.device + "'");
  const Bf16OnF16Report rep = bf16_on_fp16_experiment(cuda, a.mn, command_line());
  fmt::print("BF16 on FP16: bf16 inputs, exact products, fp32 accumulation, computed on fp16 MMAs ({}, {})\n", rep.device,
             cuda ? "CUDA kernels" : "CPU models");
  fmt::print("\n1. The single-scale span boundary. A's rows span s binades (span tiles, random 8-bit significands), B = I:\n"
             "   'inexact' counts conversions bf16 -> fp16 (scaled) that rounded; 'C != A' counts outputs of C = A I that\n"
             "   differ from A (one product each, so any MMA order gives A exactly iff the conversions were exact);\n"
             "   'subnormal' counts operands the MMA received as fp16 subnormals (a flush-to-zero MMA would lose them).\n");
  fmt::print("{:>5}  {:<32} {:>9} {:>9} {:>10}\n", "span", "kernel", "inexact", "C != A", "subnormal");
  for (const auto& r : rep.spans)
    fmt::print("{:>5}  {:<32} {:>9} {:>9} {:>10}\n", r.span, r.kernel, r.inexact, r.c_differs, r.subnormal);
  fmt::print("derived: one power-of-two scale is lossless for spans <= {} (33 binades [-17, 15]: 30 normal, 3 subnormal); "
             "without fp16 subnormals the limit would be 29\n",
             rep.derived_max_lossless_span);
  fmt::print("measured: first lossy span {}; {}\n", rep.measured_first_lossy_span,
             rep.measured_consistent ? "every span <= 32 lossless and every span >= 33 lossy, by both measures: CONFIRMED"
                                     : "MISMATCH with the derivation (see the rows above)");
  fmt::print("\n2. The bf16-on-fp16 suite, every strategy, three correctness levels:\n"
             "   model quality = the runner's gate against the exact product of the bf16 inputs (gate fraction <= 1);\n"
             "   numerical     = error relative to the native kernel ({}) on the same case: 'maxabs/nat' is the --baseline\n"
             "                   mechanism's ratio of max |err| (floor 2^-23 max|ref|), 'cw/nat' the ratio of componentwise\n"
             "                   errors max |err_ij| / (|A||B|)_ij (floor 2^-24), which large elements cannot hide;\n"
             "   bitwise       = elements differing from native's output (0 expected for lossless row-mode strategies\n"
             "                   when fp16 and bf16 MMAs sum alike; K-block and outlier paths use another order).\n"
             "   'lossless' = no bf16 -> fp16 conversion rounded (every product exact).\n",
             rep.native);
  fmt::print("{:<22} {:<34} {:>8} {:>8} {:>8} {:>5} {:>9} {:>10} {:>9} {:>9}\n", "case", "kernel", "lossless", "inexact", "outliers",
             "gate", "frac", "maxabs/nat", "cw/nat", "bits!=nat");
  nlohmann::json rows = nlohmann::json::array();
  int gate_failures = 0;
  struct Tally {
    int cases = 0, pass = 0, lossless = 0, numerical = 0, bitwise = 0;
  };
  std::map<std::string, Tally> tally;
  std::vector<std::string> order;
  for (const auto& r : rep.rows) {
    const std::int64_t inexact = r.stats.a.inexact + r.stats.b.inexact, outl = r.stats.a.outliers + r.stats.b.outliers;
    fmt::print("{:<22} {:<34} {:>8} {:>8} {:>8} {:>5} {:>9.3g} {:>10.3g} {:>9.3g} {:>9}\n", r.case_id, r.kernel,
               r.bitwise_differences < 0 ? "-" : (r.stats.lossless() ? "yes" : "no"), inexact, outl, r.status, r.gate_fraction,
               r.error_ratio, r.componentwise_ratio, fmt_count(r.bitwise_differences));
    gate_failures += r.status != "pass";
    if (!tally.count(r.kernel)) order.push_back(r.kernel);
    Tally& t = tally[r.kernel];
    ++t.cases;
    t.pass += r.status == "pass";
    t.lossless += r.bitwise_differences >= 0 && r.stats.lossless();
    t.numerical += r.status == "pass" && r.componentwise_ratio <= 2;
    t.bitwise += r.bitwise_differences == 0;
    rows.push_back({{"case", r.case_id}, {"spec", r.spec}, {"kernel", r.kernel}, {"status", r.status}, {"reason", r.reason},
                    {"gate_fraction", r.gate_fraction}, {"max_abs", r.max_abs}, {"native_max_abs", r.native_max_abs},
                    {"error_ratio", r.error_ratio}, {"componentwise", r.componentwise},
                    {"native_componentwise", r.native_componentwise}, {"componentwise_ratio", r.componentwise_ratio},
                    {"bitwise_differences", r.bitwise_differences}, {"elements", r.elements}, {"lossless", r.stats.lossless()},
                    {"stats", to_string(r.stats)}, {"time_ms", r.time_ms}});
  }
  fmt::print("\nper strategy, cases out of {}: model quality (gate passes), lossless (no conversion rounded), numerical (gate "
             "passes and cw/nat <= 2), bitwise (identical to native)\n",
             order.empty() ? 0 : tally[order.front()].cases);
  fmt::print("{:<34} {:>8} {:>9} {:>10} {:>8}\n", "kernel", "quality", "lossless", "numerical", "bitwise");
  for (const auto& k : order) {
    const Tally& t = tally[k];
    fmt::print("{:<34} {:>8} {:>9} {:>10} {:>8}\n", k, t.pass, t.lossless, t.numerical, t.bitwise);
  }
  fmt::print("\n{} of {} (case, strategy) pairs fail the gate (the direct cast is expected to fail where values leave fp16's range;\n"
             "single-scale strategies where a line spans more than 32 binades and cancellation exposes the lost bits)\n",
             gate_failures, rep.rows.size());
  if (!a.json.empty()) {
    nlohmann::json spans = nlohmann::json::array();
    for (const auto& r : rep.spans)
      spans.push_back({{"span", r.span}, {"kernel", r.kernel}, {"inexact", r.inexact}, {"c_differs", r.c_differs}, {"subnormal", r.subnormal}});
    write_file_atomic(a.json, nlohmann::json({{"kind", "experiment"},
                                              {"experiment", "bf16-on-fp16"},
                                              {"command", command_line()},
                                              {"device", rep.device},
                                              {"native", rep.native},
                                              {"derived_max_lossless_span", rep.derived_max_lossless_span},
                                              {"measured_first_lossy_span", rep.measured_first_lossy_span},
                                              {"measured_consistent", rep.measured_consistent},
                                              {"spans", spans},
                                              {"rows", rows}})
                                      .dump(2) +
                                  "\n");
  }
  return rep.measured_consistent ? 0 : kExitGateFailed;
}

/// The FP8 accumulation question (docs/tensor_cores.md): measured error next to the card's prediction.
int run_fp8_accumulation(const Args& a) {
  const bool cuda = a.device == "cuda";
  if (!cuda && a.device != "cpu") throw InputError("--device: expected cpu or cuda, got '" + a.device + "'");
  const std::int64_t mn = a.mn > 0 ? a.mn : 256;
  prepare_cards(a.card, a.card_samples, fp8_accumulation_kernels());
  const Fp8AccReport rep = fp8_accumulation_experiment(mn, a.k, cuda);
  fmt::print("FP8 accumulation: M = N = {}, K = {}, N(0, 1) values rounded to the FP8 format (errors are the accumulation's), device: {}\n", rep.m,
             rep.k, rep.device);
  fmt::print("{:<40} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}\n", "kernel", "window", "result", "measured F", "predicted F",
             "measured cw", "predicted cw", "fp32acc F", "fp32acc cw", "bitwise");
  const auto num = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.4g}", v); };
  nlohmann::json rows = nlohmann::json::array();
  bool disagreement = false;
  for (const Fp8AccRow& r : rep.rows) {
    fmt::print("{:<40} {:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}\n", r.kernel, r.card_align_bits < 0 ? "-" : std::to_string(r.card_align_bits),
               r.card_acc_bits < 0 ? "-" : std::to_string(r.card_acc_bits), num(r.measured_fro), num(r.predicted_fro), num(r.measured_cw),
               num(r.predicted_cw), num(r.fp32_fro), num(r.fp32_cw), r.agrees < 0 ? "-" : r.agrees ? "equal" : "DIFFERS");
    fmt::print("{:<40}   {}\n", "", r.status.empty() ? r.card : r.status);
    disagreement = disagreement || r.agrees == 0;
    rows.push_back({{"kernel", r.kernel}, {"format", r.format}, {"promote_every", r.promote_every}, {"card", r.card},
                    {"card_align_bits", r.card_align_bits}, {"card_acc_bits", r.card_acc_bits}, {"predicted_frobenius", r.predicted_fro},
                    {"predicted_componentwise", r.predicted_cw}, {"measured_frobenius", r.measured_fro}, {"measured_componentwise", r.measured_cw},
                    {"status", r.status}, {"agrees", r.agrees}, {"agreement", r.agreement}, {"fp32acc_frobenius", r.fp32_fro},
                    {"fp32acc_componentwise", r.fp32_cw}});
  }
  fmt::print("F: normwise ||C - ref||_F / ||ref||_F; cw: max |c - ref| / (|A||B|)_ij; bitwise: device output vs the card's prediction\n");
  if (!a.json.empty())
    write_file_atomic(a.json, nlohmann::json({{"kind", "experiment"}, {"experiment", "fp8-accumulation"}, {"command", command_line()},
                                              {"m", rep.m}, {"n", rep.n}, {"k", rep.k}, {"device", rep.device}, {"rows", rows}})
                                      .dump(2) +
                                  "\n");
  return disagreement ? kExitGateFailed : kExitPass;
}

int run_experiment(const Args& a) {
  // accumulation has one method, the TF32 article's (its preset is the default)
  if (a.which == "fp8-accumulation") return run_fp8_accumulation(a);
  if (!a.preset.empty() || a.which == "accumulation") {
    PresetArgs p{a.which, a.preset.empty() ? "tf32-article" : a.preset, a.device_given ? a.device : "auto", a.mn, a.pairs,
                 a.seed, a.range_given, a.json, a.html};
    return run_experiment_preset(p);
  }
  if (!a.html.empty()) throw InputError("--html: only the presets and accumulation write an HTML report (certify --html, run-suite --html for suites)");
  if (a.which == "three-pipeline") return run_three_pipeline(a);
  if (a.which == "split-scalar") return run_split_scalar(a);
  if (a.which == "bf16-on-fp16") return run_bf16_on_fp16(a);
  if (a.which == "scale-rules") return run_scale_rules_experiment(a.seed, a.json);
  throw InputError("unknown experiment '" + a.which + "' (valid: split-scalar, three-pipeline, bf16-on-fp16, accumulation, scale-rules, fp8-accumulation)");
}

}  // namespace

void add_experiment(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("experiment", "Experiments: split-scalar (split products vs exact), three-pipeline (fp32 / fp16-fp32acc / fp16-fp16acc table), bf16-on-fp16 (span boundary, correctness levels), accumulation (fp16 stall, error growth with K), scale-rules (block scale rules compared); --preset: a published method (docs/experiments.md), fp8-accumulation (FP8 mma.sync at K = 4096: measured vs the behaviour card's prediction)");
  auto a = std::make_shared<Args>();
  app->add_option("name", a->which, "split-scalar | three-pipeline | bf16-on-fp16 | accumulation | scale-rules | fp8-accumulation")->required();
  app->add_option("--preset", a->preset,
                  "Follow a published method to the letter: split-scalar panorama, three-pipeline course, accumulation "
                  "tf32-article (its default); without it fpcert's conventions");
  app->add_option("--device", a->device,
                  "cuda or cpu: three-pipeline defaults to cuda (tiled CUDA kernels; cpu: their models); split-scalar and "
                  "bf16-on-fp16 run on the CPU unless --device cuda is given (device products compared bit for bit with the "
                  "CPU's; the CUDA kernels next to gemm_bf16_f32acc_mma_sm80); the course and tf32-article presets: auto (CUDA when "
                  "a device answers, else CPU models), cuda or cpu")
      ->capture_default_str()
      ->each([a](const std::string&) { a->device_given = true; });
  app->add_option("--mn", a->mn, "three-pipeline, bf16-on-fp16, accumulation: override M = N")->check(integer_in(1, 1 << 30));
  app->add_option("--pairs", a->pairs, "Number of scalar pairs")->capture_default_str()->check(integer_in(1, std::uint64_t{1} << 40));
  app->add_option("--seed", a->seed, "Philox key")->capture_default_str()->check(integer_in(0, ~std::uint64_t{0}));
  app->add_option("--emin", a->emin, "Smallest exponent")->capture_default_str()->check(signed_integer_in(-126, 127))->each([a](const std::string&) { a->range_given = true; });
  app->add_option("--emax", a->emax, "Largest exponent")->capture_default_str()->check(signed_integer_in(-126, 127))->each([a](const std::string&) { a->range_given = true; });
  app->add_option("--json", a->json, "Write the table as JSON")->check(output_path());
  app->add_option("--html", a->html, "Presets and accumulation: write the tables as a self-contained HTML report")->check(output_path());
  app->add_option("--k", a->k, "fp8-accumulation: K")->capture_default_str()->check(integer_in(1, 1 << 24));
  app->add_option("--card", a->card, "fp8-accumulation: behaviour cards: probe (this device), none, or a JSON file of `fpcert probe tensor-cores`")
      ->capture_default_str();
  app->add_option("--card-samples", a->card_samples, "fp8-accumulation with --card probe: validation samples per instruction")
      ->capture_default_str()
      ->check(integer_in(1, std::uint64_t{1} << 40));
  reg.push_back({app, [a] { return run_experiment(*a); }});
}

}  // namespace fpcert::cli
