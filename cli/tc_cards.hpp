// cli/tc_cards.hpp — the tensor-core behaviour cards a command (certify, run-suite, experiment
// fp8-accumulation) installs before its kernels run (kernels/tc/cards.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fpcert::cli {

/// The behaviour cards of the tensor-core instructions the kernels name, installed before any case runs
/// (docs/tensor_cores.md, "Certifying tensor-core kernels"): by default this device is probed at the start
/// (in a child process, so this one never touches the device before isolation forks); --card FILE reads
/// cards of `fpcert probe tensor-cores --json` (refused when measured on another GPU than this one);
/// --card none uses none. Without a usable card a tensor-core kernel keeps its placeholder block model.
/// Prints one line per instruction (validated, or why not).
void prepare_cards(const std::string& card, std::uint64_t card_samples, const std::vector<std::string>& kernels);

}  // namespace fpcert::cli
