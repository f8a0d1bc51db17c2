// tests/base/interrupt_test.cpp — SIGINT/SIGTERM remove temporary files and say what was interrupted
// (base/interrupt.hpp); the watchdog ends a hung in-process run with its message and exit code
// (base/watchdog.hpp). Each runs in a forked child whose stderr a pipe captures. Regression tests for
// the hardening issue's classes 6, 8 and 15.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "base/interrupt.hpp"
#include "base/watchdog.hpp"

using namespace fpcert;

namespace {

struct Child {
  int status = 0;
  std::string err;
};

/// Run body() in a child with stderr on a pipe; the child must end by itself (signal or _exit).
Child in_child(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    body();
    ::_exit(99);
  }
  ::close(fds[1]);
  Child c;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) c.err.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &c.status, 0);
  return c;
}

}  // namespace

TEST_CASE("SIGTERM: temporary files removed, what was running said, the process ends by the signal") {
  const std::string dir = std::filesystem::temp_directory_path() / ("fpcert_interrupt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string tmp = dir + "/.r.json.fpcert-abc";
  const Child c = in_child([&] {
    install_interrupt_handlers();
    { std::ofstream(tmp) << "half"; }
    TempPath t(tmp, false);
    set_interrupt_note("running suite quick [2/5] k1024: model_x; cases finished so far are in r.json.partial.jsonl");
    ::raise(SIGTERM);
  });
  CHECK(WIFSIGNALED(c.status));
  CHECK(WTERMSIG(c.status) == SIGTERM);
  CHECK(c.err ==
        "\nfpcert: interrupted by SIGTERM while running suite quick [2/5] k1024: model_x; cases finished so far are in "
        "r.json.partial.jsonl; outputs not yet written were left as they were\n");
  CHECK_FALSE(std::filesystem::exists(tmp));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a forked child of the process that installed the handlers dies quietly") {
  const Child c = in_child([] {
    install_interrupt_handlers();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::raise(SIGINT);
      ::_exit(98);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    ::_exit(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT ? 0 : 97);
  });
  CHECK(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 0);
  CHECK(c.err.empty());
}

TEST_CASE("the watchdog: a run that outlives its deadline ends the process with the message and exit code") {
  const auto t0 = std::chrono::steady_clock::now();
  const Child c = in_child([] {
    Watchdog w(3);
    w.arm(0.2, "case k1024 of kernel fault_hang did not finish within --timeout 0.2 s");
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // hangs
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 3);
  CHECK(c.err == "\nfpcert: case k1024 of kernel fault_hang did not finish within --timeout 0.2 s\n");
  CHECK(secs < 5);
}

TEST_CASE("the watchdog: disarmed in time, nothing happens; re-armed, the deadline starts again") {
  const Child c = in_child([] {
    Watchdog w(3);
    for (int i = 0; i < 5; ++i) {
      w.arm(0.3, "should not fire");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      w.disarm();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::_exit(0);
  });
  CHECK(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 0);
  CHECK(c.err.empty());
}
