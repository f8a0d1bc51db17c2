// suites/run/isolate.cpp — fork, pipe, poll with a deadline, waitpid.
#include "suites/run/isolate.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "kernels/device/exact_gemm_cuda.hpp"
#include "results/results_json.hpp"

namespace fpcert {

ChildOutcome run_in_child(const std::function<std::string()>& body, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // child: run, report, exit without running the parent's atexit handlers
    ::close(fds[0]);
    int code = 0;
    try {
      const std::string out = body();
      std::size_t off = 0;
      while (off < out.size()) {
        const ssize_t w = ::write(fds[1], out.data() + off, out.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
    } catch (...) {
      code = 4;
    }
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildOutcome r;
  char buf[65536];
  const auto t0 = std::chrono::steady_clock::now();
  bool timed_out = false;
  for (;;) {
    const double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int pr = ::poll(&pfd, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.payload.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (WIFSIGNALED(st) && !timed_out) r.signal = WTERMSIG(st);
  if (WIFEXITED(st)) r.exit_status = WEXITSTATUS(st);
  if (timed_out) {
    r.kind = FailureKind::Hung;
    r.reason = fmt::format("no result within {} s: the child process was killed", timeout_s);
  } else if (WIFSIGNALED(st)) {
    r.reason = fmt::format("the kernel's process died with signal {} ({})", WTERMSIG(st), strsignal(WTERMSIG(st)));
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || r.payload.empty()) {
    r.reason = fmt::format("the kernel's process exited with status {} and no result", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  } else {
    r.ok = true;
  }
  if (!r.ok) r.payload.clear();
  return r;
}

CaseResult run_case_isolated(const std::function<CaseResult()>& body, double timeout_s, const CaseResult& skeleton) {
  const ChildOutcome c = run_in_child([&] { return to_json(body()).dump(); }, timeout_s);
  CaseResult r = skeleton;
  if (c.ok) {
    try {
      return case_from_json(nlohmann::json::parse(c.payload));
    } catch (const std::exception&) {
      r.status = CaseStatus::Crashed;
      r.reason = "the child process sent an unreadable result";
      return r;
    }
  }
  r.status = c.kind == FailureKind::Hung ? CaseStatus::Hung : CaseStatus::Crashed;
  r.reason = c.reason;
  return r;
}

bool gpu_reference_usable(std::string* why) {
  const ChildOutcome c = run_in_child(
      [] {
        std::string reason;
        return make_cuda_exact_gemm_engine(&reason) ? std::string("usable") : "not usable: " + reason;
      },
      120);
  if (c.ok && c.payload == "usable") return true;
  if (why) *why = c.ok ? c.payload.substr(std::string("not usable: ").size()) : "the device probe's child failed: " + c.reason;
  return false;
}

}  // namespace fpcert
