// oracle/softmax/softmax_emulate.hpp — the softmax's bitwise tier (docs/softmax.md, "Bitwise tier"): what a kernel
// that declares its whole arithmetic exactly must return, bit for bit. That takes every step declared: the shifted
// evaluation in binary32 (z_j = RN(s x_j) + mask_j, M = max z_j ignoring NaN as fmaxf does, e_j = exp(RN(z_j - M)) with
// an exp declared as operations (SoftmaxExpExact::ExpfOps), the row sum in a declared order (oracle/reduce/
// reduce_order.hpp emulates it), RN(e_j / S) or RN(e_j RN(1 / S)), one rounding into the output format) and the fully
// masked row's policy. An opaque exp (libm, CUDA expf or __expf) or an unknown summation order leaves the envelope only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "oracle/softmax/softmax_bound.hpp"

namespace fpcert {

/// Whether `a` is declared exactly enough to emulate; when not, `why` says what is missing.
bool softmax_emulable(const SoftmaxArith& a, std::string* why = nullptr);

/// One row's results as codes of a.out, as the declared arithmetic computes them (a must be emulable): x the stored
/// logits (values of the kernel's input format), mask null or the row's additive mask (+0 or -Inf), scale the kernel's
/// scale (1: no multiplication). NaN results are written as the output format's canonical NaN: compare NaN-ness only.
void emulate_softmax_row(const SoftmaxArith& a, MaskedRowPolicy policy, const float* x, const float* mask, float scale,
                         std::size_t n, std::uint64_t* codes);

}  // namespace fpcert
