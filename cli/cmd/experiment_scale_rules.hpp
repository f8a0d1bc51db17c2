// cli/cmd/experiment_scale_rules.hpp — `fpcert experiment scale-rules` (cli/cmd/experiment_scale_rules.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace fpcert::cli {

/// Prints the scale-rule comparison tables (and writes them as JSON to json_path when not empty).
int run_scale_rules_experiment(std::uint64_t seed, const std::string& json_path);

}  // namespace fpcert::cli
