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
struct fpcert_elem_fn_error;
}

namespace fpcert {

// ---- declaration checks shared by the row operations and attention (plugin/attention_plugin.cpp) ----

/// An enum field that is 0 (not stated) or a value this fpcert does not know: the field, the value, the valid values
/// of ABI minor `minor` and, for a plugin of a newer minor, both versions.
std::string bad_enum(const std::string& field, std::int32_t v, const char* valid, const std::string& versions, int minor = 6);
/// The elementary functions a declaration names (fpcert_elem_fn_error).
enum class ElemFn : std::uint8_t { Exp, Log, Rsqrt };
/// The rules of an fpcert_elem_fn_error for function f in a kernel computing in `compute` (null: invalid): STATED with
/// numbers and a source, or a preset of f with none (fp32 compute only).
void validate_elem_fn(const std::string& field, const fpcert_elem_fn_error& e, ElemFn f, const Format* compute,
                      const std::function<void(const std::string&)>& kerr, const std::string& versions);
/// The error a validated fpcert_elem_fn_error declares.
ElemFnError elem_fn_from_abi(const fpcert_elem_fn_error& e, ElemFn f);
/// A required format field (validate_format_abi): the format, or nullptr when it is invalid.
const Format* checked_format(const std::string& field, std::int32_t v, const std::function<void(const std::string&)>& kerr,
                             const std::string& versions);
/// A format that must carry -Inf and NaN (a mask's -Inf, the specials): IEEE formats only.
void need_ieee(const std::string& field, const Format* f, const std::function<void(const std::string&)>& kerr);
/// A flag: 0 or 1.
void need_01(const std::string& field, std::int32_t v, const std::function<void(const std::string&)>& kerr);

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
