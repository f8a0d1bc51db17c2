// base/watchdog.hpp — a deadline for work that cannot be interrupted in this process (a kernel run
// without isolation): when it passes, the watchdog removes temporary files, prints its message and
// ends the process with the given exit code, since a hung call can neither be cancelled nor waited
// for. With isolation the child process is killed instead (suites/); this is the fallback.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace fpcert {

class Watchdog {
 public:
  explicit Watchdog(int exit_code);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Start the clock: unless disarm() comes within `seconds`, print `message` and _exit(exit_code).
  void arm(double seconds, const std::string& message);
  void disarm();

 private:
  void loop();
  int exit_code_;
  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, stop_ = false;
  unsigned long generation_ = 0;
  double seconds_ = 0;
  std::string message_;
  std::thread thread_;
};

}  // namespace fpcert
