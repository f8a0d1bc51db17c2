// suites/ops/softmax_bwd/softmax_bwd_faults.hpp — fault injectors for softmax backward kernels (docs/mutation.md,
// "Backward passes"): a built-in carries each fault in its own arithmetic (SoftmaxBwdKernel::with_bug); around any other
// kernel, as a black box, the faults that can be made outside it (all zeros; the scale missing or applied twice, by
// calling the kernel with scale 1 or s^2).
#pragma once

#include <string>

#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the softmax backward kernel `kernel` (empty: it applies).
std::string softmax_bwd_fault_not_applicable(Fault f, const SoftmaxBwdKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_softmax_bwd_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
