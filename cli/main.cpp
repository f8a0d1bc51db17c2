// cli/main.cpp — the fpcert command: subcommands, exit codes (0 pass, 1 gate failed, 2 usage or
// input error, 3 kernel or device failure).
#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "oracle/error.hpp"

namespace fpcert::cli {
namespace {
std::string g_command_line;
struct Entry {
  const char* name;
  int order;
  AddFn fn;
};
std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}
}  // namespace
Registrar::Registrar(const char* name, int order, AddFn fn) { entries().push_back({name, order, fn}); }
void add_all_commands(CLI::App& root, Registry& reg) {
  auto e = entries();
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.order < b.order; });
  for (const auto& x : e) x.fn(root, reg);
}
const std::string& command_line() { return g_command_line; }
void set_command_line(int argc, char** argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    const std::string a = argv[i];
    const bool quote = a.find_first_of(" \t'\"$") != std::string::npos || a.empty();
    g_command_line += quote ? "'" + a + "'" : a;
  }
}
}  // namespace fpcert::cli

int main(int argc, char** argv) {
  using namespace fpcert;
  cli::set_command_line(argc, argv);
  CLI::App app{"fpcert — certify floating-point GPU kernels against correctly rounded references"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fpcert 0.1.0");
  cli::Registry reg;
  cli::add_all_commands(app, reg);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    for (const auto& c : reg)
      if (c.app->parsed()) return c.action();
  } catch (const InputError& e) {
    std::fprintf(stderr, "fpcert: error: %s\n", e.what());
    return kExitUsage;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "fpcert: device or kernel failure: %s\n", e.what());
    return kExitKernelFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fpcert: error: %s\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}
