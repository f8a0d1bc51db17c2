// tests/support/run_command.hpp — run a command (fpcert) as a subprocess: exit status and its merged
// stdout + stderr, with a wall-clock limit, for the tests that drive `fpcert ... --plugin`.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fpcert::test {

struct CommandResult {
  int exit_code = -1;    ///< exit status, or 128 + signal when killed by one
  int signal = 0;        ///< the signal that ended it (0: it exited)
  bool timed_out = false;
  std::string output;    ///< stdout and stderr, interleaved as written
  std::string command;   ///< for failure messages
  bool has(const std::string& s) const { return output.find(s) != std::string::npos; }
};

inline CommandResult run_command(const std::vector<std::string>& argv, double timeout_s = 900) {
  CommandResult r;
  for (const auto& a : argv) r.command += (r.command.empty() ? "" : " ") + a;
  int fds[2];
  if (::pipe(fds) != 0) return r;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::perror("execv");
    ::_exit(127);
  }
  ::close(fds[1]);
  const auto t0 = std::chrono::steady_clock::now();
  char buf[65536];
  for (;;) {
    const double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int pr = ::poll(&p, 1, 1000);
    if (pr <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (WIFSIGNALED(st)) {
    r.signal = WTERMSIG(st);
    r.exit_code = 128 + r.signal;
  } else if (WIFEXITED(st)) {
    r.exit_code = WEXITSTATUS(st);
  }
  return r;
}

/// $VAR when set and not empty, else the build tree's path: lets the GPU tests run from a folder of
/// binaries copied to another machine (FPCERT_BIN, FPCERT_TEST_PLUGIN_DIR, FPCERT_STAGE_DIR,
/// FPCERT_TEST_SCRATCH).
inline std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return v && *v ? std::string(v) : std::string(fallback);
}

/// A fresh scratch folder ($FPCERT_TEST_SCRATCH or the build tree's; kept for inspection after a failure).
inline std::string scratch_dir(const std::string& name) {
  const std::string d = env_or("FPCERT_TEST_SCRATCH", FPCERT_TEST_SCRATCH) + "/" + name;
  std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
  if (std::system(cmd.c_str()) != 0) return "/tmp";
  return d;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

#ifdef FPCERT_BIN
/// Run the fpcert binary under test ($FPCERT_BIN, else the build's) with these arguments.
inline CommandResult fpcert_run(std::vector<std::string> args, double timeout_s = 300) {
  args.insert(args.begin(), env_or("FPCERT_BIN", FPCERT_BIN));
  return run_command(args, timeout_s);
}
/// Run a shell command line (for ulimit and environment variables); $FPCERT is the binary under test.
inline CommandResult sh(const std::string& line, double timeout_s = 300) {
  return run_command({"/bin/sh", "-c", "FPCERT='" + env_or("FPCERT_BIN", FPCERT_BIN) + "'; " + line}, timeout_s);
}
#endif

}  // namespace fpcert::test
