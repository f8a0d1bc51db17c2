// plugin/rows_plugin.hpp — softmax and normalisation kernels of plugins (ABI minor 6, plugin/fpcert_plugin.h "softmax
// and normalisation"; docs/plugin.md, "Softmax and normalisation kernels"): the validation of what they declare, the
// traits it gives, and the SoftmaxKernel / NormKernel that call them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernels/norm/norm_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"

extern "C" {
struct fpcert_kernel;
}

namespace fpcert {

/// Whether k.struct_size covers the minor 6 fields (softmax .. norm_run).
bool has_rows_abi_fields(const fpcert_kernel& k);

/// Every problem of a SOFTMAX or NORM descriptor, one kerr() call each; `versions` is appended where an unknown enum
/// value may come from a newer minor. A descriptor whose struct_size ends before the minor 6 fields gets one problem:
/// the minor it needs (a table of an older minor, the plugin's `abi_major`.`abi_minor` named) or where its size ends.
void validate_rows_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions,
                       std::uint32_t abi_major, std::uint32_t abi_minor);

/// The traits a validated descriptor declares.
SoftmaxTraits softmax_traits_from_abi(const fpcert_kernel& k);
NormTraits norm_traits_from_abi(const fpcert_kernel& k);

/// The kernel of a validated SOFTMAX or NORM descriptor; `keepalive` holds the library.
std::unique_ptr<Kernel> make_plugin_rows_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);

}  // namespace fpcert
