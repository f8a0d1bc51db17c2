// oracle/convert/representable.hpp — whether a binary64 value is exactly a value of a format, by integer operations (no
// rounding call): the generators' check of their own values and the order-free elements' exactness (suites/verdict/order_free.cpp).
#pragma once

#include "oracle/format.hpp"

namespace fpcert {

/// Whether a finite double is exactly a finite value of f (any built-in format but ue8m0): |x| <= largest finite, and
/// x's lowest set bit at or above both 2^(e - frac_bits) (e its exponent) and the smallest subnormal. Integer
/// operations only; tests/generators/distributions_test.cpp holds it equal to round_double's inexact/overflow flags.
bool exactly_representable(const Format& f, double x);

}  // namespace fpcert
