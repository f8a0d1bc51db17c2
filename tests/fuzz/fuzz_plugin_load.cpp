// tests/fuzz/fuzz_plugin_load.cpp — libFuzzer target: loading a plugin library from bytes, the way
// `--plugin FILE` does (cli/plugins.hpp): the bytes are written to a file, which is checked, loaded
// first in a child process under a time limit, then here. Whatever the bytes, the outcome is a
// PluginError (not a usable plugin: exit 2) or a DeviceError (it crashed, exited or hung while loading:
// exit 3); nothing else escapes and this process survives: a library's code cannot take fpcert down
// or choose its exit code (docs/errors.md, "Plugins that misbehave while loading").
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/error.hpp"
#include "cli/plugins.hpp"
#include "plugin/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static int serial = 0;
  // A fresh name for every input: a library is loaded once per path.
  const std::string path = "/tmp/fpcert-fuzz-plugin-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + ".so";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    fpcert::cli::load_plugins({path}, 5);
  } catch (const fpcert::InputError&) {  // PluginError among them
  } catch (const fpcert::DeviceError&) {
  }
  ::unlink(path.c_str());
  return 0;
}
