// tests/cli/config_determinism_test.cpp — fpcert.toml's [determinism]: plugin kernels that are nondeterministic run
// to run, by name; anything but run_to_run or deterministic is refused with the file, line and column.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "cli/config.hpp"

using fpcert::InputError;
using fpcert::cli::parse_project_config;

TEST_CASE("[determinism] reads kernel = run_to_run | deterministic, and refuses anything else where it stands") {
  const auto c = parse_project_config("kernels = [\"foo_gemm\"]\n[determinism]\nfoo_gemm = \"run_to_run\"\nbar_gemm = \"deterministic\"\n",
                                      "/repo/fpcert.toml");
  REQUIRE(c.determinism.size() == 2);  // in key order (TOML tables are unordered)
  CHECK(c.determinism[0] == std::pair<std::string, std::string>{"bar_gemm", "deterministic"});
  CHECK(c.determinism[1] == std::pair<std::string, std::string>{"foo_gemm", "run_to_run"});
  try {
    parse_project_config("[determinism]\nfoo_gemm = \"sometimes\"\n", "/repo/fpcert.toml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "/repo/fpcert.toml:2:12: 'determinism.foo_gemm': expected run_to_run or deterministic, got 'sometimes'");
  }
}
