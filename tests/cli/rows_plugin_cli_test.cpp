// tests/cli/rows_plugin_cli_test.cpp — softmax and normalisation kernels of a plugin (ABI minor 6) through the command,
// as a user runs them: `fpcert kernels --plugin` lists them with their operation, `fpcert certify --plugin` certifies the
// example's correct kernels (exit 0) and refuses its buggy ones (exit 1, the exposing case named), `fpcert mutate
// --plugin` scores the faults made around a closed kernel and names the ones it cannot carry (docs/plugin.md,
// "Softmax and normalisation kernels").
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/run_command.hpp"

using fpcert::test::CommandResult;
using fpcert::test::run_command;

namespace {

const std::string kFpcert = fpcert::test::env_or("FPCERT_BIN", FPCERT_BIN);
const std::string kLib = fpcert::test::env_or("FPCERT_TEST_PLUGIN_DIR", FPCERT_TEST_PLUGIN_DIR) + "/libexample_rows_plugin.so";

CommandResult fpcert_cmd(std::vector<std::string> args) {
  args.insert(args.begin(), kFpcert);
  args.insert(args.begin() + 2, {"--plugin", kLib});
  return run_command(args);
}

}  // namespace

TEST_CASE("fpcert kernels / certify --plugin: the example's softmax and norm kernels listed, correct ones certified, buggy refused") {
  const CommandResult k = fpcert_cmd({"kernels"});
  INFO(k.output);
  REQUIRE(k.exit_code == 0);
  CHECK(k.has("example_softmax_f32_shifted        plugin  softmax"));
  CHECK(k.has("example_layernorm_f32_twopass      plugin  norm"));

  const CommandResult ok = fpcert_cmd({"certify", "--kernel", "example_softmax_f32_shifted,example_rmsnorm_f32", "--suite", "quick"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(ok.has("CERTIFIED"));

  const CommandResult smx = fpcert_cmd({"certify", "--kernel", "example_softmax_f32_nomax", "--suite", "softmax_quick"});
  INFO(smx.output);
  CHECK(smx.exit_code == 1);
  CHECK(smx.has("near_overflow on example_softmax_f32_nomax: fail"));

  const CommandResult ln = fpcert_cmd({"certify", "--kernel", "example_layernorm_f32_onepass", "--suite", "norm_quick"});
  INFO(ln.output);
  CHECK(ln.exit_code == 1);
  CHECK(ln.has("mean_large on example_layernorm_f32_onepass: fail"));
}

TEST_CASE("fpcert mutate --plugin --suite softmax_quick: black-box faults killed, the closed kernel's inner faults not applicable") {
  const CommandResult m = fpcert_cmd({"mutate", "--kernel", "example_softmax_f32_shifted", "--suite", "softmax_quick"});
  INFO(m.output);
  CHECK(m.exit_code == 0);
  CHECK(m.has("smx_zeros"));
  CHECK(m.has("3/3 (100.0 %) killed"));
  CHECK(m.has("the kernel cannot carry this fault in its own arithmetic (a closed kernel)"));
}
