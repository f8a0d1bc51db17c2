// base/interrupt.cpp — signal handlers that clean up temporary files and say what was interrupted.
// Everything the handler touches is preallocated; it calls only async-signal-safe functions
// (unlink, rmdir, write, sigaction, raise).
#include "base/interrupt.hpp"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace fpcert {
namespace {

constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> used{false};
  bool is_dir = false;
  char path[PATH_MAX] = {};
};
Slot g_slots[kSlots];
std::mutex g_slot_mutex;  // registration only; the handler never locks

constexpr std::size_t kNoteBytes = 4096;
char g_notes[2][kNoteBytes];
std::atomic<int> g_note{-1};  // which buffer holds the current note (-1: none)
std::mutex g_note_mutex;

std::atomic<pid_t> g_owner{0};

void put(const char* s) {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_signal(int sig) {
  if (::getpid() == g_owner.load()) {
    remove_temp_files();
    put("\nfpcert: interrupted by ");
    put(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal");
    const int n = g_note.load();
    if (n >= 0 && g_notes[n][0]) {
      put(" while ");
      put(g_notes[n]);
    }
    put("; outputs not yet written were left as they were\n");
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

/// Children die with their parent: an isolated case left running after fpcert was interrupted (or
/// killed) would hang on, orphaned, for ever.
std::atomic<pid_t> g_forking{0};
void before_fork() { g_forking.store(::getpid()); }
void in_child() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != g_forking.load()) ::raise(SIGKILL);  // the parent died before prctl took effect
}

}  // namespace

void remove_temp_files() {
  for (int i = kSlots - 1; i >= 0; --i)  // files first (registered after their folder), then folders
    if (g_slots[i].used.load() && !g_slots[i].is_dir) ::unlink(g_slots[i].path);
  for (int i = kSlots - 1; i >= 0; --i)
    if (g_slots[i].used.load() && g_slots[i].is_dir) ::rmdir(g_slots[i].path);
}

void install_interrupt_handlers() {
  static const bool atfork = ::pthread_atfork(before_fork, nullptr, in_child) == 0;
  (void)atfork;
  g_owner.store(::getpid());
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the parent ignored stays ignored (nohup, background jobs of a script).
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGXFSZ, &ign, nullptr);
}

void set_interrupt_note(const std::string& note) {
  std::lock_guard<std::mutex> lock(g_note_mutex);
  const int next = g_note.load() == 0 ? 1 : 0;
  const std::size_t n = std::min(note.size(), kNoteBytes - 1);
  std::memcpy(g_notes[next], note.data(), n);
  g_notes[next][n] = '\0';
  g_note.store(next);
}

TempPath::TempPath(const std::string& path, bool is_dir) {
  if (path.size() >= PATH_MAX) return;  // not registered: an interruption would leave it behind
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  for (int i = 0; i < kSlots; ++i)
    if (!g_slots[i].used.load()) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].is_dir = is_dir;
      g_slots[i].used.store(true);
      slot_ = i;
      return;
    }
}

TempPath& TempPath::operator=(TempPath&& o) noexcept {
  if (this != &o) {
    release();
    slot_ = o.slot_;
    o.slot_ = -1;
  }
  return *this;
}

void TempPath::release() {
  if (slot_ < 0) return;
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  g_slots[slot_].used.store(false);
  slot_ = -1;
}

}  // namespace fpcert
