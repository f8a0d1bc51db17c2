// cli/cmd/cmd_diagnose.cpp — `fpcert diagnose`: which known arithmetic explains a GEMM, conversion, elementwise, reduction,
// softmax or norm kernel's output on a case
// (suites/diagnose/diagnose_run.hpp; docs/diagnose.md); `--identify` measures how often the diagnosis names the
// fault `fpcert selftest` injects into the CPU models.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "suites/mutation/mutation.hpp"
#include "cli/options.hpp"
#include "cli/plugins.hpp"
#include "cli/tc_cards.hpp"
#include "reports/diagnose_text.hpp"
#include "suites/diagnose/diagnose_conversion.hpp"
#include "suites/diagnose/diagnose_eltwise.hpp"
#include "suites/diagnose/diagnose_run.hpp"
#include "suites/diagnose/diagnose_rows.hpp"

namespace fpcert::cli {
namespace {

struct DiagnoseArgs {
  std::string kernel, suite = "certify", json, faults, card = "probe", declared_as;
  std::uint64_t card_samples = 1000000;
  std::vector<std::string> cases, models;
  int top = 8;
  bool no_pairs = false, no_separate = false, identify = false;
  std::vector<std::string> plugins;
};

/// --identify on elementwise kernels (every --model one): each change of diagnose_eltwise.hpp injected and diagnosed.
int run_identify_eltwise(const DiagnoseArgs& a) {
  std::vector<EltwiseChange> changes;
  for (const EltwiseChange c : kAllEltwiseChanges)
    if (a.faults.empty() || ("," + a.faults + ",").find("," + to_string(c) + ",") != std::string::npos) changes.push_back(c);
  if (changes.empty()) throw InputError("diagnose --identify: no elementwise change named in --fault (ftz_results, daz_inputs, round_rz, round_ru, round_rd, last_bit_cleared, round_8_bits)");
  const auto rows = measure_eltwise_identification(a.models, changes);
  int hit = 0, counted = 0, skipped = 0;
  fmt::print("{:<24} {:<17} {:<7} {:>7}  {}\n", "kernel", "change", "ok", "s", "top hypothesis");
  for (const EltwiseIdentificationRow& r : rows) {
    hit += r.identified;
    counted += !r.dormant;
    skipped += r.dormant;
    fmt::print("{:<24} {:<17} {:<7} {:>7.2f}  {} ({:.4g} %, {}){}\n", r.kernel, r.change, r.identified ? "yes" : r.dormant ? "dormant" : "MISS",
               r.seconds, r.top, 100.0 * r.top_fraction, r.kind, r.identified || r.dormant ? "" : "; expected " + r.named);
  }
  fmt::print("identified: {} of {} injected changes ({:.1f} %); {} dormant, not counted\n", hit, counted,
             counted == 0 ? 0.0 : 100.0 * hit / static_cast<double>(counted), skipped);
  if (!a.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const EltwiseIdentificationRow& r : rows)
      j.push_back({{"kernel", r.kernel}, {"change", r.change}, {"named", r.named}, {"identified", r.identified}, {"dormant", r.dormant},
                   {"top", r.top}, {"top_fraction", r.top_fraction}, {"kind", r.kind}, {"seconds", r.seconds}});
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  return counted == 0 || hit * 10 < counted * 9 ? kExitGateFailed : kExitPass;
}

/// --identify on reduction, softmax and norm models (every --model one): each applicable fault injected and diagnosed.
int run_identify_rows(const DiagnoseArgs& a) {
  const std::vector<Fault> faults = a.faults.empty() ? std::vector<Fault>{} : parse_fault_list(a.faults);
  const auto rows = measure_row_identification(a.models, faults, a.suite, a.cases);
  int hit = 0, counted = 0, skipped = 0;
  fmt::print("{:<34} {:<22} {:<7} {:>7}  {}\n", "model", "fault", "ok", "s", "top hypothesis");
  for (const RowIdentificationRow& r : rows) {
    hit += r.identified;
    counted += !r.dormant;
    skipped += r.dormant;
    fmt::print("{:<34} {:<22} {:<7} {:>7.2f}  {} ({:.4g} %, {}){}\n", r.model, r.fault, r.identified ? "yes" : r.dormant ? "dormant" : "MISS",
               r.seconds, r.top, 100.0 * r.top_fraction, r.kind, r.alike.empty() ? "" : "; indistinguishable from " + fmt::format("{}", fmt::join(r.alike, ", ")));
  }
  fmt::print("identified: {} of {} injected faults ({:.1f} %); {} dormant, not counted\n", hit, counted,
             counted == 0 ? 0.0 : 100.0 * hit / static_cast<double>(counted), skipped);
  if (!a.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const RowIdentificationRow& r : rows)
      j.push_back({{"model", r.model}, {"fault", r.fault}, {"identified", r.identified}, {"dormant", r.dormant}, {"top", r.top},
                   {"top_fraction", r.top_fraction}, {"kind", r.kind}, {"alike", r.alike}, {"seconds", r.seconds}});
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  return counted == 0 || hit * 10 < counted * 9 ? kExitGateFailed : kExitPass;
}

int run_identify(const DiagnoseArgs& a) {
  if (!a.models.empty() && std::all_of(a.models.begin(), a.models.end(), [](const std::string& m) { return make_eltwise_kernel(m) != nullptr; }))
    return run_identify_eltwise(a);
  if (!a.models.empty() && std::all_of(a.models.begin(), a.models.end(), [](const std::string& m) { return row_operation(m).has_value(); }))
    return run_identify_rows(a);
  std::vector<std::string> models = a.models;
  if (models.empty())
    for (const auto& k : kernel_registry())
      if (k.backend == Backend::Cpu && k.operation == Operation::Gemm && !k.mutant && k.origin.empty()) models.push_back(k.name);
  const std::vector<Fault> faults = parse_fault_list(a.faults);
  DiagnoseOptions opt;
  opt.pairs = !a.no_pairs;
  const auto rows = measure_identification(models, faults, opt);
  int hit = 0, counted = 0, skipped = 0;
  fmt::print("{:<34} {:<17} {:<7} {:>7}  {}\n", "model", "fault", "ok", "s", "top hypothesis");
  for (const IdentificationRow& r : rows) {
    hit += r.identified;
    counted += !r.dormant;
    skipped += r.dormant;
    fmt::print("{:<34} {:<17} {:<7} {:>7.2f}  {}\n", r.model, r.fault, r.identified ? "yes" : r.dormant ? "dormant" : "MISS", r.seconds, r.top);
    if (!r.identified) fmt::print("    {}\n", r.reason);
  }
  fmt::print("identified: {} of {} injected faults ({:.1f} %); {} dormant or not diagnosed, not counted\n", hit, counted,
             counted == 0 ? 0.0 : 100.0 * hit / static_cast<double>(counted), skipped);
  if (!a.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const IdentificationRow& r : rows)
      j.push_back({{"model", r.model}, {"fault", r.fault}, {"identified", r.identified}, {"dormant", r.dormant}, {"top", r.top},
                   {"reason", r.reason}, {"seconds", r.seconds}});
    write_file_atomic(a.json, j.dump(2) + "\n");
  }
  return counted == 0 || hit * 10 < counted * 9 ? kExitGateFailed : kExitPass;
}

/// The conversion case --case names (one; default: every source code, or the strided sample of a 32-bit source).
std::string conversion_case(const DiagnoseArgs& a) {
  if (a.cases.size() > 1) throw InputError("diagnose: a conversion kernel is diagnosed on one case (all, sample, classes or FIRST+COUNT)");
  return a.cases.empty() ? "all" : a.cases.front();
}

int print_diagnosis(const DiagnoseArgs& a, const DiagnosisRecord& r) {
  if (a.json == "-") {
    fmt::print("{}\n", diagnosis_to_json(r).dump(2));
  } else {
    fmt::print("{}", diagnosis_text(r));
    if (!a.json.empty()) write_file_atomic(a.json, diagnosis_to_json(r).dump(2) + "\n");
  }
  // 0 when the declared arithmetic (or a more precise one) explains the output, 1 otherwise.
  return r.kind == "declared" || r.kind == "hint" ? kExitPass : kExitGateFailed;
}

int run_diagnose(const DiagnoseArgs& a) {
  load_plugins(a.plugins);
  if (a.identify) return run_identify(a);
  if (a.kernel.empty()) throw InputError("diagnose: give --kernel K (or --identify)");
  if (const std::unique_ptr<ElementwiseKernel> ek = make_eltwise_kernel(a.kernel))
    return print_diagnosis(a, diagnose_eltwise_kernel(*ek, a.cases, a.top));
  if (const std::unique_ptr<ConversionKernel> ck = make_conversion_kernel(a.kernel))
    return print_diagnosis(a, diagnose_conversion_kernel(*ck, conversion_case(a), a.top));
  if (row_operation(a.kernel)) return print_diagnosis(a, diagnose_row_kernel(a.kernel, a.suite, a.cases, a.top, nullptr, a.declared_as));
  std::vector<std::string> card_kernels = {a.kernel.substr(0, a.kernel.find('~'))};
  if (!a.declared_as.empty()) card_kernels.push_back(a.declared_as);
  prepare_cards(a.card, a.card_samples, card_kernels);
  DiagnoseKernelOptions o;
  o.kernel = a.kernel;
  o.suite = a.suite;
  o.cases = a.cases;
  o.auto_separate = !a.no_separate;
  o.declared_as = a.declared_as;
  o.opt.top = a.top;
  o.opt.pairs = !a.no_pairs;
  return print_diagnosis(a, diagnose_kernel(o));
}

}  // namespace

