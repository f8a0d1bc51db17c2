// cli/exit_codes.cpp — a run's exit code from its case verdicts, and the guard that keeps plugin code
// from choosing it (exit() while a command runs).
#include "cli/exit_codes.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace fpcert {

int exit_code(const RunResult& r) {
  if (r.count(CaseStatus::Crashed) || r.count(CaseStatus::Hung)) return kExitKernelFailed;
  if (r.count(CaseStatus::Fail) || r.count(CaseStatus::Error)) return kExitGateFailed;
  return kExitPass;
}

}  // namespace fpcert

namespace fpcert::cli {
namespace {

// The state the handlers read: plain memory, written before arming, so an atexit or signal handler
// reads it without allocating or locking.
char g_message[1024];
volatile sig_atomic_t g_armed = 0;
volatile pid_t g_pid = 0;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
// The actions each armed signal guard replaced, one row per nesting level (guards are scoped, so they end in the
// reverse order they began): an inner guard restores the outer one's handlers, the outermost the process's own.
constexpr int kMaxSignalDepth = 8;
struct sigaction g_old_actions[kMaxSignalDepth][std::size(kFatalSignals)];
int g_signal_depth = 0;

void write_all(const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_exit_call() {
  if (!g_armed || ::getpid() != g_pid) return;  // a forked child's exit is its parent's to judge
  write_all(g_message, std::strlen(g_message));
  const char tail[] = " (exit() was called before fpcert finished; exit 3, no verdict)\n";
  write_all(tail, sizeof tail - 1);
  ::_exit(kExitKernelFailed);
}

void on_fatal_signal(int sig) {
  if (g_armed && ::getpid() == g_pid) {
    write_all(g_message, std::strlen(g_message));
    char tail[64] = " (fatal signal ";
    std::size_t n = std::strlen(tail);
    char digits[8];
    int d = 0;
    for (int v = sig; v > 0 && d < 8; v /= 10) digits[d++] = static_cast<char>('0' + v % 10);
    while (d > 0) tail[n++] = digits[--d];
    tail[n++] = ')';
    tail[n++] = '\n';
    write_all(tail, n);
  }
  ::signal(sig, SIG_DFL);  // then die by the signal, as the caller expects
  ::raise(sig);
}

void register_handlers_once() {
  static const bool done = [] {
    std::atexit(on_exit_call);
    std::at_quick_exit(on_exit_call);
    return true;
  }();
  (void)done;
}

}  // namespace

ExitGuard::ExitGuard(const std::string& message, bool fatal_signals) : previous_(g_message), previous_armed_(g_armed != 0), signals_(fatal_signals) {
  register_handlers_once();
  g_armed = 0;
  std::snprintf(g_message, sizeof g_message, "fpcert: %s", message.c_str());
  g_pid = ::getpid();
  g_armed = 1;
  signals_ = signals_ && g_signal_depth < kMaxSignalDepth;  // deeper still: the outer guard's handlers stay, with this message
  if (signals_) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    for (std::size_t i = 0; i < std::size(kFatalSignals); ++i) ::sigaction(kFatalSignals[i], &sa, &g_old_actions[g_signal_depth][i]);
    ++g_signal_depth;
  }
}

ExitGuard::~ExitGuard() {
  if (signals_) {
    --g_signal_depth;
    for (std::size_t i = 0; i < std::size(kFatalSignals); ++i) ::sigaction(kFatalSignals[i], &g_old_actions[g_signal_depth][i], nullptr);
  }
  g_armed = 0;
  std::snprintf(g_message, sizeof g_message, "%s", previous_.c_str());
  g_armed = previous_armed_ ? 1 : 0;
}

void disarm_exit_guard() { g_armed = 0; }

}  // namespace fpcert::cli
