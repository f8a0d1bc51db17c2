// base/watchdog.cpp — the in-process deadline (base/watchdog.hpp).
#include "base/watchdog.hpp"

#include <unistd.h>

#include <chrono>

#include "base/interrupt.hpp"

namespace fpcert {

Watchdog::Watchdog(int exit_code) : exit_code_(exit_code), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(double seconds, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(m_);
    armed_ = true;
    ++generation_;
    seconds_ = seconds;
    message_ = message;
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard<std::mutex> lock(m_);
    armed_ = false;
    ++generation_;
  }
  cv_.notify_all();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || armed_; });
    if (stop_) return;
    const unsigned long gen = generation_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds_);
    if (cv_.wait_until(lock, deadline, [&] { return stop_ || generation_ != gen; })) continue;
    // The deadline passed with the same work still running.
    remove_temp_files();
    const std::string text = "\nfpcert: " + message_ + "\n";
    const ssize_t w = ::write(2, text.data(), text.size());
    (void)w;
    ::_exit(exit_code_);
  }
}

}  // namespace fpcert
