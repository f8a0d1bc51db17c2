// cli/commands.cpp — the list of subcommands, the command line, and the command's error-to-exit-code mapping.
#include "cli/commands.hpp"

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
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
  add_audit(root, reg);
  add_diagnose(root, reg);
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

/// An error's text as printed: every control byte of the user's text inside it (a name carrying a
/// newline or an escape sequence) shown as \xNN by the one escaper (base/input_file.hpp); fpcert's own
/// continuation lines ("\n  " and an indented item) stay lines. One line cannot become two.
std::string message_text(const std::string& m) {
  std::string out;
  for (std::size_t from = 0;;) {
    const auto nl = m.find("\n  ", from);
    out += printable(std::string_view(m).substr(from, nl == std::string::npos ? std::string::npos : nl - from), std::string::npos);
    if (nl == std::string::npos) return out;
    out += "\n  ";
    from = nl + 3;
  }
}

void print_error(const char* prefix, const std::string& what) {
  std::fprintf(stderr, "%s%s\n", prefix, message_text(what).c_str());
}

/// Every output of the parsed command (and of its parsed subcommand) planned against every input before
/// any work (cli/options.hpp): an output folder of a config may be created, so with --config missing
/// folders are fine here.
void check_io_tree(const CLI::App& app) {
  const CLI::Option* config = app.get_option_no_throw("--config");
  check_command_io(app, {}, config && config->count() > 0);
  for (const CLI::App* sub : app.get_subcommands()) check_io_tree(*sub);
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
    print_error("fpcert: error: ", e);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error("", e.what());  // CLI11's text quotes the values given: escaped as every message is
    std::fprintf(stderr, "Run with --help for more information.\n");
    return kExitUsage;
  }
  try {
    check_environment();
    for (const auto& c : reg)
      if (c.app->parsed()) {
        check_io_tree(*c.app);
        // `--json -` (any output to standard output): the tables and messages go to stderr then.
        for (const auto& [what, path] : command_outputs(*c.app))
          if (path == "-") reserve_stdout_for_data();
        for (const CLI::App* sub : c.app->get_subcommands())
          for (const auto& [what, path] : command_outputs(*sub))
            if (path == "-") reserve_stdout_for_data();
        // fpcert returns its exit code from here; an exit() before then is a plugin's (cli/exit_codes.hpp).
        const ExitGuard guard("error: code that is not fpcert's (a plugin's) ended the process while `fpcert " + c.app->get_name() +
                              "` was running");
        return c.action();
      }
  } catch (const InputError& e) {
    print_error("fpcert: error: ", e.what());
    return kExitUsage;
  } catch (const DeviceError& e) {
    print_error("fpcert: device or kernel failure: ", e.what());
    return kExitKernelFailed;
  } catch (const std::bad_alloc&) {
    print_error("fpcert: error: ", "out of memory (" + command_line() + "): the problem is too large for this machine; use smaller sizes");
    return kExitUsage;
  } catch (const std::length_error& e) {
    print_error("fpcert: error: ", std::string("a size beyond what this machine can hold (") + e.what() + ", in " + command_line() +
                                       "); use smaller sizes");
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error("fpcert: error: ", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace fpcert::cli
