// plugin/attention_plugin.hpp — attention forward and backward kernels of plugins (ABI minor 10,
// plugin/fpcert_plugin_attention.h; docs/plugin.md, "Attention kernels" and "Attention backward kernels"): the validation
// of what they declare, the AttentionTraits / AttentionBwdTraits it gives, and the AttentionKernel / AttentionBwdKernel
// that call them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/attention/attention_kernel.hpp"

extern "C" {
struct fpcert_kernel;
}

namespace fpcert {

/// Whether k.struct_size covers the minor 10 fields (attention .. attention_bwd_run).
bool has_attention_abi_fields(const fpcert_kernel& k);
/// Whether its struct reaches minor 13's attention_fp8 (FP8 descales and the P offset); older kernels: none.
bool has_attention_fp8_fields(const fpcert_kernel& k);

/// Every problem of an ATTENTION or ATTENTION_BWD descriptor, one kerr() call each, each naming its field; `versions` is
/// appended where an unknown value may come from a newer minor. A descriptor whose struct_size ends before the minor 10
/// fields gets one problem: the minor it needs (a table of an older minor, `abi_major`.`abi_minor` named) or where its
/// size ends.
void validate_attention_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions,
                            std::uint32_t abi_major, std::uint32_t abi_minor);

/// The traits a validated descriptor declares.
AttentionTraits attention_traits_from_abi(const fpcert_kernel& k);
AttentionBwdTraits attention_bwd_traits_from_abi(const fpcert_kernel& k);

/// The kernel of a validated ATTENTION or ATTENTION_BWD descriptor; `keepalive` holds the library.
std::unique_ptr<Kernel> make_plugin_attention_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);

}  // namespace fpcert
