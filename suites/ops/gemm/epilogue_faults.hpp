// suites/ops/gemm/epilogue_faults.hpp — the epilogue faults of the catalogue (Fault::Epi*, suites/mutation/faults.hpp;
// docs/epilogue.md, "Faults") realised from calls of the wrapped kernel as a black box, in its memory space: the call
// made with its epilogue changed (no bias; the other bias kind with a vector of the other length made of the case's
// values; the bias pre-multiplied by alpha'; no activation; the other GELU form; scale_d or scale_b = 1), or its amax
// edited after the call (times |scale_d|). The fault injector (suites/ops/gemm/fault_injectors.cpp) dispatches here.
#pragma once

#include <functional>

#include "kernels/device/device_api.hpp"
#include "kernels/kernel.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// Runs the wrapped kernel on a call and waits for it (the injector's own call()).
using GemmCall = std::function<void(const GemmOperands&)>;

/// Realise the epilogue fault `f` on the call `ops` of a kernel with traits `t`: `call` runs the wrapped kernel, `api`
/// moves data in its memory space. Returns whether the fault changed anything (false: dormant on this call, e.g. no
/// bias to ignore). Throws std::logic_error for a fault that is not an epilogue fault.
bool run_epilogue_fault(Fault f, const GemmOperands& ops, const KernelTraits& t, DeviceApi& api, const GemmCall& call);

/// A strided batched call made one batch at a time through `run_one` (an injector applies its fault to each batch);
/// amax, when asked, is each batch's written into scratch memory and the max over the batches stored at ops.amax (a
/// NaN in any batch gives NaN): the call's amax as the kernel defines it, not the last batch's.
void run_batches_merging_amax(const GemmOperands& ops, const KernelTraits& t, DeviceApi& api, const GemmCall& run_one);

/// The call without its epilogue: no bias, no activation, scale factors 1, no amax (a K-chunk's partial products).
GemmOperands without_epilogue(const GemmOperands& ops);

}  // namespace fpcert
