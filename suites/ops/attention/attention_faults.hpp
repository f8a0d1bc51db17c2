// suites/ops/attention/attention_faults.hpp — fault injectors for attention kernels (docs/mutation.md, "Attention"): a
// built-in carries each fault in its own arithmetic (AttentionKernel::with_bug); around any other kernel, as a black
// box, the faults that can be made outside it: every output +0, the scale applied after the softmax, the causal mask off
// by one, the last key block dropped (by the call it is given: attention_faults.cpp says how).
#pragma once

#include <string>

#include "kernels/attention/attention_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the attention kernel `kernel` (empty: it applies).
std::string attention_fault_not_applicable(Fault f, const AttentionKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_attention_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
