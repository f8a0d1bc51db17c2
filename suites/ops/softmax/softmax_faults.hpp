// suites/ops/softmax/softmax_faults.hpp — fault injectors for softmax kernels (docs/mutation.md, "Softmax"): a built-in
// carries each fault in its own arithmetic (SoftmaxKernel::with_bug); around any other kernel, as a black box, the
// faults that can be made outside it (all zeros, NaN for fully masked rows, the mask applied after the call).
#pragma once

#include <memory>
#include <string>

#include "kernels/softmax/softmax_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change the softmax kernel `kernel` (empty: it applies).
std::string softmax_fault_not_applicable(Fault f, const SoftmaxKernel& kernel);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_softmax_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
