// kernels/emu/split.hpp — split-product emulation schemes (3xTF32, n×BF16): how an fp32 value is cut
// into slices, which slice products are kept, and the order they are merged in. CPU models, the
// scalar experiment and the CUDA kernels all read the same table.
//
// Splits: x_0 = Q(x), x_1 = Q(x - x_0), x_2 = Q(x - x_0 - x_1), Q the slice format's rounding; each
// difference is exact in fp32 (x and x_0 are both multiples of x's fp32 ulp and |x - x_0| < ulp
// of the slice format). Products of two slices (at most 11 + 11 bits) are exact in fp32.
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

/// The scheme's product of two scalars: each kept slice product (exact in fp32), summed in fp32
/// from the smallest term to the largest.
float split_product(const SplitScheme& s, float a, float b);

}  // namespace fpcert
