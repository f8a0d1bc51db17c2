// cli/mutate.hpp — what certify, mutate and selftest share about mutation runs (cli/cmd/cmd_mutate.cpp).
#pragma once

#include <functional>
#include <string>

namespace fpcert::cli {

/// A progress callback that rewrites one line of stderr when it is a terminal (nullptr otherwise).
std::function<void(const std::string&)> progress_to_terminal();
/// Erase that line.
void clear_progress();
/// The fault catalogue: id, class, the checks that kill each for its own fault, the fault, its injection.
std::string fault_catalogue_text();

}  // namespace fpcert::cli
