// cli/plugins.hpp — the commands' --plugin handling, and running work in a child process
// (isolation) for commands other than the suites' own (suites/suite.cpp isolates cases).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fpcert::cli {

/// Adds the repeatable `--plugin LIB` option.
CLI::Option* add_plugin_option(CLI::App* app, std::vector<std::string>& plugins);
/// Load every plugin before anything runs; a bad one is an InputError naming it (exit 2).
void load_plugins(const std::vector<std::string>& paths);

/// What came back from a child process.
struct ChildOutcome {
  enum class Kind { Ok, Crashed, Hung } kind = Kind::Ok;
  std::string payload;  ///< what body() returned (Ok)
  std::string reason;   ///< signal, exit status or timeout (Crashed, Hung)
};
/// Run body() in a forked child and return its result text; a child that dies, exits without a
/// result or outlives timeout_s (then killed) is reported instead. body() must not throw (an
/// exception in the child counts as a crash with exit status 4).
ChildOutcome run_in_child(const std::function<std::string()>& body, double timeout_s);

}  // namespace fpcert::cli
