// kernels/emu/split.hpp — split-product emulation schemes (3xTF32, n×BF16): how an fp32 value is cut
// into slices, which slice products are kept, and the order they are merged in. CPU models, the
// scalar experiment and the CUDA kernels all read the same table.
//
// Splits: x_0 = Q(x), x_1 = Q(x - x_0), x_2 = Q(x - x_0 - x_1), Q the slice format's rounding; each
// difference is exact in fp32 (x and x_0 are both multiples of x's fp32 ulp and |x - x_0| < ulp
// of the slice format). Products of two slices (at most 11 + 11 bits) are exact in fp32.
// Overflow guard: a finite x that Q rounds to Inf (fp32's top binade: |x| above the largest tf32 or bf16
// value plus half its ulp) takes x_0 = the slice format's largest value, rounding saturated; |x - x_0|
// <= u_slice |x| still holds (the largest fp32 is within u of the largest slice value). Its last slice
// is then truncated, so that the slices never sum past |x| (x_0 + RN(x - x_0) can round up to 2^128):
// with three bf16 slices the last remainder is exact anyway; with two, the operand error in that binade
// is below one ulp of the second slice, 2^-21 |x| (tf32) and 2^-15 |x| (bf16), inside the u_eff of the
// table. Without the guard x_0 = Inf, x - x_0 = -Inf and every product with the operand is NaN (0 * Inf
// included): fpcert's coverage case edges_f32 found it on the H200.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert {

struct SplitScheme {
  std::string name;      ///< "3xtf32", "3xtf32_rz", "1xbf16", "3xbf16", "6xbf16", "9xbf16"
  const Format* slice;   ///< tf32 or bf16
  Rounding rounding;     ///< Q
  int slices;            ///< slices per operand
  std::vector<std::pair<int, int>> terms;  ///< kept (i, j) products, smallest first: the merge order
  double operand_u;      ///< effective unit roundoff of the operands (for the bound model)
  std::string note;      ///< its derivation
};

/// Every scheme, in a fixed order.
const std::vector<SplitScheme>& split_schemes();
const SplitScheme* find_split_scheme(const std::string& name);

/// The slices of x (out must hold scheme.slices floats).
void split_value(const SplitScheme& s, float x, float* out);

/// Whether the scheme needs finite inputs: with two slices or more the remainder x - Q(x) of an infinite x is
/// Inf - Inf = NaN, so every product with it is NaN where IEEE gives an infinity (docs/suites.md,
/// "values.special"). One slice is Q(x) alone: Inf and NaN pass through.
inline bool split_finite_only(const SplitScheme& s) { return s.slices > 1; }

/// The scheme's product of two scalars: each kept slice product (exact in fp32), summed in fp32
/// from the smallest term to the largest.
float split_product(const SplitScheme& s, float a, float b);

}  // namespace fpcert
