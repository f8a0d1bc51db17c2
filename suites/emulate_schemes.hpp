// suites/emulate_schemes.hpp — the bitwise tier's scheme-driven orders (suites/emulate.hpp): split products
// and power-of-two scaling onto fp16. Each takes the inputs as the kernel received them and returns C's
// values before the output rounding (row-major m x n). Internal to suites/emulate.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"

namespace fpcert::emulate_detail {

/// Split products: slices per operand, each kept slice product summed over K by fp32 FMA from +0
/// (k ascending), the terms merged in fp32 in the scheme's order starting from the first term; one row of
/// C at a time, columns innermost. The slices of a float are taken on its bit pattern (slices of fp32's grid,
/// suites/emulate_round.hpp) unless one overflows or `generic`: then by the scheme's split_value.
std::vector<double> split_products(const SplitScheme& sc, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                   const std::vector<double>& b, bool generic = false);

/// BF16 on fp16 by power-of-two scales (order pow2_scaled, docs/emulation.md "The declared order"): the
/// strategy's plans (kernels/emu/bf16_on_fp16.hpp, the declared scale rule) give each operand entry its
/// scale 2^s or mark it an outlier; a' = RN_f16(a 2^s) (the oracle's rounding, IEEE overflow); per 128 x 128
/// tile of C the mode (row: one sum over K, C = RN_f32(acc 2^-(s_A + s_B)); kblock: a sum per segment from +0,
/// acc = RN(acc + RN(part 2^-(s_A,g + s_B,g))), from +0) with fp32 FMA along K on a' b' (exact products);
/// then where row i of A or column j of B has outliers, corr = fp32 FMA over the A outliers of the row
/// (times b) and then over the B outliers of the column whose a is not one (times a), k ascending from
/// +0, on the bf16 values; C = RN(C + corr). One row of C at a time, columns innermost. `generic`: every
/// conversion through the oracle, the rescale by ldexp, the outlier path scanning every entry of B (the
/// reference the fast path is tested against, EmulationPath::Generic).
std::vector<double> pow2_scaled(const Bf16OnF16Policy& pol, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                const std::vector<double>& b, bool generic = false);

}  // namespace fpcert::emulate_detail
