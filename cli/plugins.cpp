// cli/plugins.cpp — --plugin loading.
#include "cli/plugins.hpp"

#include "plugin/loader.hpp"

namespace fpcert::cli {

CLI::Option* add_plugin_option(CLI::App* app, std::vector<std::string>& plugins) {
  return app->add_option("--plugin", plugins,
                         "Load kernels from a plugin library (repeatable); implies --isolate (docs/plugin.md)")
      ->allow_extra_args(false)  // one library per --plugin: a path never swallows the next argument
      ->take_all();              // repeat --plugin for several
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const auto& p : paths) (void)load_plugin(p);
}

}  // namespace fpcert::cli