void add_diagnose(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("diagnose", "Name the arithmetic that explains a GEMM, conversion, elementwise, reduction, softmax or norm kernel's output on a case (rounding or a bug?)");
  auto a = std::make_shared<DiagnoseArgs>();
  app->add_option("--kernel", a->kernel, "The kernel (fpcert kernels)");
  app->add_option("--case", a->cases, "A case id of --suite, or a generator spec; repeat to add cases that separate look-alikes. A conversion kernel: all, sample, classes (a 32-bit source's classes) or FIRST+COUNT source codes; an elementwise kernel: all (its elementwise suite's cases, the default), a case id of that suite (special, sample, all_f16, all_bf16) or FIRST+COUNT input codes; a reduction, softmax or norm kernel: case ids of its suite (default: every case; --suite quick: its quick suite)");
  app->add_option("--declared-as", a->declared_as, "Judge the kernel against this kernel's declaration (same input and output formats)");
  app->add_option("--suite", a->suite, "The suite whose case ids --case names")->capture_default_str();
  app->add_option("--top", a->top, "Hypotheses listed")->check(integer_in(1, 1000))->capture_default_str();
  app->add_flag("--no-pairs", a->no_pairs, "Only single changes of the declared arithmetic");
  app->add_flag("--no-separate", a->no_separate, "Do not add the suite's separating cases when the top hypothesis has look-alikes");
  app->add_option("--json", a->json, "Write the diagnosis as JSON to this file ('-': print it instead of the text)")->check(output_path());
  app->add_flag("--identify", a->identify, "Measure identification: every fault selftest injects into the CPU GEMM models, diagnosed (elementwise kernels as --model: the changes of docs/diagnose.md, \"Elementwise kernels\"; reduction, softmax or norm models as --model: their operation's faults, \"Reductions, softmax and normalisation\")");
  app->add_option("--model", a->models, "--identify: only these models");
  app->add_option("--fault", a->faults, "--identify: only these faults, comma-separated");
  app->add_option("--card", a->card, "Tensor-core behaviour cards, as certify: probe (this device), none, or a FILE of fpcert probe tensor-cores --json")
      ->capture_default_str();
  app->add_option("--card-samples", a->card_samples, "Validation samples of a probed card")->check(integer_in(1, std::uint64_t{1} << 32))->capture_default_str();
  add_plugin_option(app, a->plugins);
  reg.push_back({app, [a] { return run_diagnose(*a); }});
}

}  // namespace fpcert::cli
