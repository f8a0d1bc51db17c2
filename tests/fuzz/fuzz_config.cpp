// tests/fuzz/fuzz_config.cpp — libFuzzer target: fpcert.toml (cli/config.hpp). Any text either
// parses into a config or throws InputError naming the file; nothing else escapes.
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "cli/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)fpcert::cli::parse_project_config(text, "/fuzz/fpcert.toml");
  } catch (const fpcert::InputError&) {
  }
  return 0;
}
