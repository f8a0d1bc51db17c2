// cli/commands.hpp — the fpcert command: each subcommand adds itself to the root CLI11 app with an
// action (one add_* function per cli/cmd_*.cpp, listed in one place: cli/commands.cpp), and run(),
// which main.cpp calls and tests/cli/ calls in-process.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert::cli {

/// What a subcommand runs once its arguments parsed; returns the exit code (cli/exit_codes.hpp).
using Action = std::function<int()>;

struct Command {
  CLI::App* app = nullptr;
  Action action;
};

using Registry = std::vector<Command>;

// The subcommands, in the order `fpcert --help` lists them (cli/commands.cpp).
void add_formats(CLI::App& root, Registry& reg);     ///< cli/cmd/cmd_formats.cpp
void add_kernels(CLI::App& root, Registry& reg);     ///< cli/cmd/cmd_kernels.cpp
void add_convert(CLI::App& root, Registry& reg);     ///< cli/cmd/cmd_convert.cpp
void add_quantize(CLI::App& root, Registry& reg);    ///< cli/cmd/cmd_quantize.cpp
void add_gen(CLI::App& root, Registry& reg);         ///< cli/cmd/cmd_gen.cpp
void add_reference(CLI::App& root, Registry& reg);   ///< cli/cmd/cmd_reference.cpp
void add_certify(CLI::App& root, Registry& reg);     ///< cli/cmd/cmd_certify.cpp
void add_run_suite(CLI::App& root, Registry& reg);   ///< cli/cmd/cmd_certify.cpp
void add_experiment(CLI::App& root, Registry& reg);  ///< cli/cmd/cmd_experiment.cpp
void add_selftest(CLI::App& root, Registry& reg);    ///< cli/cmd/cmd_selftest.cpp
void add_mutate(CLI::App& root, Registry& reg);      ///< cli/cmd/cmd_mutate.cpp
void add_report(CLI::App& root, Registry& reg);      ///< cli/cmd/cmd_report.cpp
void add_probe(CLI::App& root, Registry& reg);       ///< cli/cmd/cmd_probe.cpp
void add_reveal(CLI::App& root, Registry& reg);      ///< cli/cmd/cmd_reveal.cpp
void add_tolerance(CLI::App& root, Registry& reg);   ///< cli/cmd/cmd_tolerance.cpp
void add_merge(CLI::App& root, Registry& reg);       ///< cli/cmd/cmd_merge.cpp
void add_audit(CLI::App& root, Registry& reg);       ///< cli/cmd/cmd_audit.cpp
void add_diagnose(CLI::App& root, Registry& reg);    ///< cli/cmd/cmd_diagnose.cpp

/// Every subcommand, in order.
void add_all_commands(CLI::App& root, Registry& reg);

/// Kernel names from --kernel values: comma-separated; the groups cpu, cuda and cublas expand to every
/// honest built-in kernel of that backend and operation, in registry order (cli/cmd/cmd_certify.cpp).
std::vector<std::string> expand_kernel_list(const std::vector<std::string>& in, Operation op = Operation::Gemm);

/// The suite of operation `op` at the level of the GEMM suite `suite` (certify -> reduce, quick -> reduce_quick
/// for reductions); empty when there is none (cli/cmd/cmd_certify.cpp, docs/suites.md).
std::string suite_at_level(const std::string& suite, Operation op);

/// The command line as typed (for environment stamps and reproduction commands).
const std::string& command_line();
/// The arguments as given (argv[0] first): what a --devices parent starts its workers with.
const std::vector<std::string>& command_args();
void set_command_line(int argc, char** argv);

/// The whole command: parse argv, run the chosen subcommand, map errors onto exit codes
/// (0 pass, 1 gate failed, 2 usage or input error, 3 kernel or device failure).
int run(int argc, char** argv);

}  // namespace fpcert::cli
