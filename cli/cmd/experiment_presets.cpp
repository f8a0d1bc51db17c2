// cli/cmd/experiment_presets.cpp — the presets of `fpcert experiment` (docs/experiments.md).
#include "cli/cmd/experiment_presets.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "reports/experiment_text.hpp"
#include "reports/html/html.hpp"
#include "suites/run/environment.hpp"
#include "suites/experiments/preset_gemm.hpp"
#include "suites/experiments/presets.hpp"

namespace fpcert::cli {

void emit_experiment(const ExperimentRecord& r, const std::string& json, const std::string& html) {
  std::fputs(experiment_text(r).c_str(), stdout);
  if (!json.empty()) {
    write_file_atomic(json, to_json(r).dump(2) + "\n");
    fmt::print("results: {}\n", json);
  }
  if (!html.empty()) {
    ReportInput in;
    in.experiments.push_back(r);
    write_html_report(html, in);
    fmt::print("HTML report: {}\n", html);
  }
}

int run_experiment_preset(const PresetArgs& a) {
  (void)find_preset("experiment " + a.which, a.preset);  // InputError naming the valid presets
  ExperimentRecord rec;
  if (a.which == "split-scalar") {
    if (a.device != "auto" && a.device != "cpu")
      throw InputError("split-scalar --preset panorama computes its scalar products on the CPU (fp32 arithmetic in a fixed "
                       "order, the same on every IEEE machine); --device cuda compares fpcert's device kernels, whose term "
                       "orders are fpcert's: run it without --preset");
    if (a.range_given) throw InputError("split-scalar --preset panorama fixes u in [-60, 60]: drop --emin/--emax");
    if (a.pairs < 1) throw InputError("--pairs must be at least 1");
    rec = split_scalar_panorama_record(split_scalar_panorama(a.pairs, a.seed), a.pairs, a.seed);
    rec.env = make_environment(command_line(), nullptr);
  } else {
    PresetGemmOptions o;
    o.device = parse_preset_device(a.device);
    o.mn = a.mn;
    o.command = command_line();
    if (::isatty(2))
      o.on_progress = [](const std::string& line) {
        std::fprintf(stderr, "\r\033[K%s", line.substr(0, 150).c_str());
        std::fflush(stderr);
      };
    rec = a.which == "three-pipeline" ? three_pipeline_course(o) : accumulation_tf32_article(o);
    if (::isatty(2)) std::fprintf(stderr, "\r\033[K");
  }
  emit_experiment(rec, a.json, a.html);
  if (rec.extra.contains("run")) {  // a kernel that crashed, hung or threw: exit 3 (DESIGN.md)
    const auto& n = rec.extra["run"]["counts"];
    if (n.value("crashed", 0) + n.value("hung", 0) + n.value("error", 0) > 0) return kExitKernelFailed;
  }
  return rec.passed ? kExitPass : kExitGateFailed;
}

}  // namespace fpcert::cli
