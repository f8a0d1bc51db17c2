// plugin/eltwise_plugin.hpp — elementwise math kernels of plugins (ABI minor 11, plugin/fpcert_plugin_eltwise.h;
// docs/plugin.md, "Elementwise kernels"): the validation of what they declare, the EltwiseTraits it gives, and the
// ElementwiseKernel that calls them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kernels/elementwise/eltwise_kernel.hpp"

extern "C" {
struct fpcert_kernel;
}

namespace fpcert {

/// The function of an fpcert_eltwise_fn value (nullopt: unknown), and the value of a function.
std::optional<math::Fn> eltwise_fn_from_abi(std::int32_t v);
std::int32_t eltwise_fn_to_abi(math::Fn f);

/// Whether k.struct_size covers the minor 11 fields (eltwise, eltwise_run).
bool has_eltwise_abi_fields(const fpcert_kernel& k);

/// Every problem of an ELEMENTWISE descriptor, one kerr() call each, each naming its field; `versions` is appended where
/// an unknown value may come from a newer minor. A descriptor whose struct_size ends before the minor 11 fields gets one
/// problem: the minor it needs (a table of an older minor, `abi_major`.`abi_minor` named) or where its size ends.
void validate_eltwise_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions,
                          std::uint32_t abi_major, std::uint32_t abi_minor);

/// The traits a validated descriptor declares.
EltwiseTraits eltwise_traits_from_abi(const fpcert_kernel& k);

/// The kernel of a validated ELEMENTWISE descriptor; `keepalive` holds the library. A device kernel offers no device sweep:
/// the runner's host check judges its results.
std::unique_ptr<Kernel> make_plugin_eltwise_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);

}  // namespace fpcert
