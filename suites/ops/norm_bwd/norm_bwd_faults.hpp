// suites/ops/norm_bwd/norm_bwd_faults.hpp — fault injectors for LayerNorm / RMSNorm backward kernels (docs/mutation.md,
// "Backward passes"): a built-in carries each fault in its own arithmetic (NormBwdKernel::with_bug); around any other
// kernel, as a black box, the faults that can be made outside it (every output +0; gamma ignored: the call made without
// gamma; rstd squared: the saved rstd handed over as RN(rstd^2), to a kernel that reads it).
#pragma once

#include <string>

#include "kernels/norm/norm_backward_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the norm backward kernel `kernel` (empty: it applies).
std::string norm_bwd_fault_not_applicable(Fault f, const NormBwdKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_norm_bwd_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
