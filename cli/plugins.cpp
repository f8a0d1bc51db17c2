// cli/plugins.cpp — --plugin loading: probed in a child process, then loaded here under a guard.
#include "cli/plugins.hpp"

#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "cli/exit_codes.hpp"
#include "plugin/loader.hpp"
#include "suites/run/isolate.hpp"

namespace fpcert::cli {
namespace {

constexpr std::string_view kOk = "loaded\n", kRefused = "refused\n";

bool already_loaded(const std::string& path) {
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) return false;
  return std::any_of(loaded_plugins().begin(), loaded_plugins().end(), [&](const PluginSummary& s) { return s.resolved == real; });
}

/// Load `path` in a child process (the one isolation mechanism, suites/run/isolate.hpp) and report what
/// happened there: nothing (it loads), PluginError (not a usable plugin) or DeviceError (it crashed,
/// exited or hung while loading). What the plugin's code does in the child cannot reach fpcert.
void probe_plugin(const std::string& path, double timeout_s) {
  const ChildOutcome c = run_in_child(
      [&]() -> std::string {
        try {
          (void)load_plugin(path);
          return std::string(kOk);
        } catch (const std::exception& e) {
          return std::string(kRefused) + e.what();
        }
      },
      timeout_s);
  const std::string where = "its constructors or fpcert_plugin_enumerate()";
  if (c.ok && c.payload == kOk) return;
  if (c.ok && c.payload.rfind(kRefused, 0) == 0) throw PluginError(c.payload.substr(kRefused.size()));
  if (c.kind == FailureKind::Hung)
    throw DeviceError(fmt::format("plugin '{}' did not finish loading within {} s ({} never returned; it was loaded in a child "
                                  "process, which was killed: nothing ran)",
                                  path, timeout_s, where),
                      FailureKind::Hung);
  if (c.signal)
    throw DeviceError(fmt::format("plugin '{}' crashed while loading: {} died with signal {} ({}); it was loaded in a child process "
                                  "first, so nothing ran",
                                  path, where, c.signal, ::strsignal(c.signal)));
  if (c.exit_status >= 0 && c.payload.empty())
    throw DeviceError(fmt::format("plugin '{}' ended the process while loading: {} called exit({}) (a plugin must return, never "
                                  "exit); it was loaded in a child process first, so nothing ran",
                                  path, where, c.exit_status));
  throw DeviceError(fmt::format("plugin '{}' could not be loaded in a child process: {}", path, c.reason));
}

}  // namespace

CLI::Option* add_plugin_option(CLI::App* app, std::vector<std::string>& plugins) {
  return app->add_option("--plugin", plugins,
                         "Load kernels from a plugin library (repeatable); implies --isolate (docs/plugin.md)")
      ->allow_extra_args(false)  // one library per --plugin: a path never swallows the next argument
      ->take_all();              // repeat --plugin for several
}

void load_plugins(const std::vector<std::string>& paths, double timeout_s) {
  for (const auto& p : paths) {
    if (already_loaded(p)) continue;
    probe_plugin(p, timeout_s);
    // It loaded in the child; loaded here too, its code still may not choose fpcert's exit code.
    const ExitGuard guard(fmt::format("plugin '{}' ended the process while being loaded", p), true);
    (void)load_plugin(p);
  }
}

}  // namespace fpcert::cli
