// cli/commands.cpp — the list of subcommands, the command line, and the command's error-to-exit-code mapping.
#include "cli/commands.hpp"

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "cli/exit_codes.hpp"
#include "cli/options.hpp"

namespace fpcert::cli {
namespace {
std::string g_command_line;
std::vector<std::string> g_command_args;
}  // namespace

void add_all_commands(CLI::App& root, Registry& reg) {
  add_formats(root, reg);
  add_kernels(root, reg);
  add_convert(root, reg);
  add_quantize(root, reg);
  add_probe(root, reg);
  add_reveal(root, reg);
  add_gen(root, reg);
  add_reference(root, reg);
  add_tolerance(root, reg);
  add_certify(root, reg);
  add_run_suite(root, reg);
  add_experiment(root, reg);
  add_selftest(root, reg);
  add_mutate(root, reg);
  add_report(root, reg);
  add_merge(root, reg);
}

const std::string& command_line() { return g_command_line; }
const std::vector<std::string>& command_args() { return g_command_args; }

void set_command_line(int argc, char** argv) {
  g_command_line.clear();
  g_command_args.assign(argv, argv + argc);
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    const std::string a = argv[i];
    const bool quote = a.find_first_of(" \t'\"$") != std::string::npos || a.empty();
    g_command_line += quote ? "'" + a + "'" : a;
  }
}

namespace {

/// The first word that is not an option, when it is no subcommand: CLI11 would only say "a
/// subcommand is required", never which word it did not know.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == a) return {};
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names += (names.empty() ? "" : ", ") + sub->get_name();
    return "unknown command '" + a + "' (commands: " + names + "; fpcert --help describes them)";
  }
  return {};
}

}  // namespace

int run(int argc, char** argv) {
  set_command_line(argc, argv);
  install_interrupt_handlers();
  CLI::App app{"fpcert — certify floating-point GPU kernels against correctly rounded references"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fpcert 0.1.0");
  Registry reg;
  add_all_commands(app, reg);
  if (const std::string e = unknown_command(app, argc, argv); !e.empty()) {
    std::fprintf(stderr, "fpcert: error: %s\n", e.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    check_environment();
    for (const auto& c : reg)
      if (c.app->parsed()) return c.action();
  } catch (const InputError& e) {
    std::fprintf(stderr, "fpcert: error: %s\n", e.what());
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "fpcert: device or kernel failure: %s\n", e.what());
    return kExitKernelFailed;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fpcert: error: out of memory (%s): the problem is too large for this machine; use smaller sizes\n",
                 command_line().c_str());
    return kExitUsage;
  } catch (const std::length_error& e) {
    std::fprintf(stderr, "fpcert: error: a size beyond what this machine can hold (%s, in %s); use smaller sizes\n", e.what(),
                 command_line().c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fpcert: error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace fpcert::cli
