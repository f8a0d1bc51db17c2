// cli/plugins.hpp — the commands' --plugin handling (isolation of what plugins run:
// suites/isolate.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fpcert::cli {

/// Adds the repeatable `--plugin LIB` option.
CLI::Option* add_plugin_option(CLI::App* app, std::vector<std::string>& plugins);
/// Load every plugin before anything runs; a bad one is an InputError naming it (exit 2).
void load_plugins(const std::vector<std::string>& paths);

}  // namespace fpcert::cli
