// oracle/refvalue.hpp — an exact reference value as hi + lo + a signed tail: enough of the exact
// real to round it correctly into any format up to fp64 under any rounding mode.
#pragma once

#include <cstdint>

#include "oracle/round.hpp"

namespace fpcert {

/// exact = hi + lo + tail * eps with hi = RN(exact), lo = RN(exact - hi), tail = sign(exact - hi - lo)
/// (eps an infinitesimal). hi and lo carry the exact value to 106+ bits; the tail decides the
/// cases where hi + lo sits exactly on a rounding boundary, so rounding through a RefValue is
/// never a double rounding. hi == 0 means the exact value is 0.
struct RefValue {
  double hi = 0.0;
  double lo = 0.0;
  std::int8_t tail = 0;
  friend bool operator==(const RefValue&, const RefValue&) = default;
};

/// The exact value hi + lo + tail*eps as (sign, 64-bit significand, exponent, sticky).
/// Non-finite hi gives an Exact of class Inf/NaN.
Exact to_exact(const RefValue& r);

/// Correct rounding of a reference into a format.
inline Rounded round_ref(const Format& f, const RefValue& r, const Rounder& rr, std::uint32_t rbits = 0) {
  if (r.lo == 0.0 && r.tail == 0) return round_double(f, r.hi, rr, rbits);
  return round_exact(f, to_exact(r), rr, rbits);
}

/// Renormalise an exact sum of two doubles a + b (no overflow) into a RefValue (tail 0).
RefValue ref_from_two_sum(double a, double b);

}  // namespace fpcert
