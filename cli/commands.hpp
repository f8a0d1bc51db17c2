// cli/commands.hpp — each subcommand registers itself on the root CLI11 app with an action.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fpcert::cli {

/// What a subcommand runs once its arguments parsed; returns the exit code (oracle/error.hpp).
using Action = std::function<int()>;

struct Command {
  CLI::App* app = nullptr;
  Action action;
};

using Registry = std::vector<Command>;

void add_formats(CLI::App& root, Registry& reg);
void add_convert(CLI::App& root, Registry& reg);

/// The command line as typed (for environment stamps and reproduction commands).
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace fpcert::cli
