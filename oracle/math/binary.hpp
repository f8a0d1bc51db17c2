// oracle/math/binary.hpp — correctly rounded binary functions z = f(x1, x2) of fp32 inputs (issue 42's binary functions,
// docs/elementwise.md, "Binary functions"): division, pow, atan2 through MPFR (Ziv's loop, oracle/math/ziv_mpfr.hpp) with
// the special values of IEEE 754-2019 9.2 (pow, atan2: ISO C Annex F's list, which MPFR follows), fmax and fmin exactly
// (IEEE 754-2008 maxNum/minNum: a NaN operand yields the other operand).
#pragma once

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/math/fn.hpp"
#include "oracle/round.hpp"

namespace fpcert::math {

/// f(x1, x2) correctly rounded into d (f32, f16 or bf16) under r; atan2(x1, x2) is C's atan2(y = x1, x = x2). A NaN result is
/// the quiet NaN; fmax/fmin return an operand (rounded into d; exact for f32). Throws std::invalid_argument for a unary f.
Rounded evaluate_binary(Fn f, float x1, float x2, const Format& d, const Rounder& r, std::uint32_t rbits = 0);

/// The nearest-even f32 code of f(x1, x2) (the elementwise check's reference).
std::uint32_t binary_ref_f32(Fn f, float x1, float x2);

/// Whether an fp32 value is an odd integer (pow's sign rule: |v| < 2^24 and v = 2k + 1).
bool is_odd_integer(double v);

}  // namespace fpcert::math
