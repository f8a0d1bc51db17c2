// cli/cmd/cmd_report.cpp — `fpcert report`: render saved results (certify/run-suite JSON or JSON lines,
// convert --exhaustive JSON) as one self-contained HTML file; runs of one suite are compared (docs/report.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"
#include "reports/html/html.hpp"
#include "results/compare.hpp"

namespace fpcert::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
};

}  // namespace

void add_report(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("report",
                                  "Render results files (.json, .jsonl) as one self-contained HTML report; two runs of one suite "
                                  "(report OLD.json NEW.json) open with what changed between them");
  auto a = std::make_shared<ReportArgs>();
  app->add_option("results", a->inputs, "Results of certify / run-suite (--json, or a crashed run's .partial.jsonl), of convert --exhaustive --json, of experiment --json, or of bench_attention*_fa_rule --json")
      ->required();
  app->add_option("-o,--output", a->output, "The HTML file to write")->required()->check(output_path());
  reg.push_back({app, [a] {
                   ReportInput in;
                   for (const auto& p : a->inputs) read_report_file(p, in);  // InputError names the file: exit 2
                   for (const auto& r : in.runs)
                     if (const auto d = r.notes.find("dropped_lines"); d != r.notes.end())
                       std::fprintf(stderr, "fpcert: warning: %s\n", d->second.c_str());
                   write_html_report(a->output, in);
                   for (const auto& [o, n] : comparable_runs(in.runs))
                     fmt::print("run {} against run {}: {}", n + 1, o + 1, comparison_text(compare_runs(in.runs[o], in.runs[n]), in.runs[o], in.runs[n]));
                   fmt::print("report: {} ({} run(s), {} conversion check(s), {} experiment(s), {} audit(s){})\n", a->output,
                              in.runs.size(), in.conversions.size(), in.experiments.size(), in.audits.size(),
                              (in.diagnoses.empty() ? std::string() : fmt::format(", {} diagnosis(es)", in.diagnoses.size())) +
                                  (in.fa_rules.empty() ? std::string() : fmt::format(", {} FlashAttention rule record(s)", in.fa_rules.size())));
                   return kExitPass;
                 }});
}

}  // namespace fpcert::cli
