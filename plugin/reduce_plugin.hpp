// plugin/reduce_plugin.hpp — reduction kernels of plugins (ABI minor 3, plugin/fpcert_plugin.h
// "reductions"; docs/plugin.md, "Reduction kernels"): the validation of what they declare and the
// ReduceKernel that calls them.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kernels/reduce/reduce_kernel.hpp"

extern "C" {
struct fpcert_kernel;
}

namespace fpcert {

/// Every problem of a REDUCTION descriptor (k.struct_size covers the minor 3 fields), one kerr() call each;
/// `versions` is appended where an unknown enum value may come from a newer minor.
void validate_reduce_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions);

/// The traits a validated REDUCTION descriptor declares.
ReduceTraits reduce_traits_from_abi(const fpcert_kernel& k);

/// The kernel of a validated REDUCTION descriptor; `keepalive` holds the library.
std::unique_ptr<ReduceKernel> make_plugin_reduce_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);

}  // namespace fpcert
