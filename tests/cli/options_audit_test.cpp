// tests/cli/options_audit_test.cpp — the option layer audited over the real command tree, in-process:
// every numeric option of every command (and subcommand) goes through one of fpcert's checked parsers
// (cli/options.hpp), and each of them refuses NaN, infinities and text around the number. Issue 34,
// class 4: `--min-score nan` passed a 0 % score because CLI::Range lets NaN through every comparison; a
// new option added without a checked parser fails here, naming it.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace {

struct NumericOption {
  std::vector<std::string> path;  ///< the subcommands leading to it ("probe", "tensor-cores")
  std::string name;               ///< its long name
  std::string type;               ///< as CLI11 names it: INT, UINT, FLOAT
  bool checked = false;           ///< carries one of fpcert's checked parsers
  bool is_signed = false;         ///< an integer that may be negative (signed_integer_in)
};

const std::vector<std::string> kCheckedParsers = {"integer_in", "signed_integer_in", "number_in", "positive_number", "seconds"};

bool has_validator(CLI::Option* o, const std::string& name) {
  try {
    return o->get_validator(name) != nullptr;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

void walk(CLI::App* app, std::vector<std::string> path, std::vector<NumericOption>& out) {
  for (CLI::Option* o : app->get_options([](const CLI::Option*) { return true; })) {
    if (o->get_type_size() == 0 || o->get_name(false, true).empty()) continue;  // flags and positionals
    const std::string full = o->get_type_name();
    const std::string base = full.substr(0, full.find(':'));
    if (base != "INT" && base != "UINT" && base != "FLOAT" && base != "NUMBER") continue;
    NumericOption n{path, o->get_name(false, true), base, false, has_validator(o, "signed_integer_in")};
    for (const auto& v : kCheckedParsers) n.checked = n.checked || has_validator(o, v);
    out.push_back(n);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    auto p = path;
    p.push_back(sub->get_name());
    walk(sub, p, out);
  }
}

std::vector<NumericOption> numeric_options() {
  CLI::App root;
  fpcert::cli::Registry reg;
  fpcert::cli::add_all_commands(root, reg);
  std::vector<NumericOption> out;
  walk(&root, {}, out);
  return out;
}

/// Parse `fpcert PATH... OPTION value` in a fresh command tree (no action runs); true when the value
/// was refused by a validator or a conversion.
bool refused(const NumericOption& n, const std::string& value) {
  CLI::App root;
  fpcert::cli::Registry reg;
  fpcert::cli::add_all_commands(root, reg);
  std::vector<std::string> args = {"fpcert"};
  args.insert(args.end(), n.path.begin(), n.path.end());
  args.push_back(n.name);
  args.push_back(value);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    root.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ValidationError&) {
    return true;
  } catch (const CLI::ConversionError&) {
    return true;
  } catch (const CLI::ParseError&) {
    return false;  // refused for another reason (a missing required option): the value went through
  }
  return false;
}

}  // namespace

TEST_CASE("every numeric option of every command goes through one of the checked parsers") {
  const auto opts = numeric_options();
  REQUIRE(opts.size() > 20);  // the audit sees the command tree (certify alone has several)
  std::string unchecked;
  for (const auto& n : opts)
    if (!n.checked) {
      for (const auto& p : n.path) unchecked += p + " ";
      unchecked += n.name + " (" + n.type + "); ";
    }
  INFO("numeric options without a checked parser (cli/options.hpp): " << unchecked);
  CHECK(unchecked.empty());
}

TEST_CASE("every numeric option refuses nan, inf, a sign where none belongs and text around the number") {
  for (const auto& n : numeric_options()) {
    std::string where;
    for (const auto& p : n.path) where += p + " ";
    for (const std::string v : {"nan", "-nan", "NaN", "inf", "-inf", "1e999", " 1", "1 ", "1x", ""}) {
      INFO(where << n.name << " '" << v << "'");
      CHECK(refused(n, v));
    }
    if (n.type != "FLOAT") {
      INFO(where << n.name << " -1 (unsigned), 2^64 and -2^64, a fraction");
      if (!n.is_signed) CHECK(refused(n, "-1"));
      CHECK(refused(n, "18446744073709551616"));
      CHECK(refused(n, "-18446744073709551616"));
      CHECK(refused(n, "1.5"));
    }
  }
}
