// tests/cli/kernels_determinism_test.cpp — `fpcert kernels` says what each GEMM kernel declares about run-to-run
// determinism: the atomics split-K model run_to_run (with its order family), the sequential model deterministic.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace fs = std::filesystem;

namespace {

/// cli::run(argv) with stdout captured.
std::string fpcert_stdout(std::vector<std::string> args, int& code) {
  args.insert(args.begin(), "fpcert");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const fs::path out = fs::temp_directory_path() / ("fpcert_kernels_det_test_" + std::to_string(::getpid()) + ".out");
  std::fflush(stdout);
  const int saved = ::dup(1);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 1);
  ::close(fd);
  code = fpcert::cli::run(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(out);
  return ss.str();
}

}  // namespace

TEST_CASE("kernels: each GEMM kernel's determinism, in JSON and in the table") {
  int code = -1;
  const auto arr = nlohmann::json::parse(fpcert_stdout({"kernels", "--json"}, code));
  CHECK(code == 0);
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
  const std::string table = fpcert_stdout({"kernels"}, code);
  CHECK(code == 0);
  CHECK(table.find("determinism: run_to_run (atomic split-K") != std::string::npos);
  CHECK(table.find("order splitk:splits=4,combine=atomic,step=fma; nondeterministic run to run") != std::string::npos);
}
