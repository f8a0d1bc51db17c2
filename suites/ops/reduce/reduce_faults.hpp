// suites/ops/reduce/reduce_faults.hpp — fault injectors for reduction kernels (docs/mutation.md, "Reductions"): each
// wraps any host ReduceKernel as a black box (inputs changed before the call, outputs after, or partial calls of the
// kernel combined in the faulty arithmetic) and claims the wrapped kernel's traits.
#pragma once

#include <memory>
#include <string>

#include "kernels/reduce/reduce_kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Why fault f cannot change a reduction kernel with traits t (empty: it applies).
std::string reduce_fault_not_applicable(Fault f, const ReduceTraits& t);
/// The mutant of `inner` with fault f, named `name`.
std::unique_ptr<ReduceKernel> make_reduce_mutant(std::unique_ptr<ReduceKernel> inner, Fault f, std::string name);
/// Register <kernel>~<fault> in the kernel registry; returns its name. InputError for an unknown kernel.
std::string register_reduce_mutant(const std::string& kernel, Fault f);

}  // namespace fpcert
