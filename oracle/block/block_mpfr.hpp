// oracle/block/block_mpfr.hpp — the MPFR reference for block-scaled formats, written apart from
// oracle/block/block_format.cpp (the fast path it checks). Scale rules are decided by exact comparisons of
// MPFR numbers (a rule is the smallest or largest power of two meeting its definition, found by
// search, not by exponent arithmetic on bit fields); float elements are rounded by mpfr_ref::round
// (MPFR's own rounding into an emulated format), MXINT8 elements by mpfr_rint; the quotients of
// NVFP4 are MPFR divisions rounded to odd at 256 bits, which then round correctly into any format of
// fewer than 254 bits (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
// algorithms using rounding to odd", IEEE TC 57(4), 2008).
#pragma once

#include <mpfr.h>

#include <cstdint>

#include "oracle/block/block_format.hpp"

namespace fpcert::mpfr_ref {

/// The scale code of a block with largest magnitude amax (same contract as fpcert::block_scale_code).
std::uint8_t block_scale_code(const BlockFormat& f, ScaleRule r, double amax, bool nonfinite, double tensor_scale = 1);
/// The element code of a finite x under scale code `scale` (same contract as fpcert::quantize_element).
ElementCode quantize_element(const BlockFormat& f, double x, std::uint8_t scale, double tensor_scale, Rounding r,
                             std::uint32_t rbits = 0);
/// out = element(code) * scale(scale_code) [* tensor_scale], exact (out's precision >= 64). Returns false
/// (out untouched) when the value is NaN; +-Inf for e5m2's Inf codes.
bool dequantize(mpfr_ptr out, const BlockFormat& f, std::uint8_t code, std::uint8_t scale_code, double tensor_scale = 1);
/// NVFP4's per-tensor scale, RN_f32(amax / 2688) (same contract as fpcert::nvfp4_tensor_scale).
double nvfp4_tensor_scale(double amax_tensor);
/// q = a / b rounded to odd at q's precision (>= 3): the exact quotient when representable, else the
/// odd-last-bit neighbour inside the interval that truncation leaves.
void div_round_to_odd(mpfr_ptr q, mpfr_srcptr a, mpfr_srcptr b);

}  // namespace fpcert::mpfr_ref
