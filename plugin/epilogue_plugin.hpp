// plugin/epilogue_plugin.hpp — the fused GEMM epilogue of plugin kernels (ABI minor 8, plugin/fpcert_plugin_epilogue.h;
// docs/plugin.md, "Fused epilogues"): the validation of what a kernel declares, its translation into EpilogueTraits,
// and a call's epilogue as the ABI passes it.
#pragma once

#include <functional>
#include <string>

#include "kernels/kernel.hpp"

extern "C" {
struct fpcert_kernel;
struct fpcert_gemm_epilogue_args;
}

namespace fpcert {

/// Whether the kernel's struct reaches gemm_epilogue (a kernel of minor 0 to 7 ends before it: no epilogue).
bool has_epilogue_abi_field(const fpcert_kernel& k);
/// Whether k.struct_size covers the ABI minor 9 field gemm_round_before_bias (and its reserved twin).
bool has_round_before_bias_field(const fpcert_kernel& k);
/// Whether k.struct_size covers the ABI minor 10 field gemm_shape_multiple (and its reserved twin).
bool has_shape_multiple_field(const fpcert_kernel& k);

/// Every problem of a GEMM kernel's gemm_epilogue (nothing when its struct ends before the field), one kerr() call
/// each: mask bits fpcert does not know, a bias format unknown, ue8m0 or given without a bias, func_rel_err negative,
/// NaN, >= 1, missing where GELU or SiLU is declared or given where neither is, func_note missing, flags not 0 or 1.
/// `versions` is appended where an unknown value may come from a newer minor.
void validate_epilogue_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr, const std::string& versions);

/// The epilogue a validated kernel declares (all defaults for a kernel of minor 0 to 7).
EpilogueTraits epilogue_from_abi(const fpcert_kernel& k);

/// Why a call asks the kernel for an epilogue it does not declare (empty: it does not): the runner never makes such a
/// call; the wrapper refuses it ("not supported") rather than pass the plugin an argument it never agreed to read.
std::string epilogue_call_problem(const EpilogueTraits& t, const GemmOperands& ops);

/// The call's epilogue as the ABI passes it (fpcert_gemm_args.epilogue).
void epilogue_args_to_abi(const GemmOperands& ops, fpcert_gemm_epilogue_args& out);

}  // namespace fpcert
