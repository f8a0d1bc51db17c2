// tests/cli/exit_guard_test.cpp — the ExitGuard's fatal-signal handlers (cli/exit_codes.hpp) nest: each guard puts
// back the handlers it replaced, so after the outermost ends the process's own handler is in place again.
#include <doctest/doctest.h>
#include <signal.h>

#include "cli/exit_codes.hpp"

namespace {

void own_handler(int) {}

void (*current_handler(int sig))(int) {
  struct sigaction now {};
  ::sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

}  // namespace

TEST_CASE("ExitGuard: nested guards with fatal-signal handlers restore the outer ones, then the process's own") {
  struct sigaction mine {}, before {};
  mine.sa_handler = own_handler;
  sigemptyset(&mine.sa_mask);
  REQUIRE(::sigaction(SIGFPE, &mine, &before) == 0);
  {
    const fpcert::cli::ExitGuard outer("outer", true);
    const auto outer_handler = current_handler(SIGFPE);
    const bool replaced = outer_handler != own_handler;
    CHECK(replaced);
    {
      const fpcert::cli::ExitGuard inner("inner", true);
      const fpcert::cli::ExitGuard innermost("innermost", false);  // no signals: leaves the handlers alone
    }
    const bool outer_back = current_handler(SIGFPE) == outer_handler;
    CHECK(outer_back);
  }
  const bool own_back = current_handler(SIGFPE) == own_handler;
  CHECK(own_back);
  ::sigaction(SIGFPE, &before, nullptr);
}
