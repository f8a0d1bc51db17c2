// plugin/reduce_plugin.hpp — reduction kernels of plugins (ABI minor 3, plugin/fpcert_plugin.h
// "reductions"; docs/plugin.md, "Reduction kernels"): the validation of what they declare and the
// ReduceKernel that calls them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernels/reduce/reduce_kernel.hpp"

extern "C" {
struct fpcert_kernel;
}

namespace fpcert {

/// A number format field of a reduction, softmax or norm declaration: required (a known value, not ue8m0) or, when
/// not, FPCERT_FORMAT_NONE; one kerr() call per problem.
void validate_format_abi(const char* field, std::int32_t v, bool required, const std::function<void(const std::string&)>& kerr,
                         const std::string& versions);
/// The rules of a declared summation order (fpcert_reduce_order_kind with its block and lanes), one kerr() call per
/// problem, each field named with `prefix` ("reduce.", "softmax.sum_"); also the row sum of softmax kernels.
void validate_reduce_order_abi(const std::string& prefix, std::int32_t order, std::int32_t block, std::int32_t lanes,
                               const std::function<void(const std::string&)>& kerr, const std::string& versions);
/// The order a validated declaration states.
ReduceOrder reduce_order_from_abi(std::int32_t order, std::int32_t block, std::int32_t lanes, std::int32_t chain_from_first);

/// Every problem of a REDUCTION descriptor (k.struct_size covers the minor 3 fields), one kerr() call each;
/// `versions` is appended where an unknown enum value may come from a newer minor.
void validate_reduce_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions);

/// The traits a validated REDUCTION descriptor declares.
ReduceTraits reduce_traits_from_abi(const fpcert_kernel& k);

/// The kernel of a validated REDUCTION descriptor; `keepalive` holds the library.
std::unique_ptr<ReduceKernel> make_plugin_reduce_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive);

}  // namespace fpcert
