// oracle/ulp.hpp — ULP distance between a candidate code and an exact reference, in fractional ulps.
//
// Definition (docs/formats.md): order the format's finite values v_0 = 0 < v_1 < ... by magnitude
// (their codes, since codes are monotone), and place a real x >= 0 at position k + (x - v_k) /
// (v_{k+1} - v_k) where v_k <= x < v_{k+1}; negative values mirror. The distance of a candidate
// c to x is |pos(c) - pos(x)|: one unit per representable step, so it stays exact across binade
// boundaries (where the spacing doubles) and uniform in the subnormal range. Beyond the largest
// finite value the top binade's spacing continues.
#pragma once

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert {

/// Signed ordinal of a finite code: its magnitude code, negated when the sign bit is set.
std::int64_t code_ordinal(const Format& f, std::uint64_t code);

/// Distance in ulps of f between the code `candidate` and the exact value `exact`. Returns 0 when
/// both are the same infinity or both NaN, +infinity when exactly one side is non-finite.
/// Formats with a zero only (ue8m0 has none).
double ulp_distance(const Format& f, std::uint64_t candidate, const RefValue& exact);
/// The same distance with the position of |x| always found through the oracle's rounding toward zero (ulp_distance
/// finds it from hi's bits where that provably agrees; tests/oracle/ulp_test.cpp holds the two equal).
double ulp_distance_generic(const Format& f, std::uint64_t candidate, const RefValue& exact);

/// Same, with the exact value given as a double (exact in double).
inline double ulp_distance(const Format& f, std::uint64_t candidate, double exact) {
  return ulp_distance(f, candidate, RefValue{exact, 0.0, 0});
}

}  // namespace fpcert
