// cli/cmd/experiment_presets.hpp — `fpcert experiment NAME --preset P` (docs/experiments.md): runs a
// preset, prints its record (method paragraph, tables), writes its JSON and HTML.
#pragma once

#include <cstdint>
#include <string>

#include "results/experiment_record.hpp"

namespace fpcert::cli {

struct PresetArgs {
  std::string which;          ///< split-scalar | three-pipeline | accumulation
  std::string preset;         ///< panorama | course | tf32-article
  std::string device = "auto";  ///< auto | cuda | cpu (split-scalar's preset: cpu only)
  std::int64_t mn = 0;        ///< override M = N (0: the method's)
  std::uint64_t pairs = 2000000, seed = 1;
  bool range_given = false;   ///< --emin/--emax given (the panorama preset fixes the range)
  std::string json, html;
};

/// Runs the preset; returns the exit code (0; 1 when the experiment's own check failed, e.g. a
/// pipeline failed the course's gate). InputError for an unknown preset or a contradicting option.
int run_experiment_preset(const PresetArgs& a);

/// Prints the record, writes --json and --html (atomically).
void emit_experiment(const ExperimentRecord& r, const std::string& json, const std::string& html);

}  // namespace fpcert::cli
