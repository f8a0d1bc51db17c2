// oracle/math/ziv_mpfr.hpp — Ziv's loop on an MPFR evaluation (oracle/math/elementary.cpp): the unary functions' MPFR
// fall-back and the binary functions (oracle/math/binary.cpp) round through it. docs/elementwise.md states the method.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <functional>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert::math {

/// `eval(y)` sets y (at the precision the loop chooses: 64, 128, ... bits) to the function's value rounded to nearest and
/// returns MPFR's ternary value. Exact (ternary 0): y rounded into d. Else the exact value lies strictly between y's
/// neighbours at that precision; once both round alike into d under r, so does the exact value (rounding is monotone).
/// y must be finite and nonzero unless exact (the callers answer special values, overflow and underflow first).
Rounded ziv_mpfr(const Format& d, const Rounder& r, std::uint32_t rbits, const std::function<int(mpfr_ptr)>& eval);

}  // namespace fpcert::math
