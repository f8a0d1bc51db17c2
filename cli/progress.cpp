// cli/progress.cpp — the terminal progress line (cli/progress.hpp).
#include "cli/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace fpcert::cli {

std::function<void(double)> terminal_progress(std::uint64_t total) {
  if (!::isatty(2)) return {};
  using Clock = std::chrono::steady_clock;
  struct State {
    Clock::time_point t0 = Clock::now(), last{};
  };
  auto st = std::make_shared<State>();
  return [st, total](double frac) {
    const auto now = Clock::now();
    if (now - st->last < std::chrono::milliseconds(250) && frac < 1.0) return;
    st->last = now;
    const double s = std::chrono::duration<double>(now - st->t0).count();
    const double rate = s > 0 ? frac * static_cast<double>(total) / s : 0.0;
    const double left = frac > 0 ? s / frac - s : 0.0;
    if (frac < 1.0)
      std::fprintf(stderr, "\r  %5.1f%%  %8.1f M patterns/s  %6.1f s elapsed, ~%.1f s left   ", 100 * frac, rate / 1e6, s, left);
    else
      std::fprintf(stderr, "\r  100.0%%  %8.1f M patterns/s  %6.1f s%*s\n", rate / 1e6, s, 20, "");
    std::fflush(stderr);
  };
}

}  // namespace fpcert::cli
