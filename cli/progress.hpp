// cli/progress.hpp — a progress line for long sweeps on a terminal: percentage, rate, elapsed time and
// an estimate of the time left, rewritten in place on stderr at most four times a second. Silent when
// stderr is not a terminal (CI logs, pipes, files), so logs stay clean. And the line certify prints of where a run's
// wall time went, per kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace fpcert::cli {

/// A callback taking the fraction done (0..1) of `total` patterns; an empty function when stderr is
/// not a terminal. Thread-safe only if the caller serialises calls (every sweep here does).
std::function<void(double)> terminal_progress(std::uint64_t total);

/// "time by kernel (wall: cases, references, grading; slowest first): a 12.3 s, b 4.1 s, ... (N kernels, T s)":
/// the eight slowest named, from seconds per kernel.
std::string kernel_time_line(const std::map<std::string, double>& wall);

}  // namespace fpcert::cli
