// cli/progress.cpp — the terminal progress line (cli/progress.hpp).
#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

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

std::string kernel_time_line(const std::map<std::string, double>& wall) {
  std::vector<std::pair<double, std::string>> v;
  double total = 0;
  for (const auto& [k, t] : wall) {
    v.emplace_back(t, k);
    total += t;
  }
  std::sort(v.rbegin(), v.rend());
  std::string line = "time by kernel (wall: cases, references, grading; slowest first):";
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) line += fmt::format("{} {} {:.1f} s", i ? "," : "", v[i].second, v[i].first);
  if (v.size() > 8) line += ", ...";
  return line + fmt::format(" ({} kernels, {:.1f} s)\n", v.size(), total);
}

}  // namespace fpcert::cli
