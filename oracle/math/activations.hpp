// oracle/math/activations.hpp — the activations' correctly rounded reference (sigmoid, SiLU, softplus, GELU erf and tanh
// forms), MPFR only: used by oracle/math/elementary.cpp. docs/elementwise.md, "Activations", states the bounds.
#pragma once

#include <cstdint>
#include <optional>

#include "oracle/format.hpp"
#include "oracle/math/fn.hpp"
#include "oracle/round.hpp"

namespace fpcert::math {

/// Special values and clamps (NaN, +-0, +-Inf, the ends of the range); nullopt: the caller computes.
std::optional<Rounded> activation_special(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits);
/// f(x) correctly rounded into d under r: the special values, else Ziv's loop over MPFR with the proved bound.
Rounded activation_mpfr(Fn f, float x, const Format& d, const Rounder& r, std::uint32_t rbits);

}  // namespace fpcert::math
