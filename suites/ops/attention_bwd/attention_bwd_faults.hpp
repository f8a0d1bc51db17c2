// suites/ops/attention_bwd/attention_bwd_faults.hpp — fault injectors for attention backward kernels (docs/mutation.md,
// "Backward passes"): a built-in carries each fault in its own arithmetic (AttentionBwdKernel::with_bug); around any other
// kernel, as a black box, the faults that can be made outside it: every output +0, dQ rescaled by s (the scale applied
// twice) or by 1 / s (the scale missing) after the call; D from the wrong O, no D subtracted, the LSE in the wrong base and
// the causal mask off by one by the call it is given (attention_bwd_faults.cpp says how).
#pragma once

#include <string>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the attention backward kernel `kernel` (empty: it applies).
std::string attention_bwd_fault_not_applicable(Fault f, const AttentionBwdKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_attention_bwd_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
