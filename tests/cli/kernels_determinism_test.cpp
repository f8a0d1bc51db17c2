// tests/cli/kernels_determinism_test.cpp — `fpcert kernels` says what each GEMM kernel declares about run-to-run
// determinism: the atomics split-K model run_to_run (with its order family), the sequential model deterministic.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli_in_process.hpp"

TEST_CASE("kernels: each GEMM kernel's determinism, in JSON and in the table") {
  const auto json_run = fpcert::test::run_cli({"kernels", "--json"});
  CHECK(json_run.code == 0);
  const auto arr = nlohmann::json::parse(json_run.out);
  bool atomic = false, sequential = false;
  for (const auto& k : arr) {
    if (k.at("operation") != "gemm") continue;
    if (k.at("name") == "model_gemm_f32_splitk4_atomic") {
      atomic = true;
      CHECK(k.at("determinism") == "run_to_run");
      CHECK(k.at("determinism_note").get<std::string>().find("arrival order") != std::string::npos);
    }
    if (k.at("name") == "model_gemm_f32") {
      sequential = true;
      CHECK(k.at("determinism") == "deterministic");
    }
  }
  CHECK(atomic);
  CHECK(sequential);
  const auto table_run = fpcert::test::run_cli({"kernels"});
  CHECK(table_run.code == 0);
  const std::string& table = table_run.out;
  CHECK(table.find("determinism: run_to_run (atomic split-K") != std::string::npos);
  CHECK(table.find("order splitk:splits=4,combine=atomic,step=fma; nondeterministic run to run") != std::string::npos);
}
