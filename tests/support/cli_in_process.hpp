// tests/support/cli_in_process.hpp — run the fpcert command in this process (cli::run) with its stdout captured.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace fpcert::test {

struct CliRun {
  int code = -1;    ///< cli::run's exit code
  std::string out;  ///< what it wrote on stdout
};

/// cli::run(argv) with stdout captured (through a temporary file: the command may write more than a pipe holds).
inline CliRun run_cli(std::vector<std::string> args) {
  namespace fs = std::filesystem;
  args.insert(args.begin(), "fpcert");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const fs::path out = fs::temp_directory_path() / ("fpcert_cli_in_process_" + std::to_string(::getpid()) + ".out");
  std::fflush(stdout);
  const int saved = ::dup(1);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 1);
  ::close(fd);
  CliRun r;
  r.code = cli::run(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  fs::remove(out);
  return r;
}

}  // namespace fpcert::test
