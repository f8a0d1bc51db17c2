// cli/progress.hpp — a progress line for long sweeps on a terminal: percentage, rate, elapsed time and
// an estimate of the time left, rewritten in place on stderr at most four times a second. Silent when
// stderr is not a terminal (CI logs, pipes, files), so logs stay clean.
#pragma once

#include <cstdint>
#include <functional>

namespace fpcert::cli {

/// A callback taking the fraction done (0..1) of `total` patterns; an empty function when stderr is
/// not a terminal. Thread-safe only if the caller serialises calls (every sweep here does).
std::function<void(double)> terminal_progress(std::uint64_t total);

}  // namespace fpcert::cli
