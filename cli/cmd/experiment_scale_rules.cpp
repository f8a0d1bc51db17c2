// cli/cmd/experiment_scale_rules.cpp — `fpcert experiment scale-rules`: the block scale rules compared per
// format on normal and heavy-tailed data (suites/experiments/scale_rules.hpp), as tables and JSON.
#include "cli/cmd/experiment_scale_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "suites/experiments/scale_rules.hpp"

namespace fpcert::cli {

int run_scale_rules_experiment(std::uint64_t seed, const std::string& json_path) {
  const auto t0 = std::chrono::steady_clock::now();
  const ScaleRuleReport rep = scale_rule_experiment(seed);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("scale rules, element rounding nearest-even; arrays {} and {}; GEMM 128 x 128 x 1024 of the same kinds\n",
             rep.normal_spec, rep.heavy_spec);
  fmt::print("{:<11} {:<6} {:<13} {:>9} {:>9} {:>8} {:>10} {:>10} {:>10} {:>11}\n", "format", "rule", "data", "max sat", "sat elem",
             "flushed", "rel med", "rel p99", "rel max", "GEMM frob");
  nlohmann::json rows = nlohmann::json::array();
  for (const ScaleRuleRow& r : rep.rows) {
    fmt::print("{:<11} {:<6} {:<13} {:>8.3f}% {:>8.4f}% {:>7.3f}% {:>10.3g} {:>10.3g} {:>10.3g} {:>11.4g}\n", r.format, r.rule, r.data,
               100 * r.max_saturated, 100 * r.saturated, 100 * r.flushed, r.rel_median, r.rel_p99, r.rel_max, r.gemm_frobenius);
    rows.push_back({{"format", r.format}, {"rule", r.rule}, {"data", r.data}, {"blocks", r.blocks}, {"elements", r.elements},
                    {"blocks_max_saturated", r.max_saturated}, {"elements_saturated", r.saturated}, {"flushed", r.flushed},
                    {"rel_median", r.rel_median}, {"rel_p99", r.rel_p99}, {"rel_max", r.rel_max}, {"gemm_frobenius", r.gemm_frobenius}});
  }
  fmt::print("\neach rule against the reference rule (floor; nvfp4: even), per block: the scale differs; the dequantized values\n"
             "differ (a different power-of-two scale alone keeps every significand); among those, the rule's block error\n"
             "(max |x - q(x)| / amax) smaller (better) or larger (worse)\n");
  fmt::print("{:<11} {:<13} {:<6} {:<6} {:>8} {:>13} {:>13} {:>8} {:>8}\n", "format", "data", "rule", "vs", "blocks", "scale differs",
             "values differ", "better", "worse");
  nlohmann::json dis = nlohmann::json::array();
  for (const ScaleRuleDisagreement& d : rep.disagreements) {
    const double nb = static_cast<double>(std::max<std::int64_t>(1, d.blocks));
    fmt::print("{:<11} {:<13} {:<6} {:<6} {:>8} {:>12.2f}% {:>12.2f}% {:>8} {:>8}\n", d.format, d.data, d.rule, d.versus, d.blocks,
               100.0 * static_cast<double>(d.scale_differs) / nb, 100.0 * static_cast<double>(d.values_differ) / nb, d.better, d.worse);
    dis.push_back({{"format", d.format}, {"data", d.data}, {"rule", d.rule}, {"versus", d.versus}, {"blocks", d.blocks},
                   {"scale_differs", d.scale_differs}, {"values_differ", d.values_differ}, {"better", d.better}, {"worse", d.worse},
                   {"examples", d.examples}});
  }
  fmt::print("\n({:.1f} s)\n", secs);
  if (!json_path.empty())
    write_file_atomic(json_path, nlohmann::json({{"kind", "experiment"},
                                                 {"experiment", "scale-rules"},
                                                 {"command", command_line()},
                                                 {"seed", seed},
                                                 {"normal", rep.normal_spec},
                                                 {"heavy_tailed", rep.heavy_spec},
                                                 {"rows", rows},
                                                 {"disagreements", dis}})
                                         .dump(2) +
                                     "\n");
  return kExitPass;
}

}  // namespace fpcert::cli
