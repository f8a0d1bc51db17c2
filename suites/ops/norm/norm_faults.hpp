// suites/ops/norm/norm_faults.hpp — fault injectors for LayerNorm / RMSNorm kernels (docs/mutation.md,
// "Normalisation"): a built-in carries each fault in its own arithmetic (NormKernel::with_bug); around any other kernel,
// as a black box, the faults that can be made outside it (all zeros, gamma and beta swapped or ignored: the call made
// with them swapped or absent).
#pragma once

#include <memory>
#include <string>

#include "kernels/norm/norm_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the norm kernel `kernel` (empty: it applies).
std::string norm_fault_not_applicable(Fault f, const NormKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_norm_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
