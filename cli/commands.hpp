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

/// Each cli/cmd_*.cpp registers its subcommand with a static Registrar, so adding a command is
/// adding a file: `static Registrar reg("name", order, add_name);` (order sorts `fpcert --help`).
using AddFn = void (*)(CLI::App& root, Registry& reg);
struct Registrar {
  Registrar(const char* name, int order, AddFn fn);
};
/// All registered commands, in order.
void add_all_commands(CLI::App& root, Registry& reg);

/// The command line as typed (for environment stamps and reproduction commands).
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace fpcert::cli
