// tests/fuzz/fuzz_options.cpp — libFuzzer target: the option layer over the real command tree
// (cli/commands.hpp, cli/options.hpp). The bytes are a command line, its words split at NUL bytes.
// Parsing it may refuse it only with CLI11's parse errors; planning the parsed command's outputs
// against its inputs (check_command_io, read-only) only with InputError; and whatever parses, every
// numeric option's value is a finite number: NaN and infinities are refused by every range check
// (issue 34: `--min-score nan` passed a 0 % score). No action runs.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"

namespace {

/// Every parsed numeric option's values are finite numbers; aborts (a finding) otherwise.
void check_numbers(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_type_size() == 0 || o->count() == 0) continue;
    const std::string full = o->get_type_name();
    const std::string base = full.substr(0, full.find(':'));
    if (base != "INT" && base != "UINT" && base != "FLOAT") continue;
    for (const std::string& v : o->results()) {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d)) {
        std::fprintf(stderr, "fuzz_options: %s took '%s', which is not a finite number\n", o->get_name().c_str(), v.c_str());
        std::abort();
      }
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_numbers(*sub);
}

void check_io(const CLI::App& app) {
  try {
    fpcert::cli::check_command_io(app);
  } catch (const fpcert::InputError&) {
  }
  for (const CLI::App* sub : app.get_subcommands()) check_io(*sub);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words = {"fpcert"};
  std::string w;
  for (std::size_t i = 0; i < size && words.size() < 24; ++i) {
    if (data[i] == 0) {
      words.push_back(w);
      w.clear();
    } else if (w.size() < 512) {
      w += static_cast<char>(data[i]);
    }
  }
  if (!w.empty() && words.size() < 24) words.push_back(w);
  std::vector<char*> argv;
  for (auto& s : words) argv.push_back(s.data());
  // One command tree for every input (CLI11 clears the results of the last parse before the next).
  static CLI::App& root = [] () -> CLI::App& {
    static CLI::App app;
    static fpcert::cli::Registry reg;
    app.require_subcommand(1);
    fpcert::cli::add_all_commands(app, reg);
    return app;
  }();
  try {
    root.clear();
    root.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {  // a parse error, or --help / --version
    return 0;
  }
  check_numbers(root);
  for (const CLI::App* sub : root.get_subcommands()) check_io(*sub);
  return 0;
}
