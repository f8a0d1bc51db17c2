// cli/plugins.hpp — the commands' --plugin handling: every plugin is first loaded in a child process
// (suites/run/isolate.hpp, under a time limit), so that a library whose constructors or
// fpcert_plugin_enumerate() crash, hang or call exit() fails there with one line and exit 3, and only
// then loaded into fpcert itself, under an ExitGuard (cli/exit_codes.hpp). docs/errors.md states the
// contract.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fpcert::cli {

/// Seconds a plugin may take to load (its constructors and fpcert_plugin_enumerate()) in commands
/// without a --timeout of their own.
inline constexpr double kPluginLoadTimeout = 60;

/// Adds the repeatable `--plugin LIB` option.
CLI::Option* add_plugin_option(CLI::App* app, std::vector<std::string>& plugins);
/// Load every plugin before anything runs. Each is probed in a child process first: a library that
/// is not a usable plugin (not a regular file, not loadable, no entry point, an invalid table) is an
/// InputError naming it (exit 2); one that crashes, exits or does not finish loading within
/// `timeout_s` is a DeviceError naming it and what happened (exit 3). Then it is loaded here.
void load_plugins(const std::vector<std::string>& paths, double timeout_s = kPluginLoadTimeout);

}  // namespace fpcert::cli
