// oracle/ulp.cpp — ordinal positions of codes and exact values; their distance.
#include "oracle/ulp.hpp"

#include <cmath>
#include <limits>

namespace fpcert {

std::int64_t code_ordinal(const Format& f, std::uint64_t code) {
  const auto mag = static_cast<std::int64_t>(code & f.magnitude_mask());
  return code_is_negative(f, code) ? -mag : mag;
}

double ulp_distance(const Format& f, std::uint64_t candidate, const RefValue& exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const FpClass cc = classify(f, candidate);
  const bool ref_nan = std::isnan(exact.hi);
  const bool ref_inf = std::isinf(exact.hi);
  if (cc == FpClass::NaN || ref_nan) return (cc == FpClass::NaN && ref_nan) ? 0.0 : kInf;
  if (cc == FpClass::Inf || ref_inf) {
    if (cc == FpClass::Inf && ref_inf && code_is_negative(f, candidate) == std::signbit(exact.hi)) return 0.0;
    return kInf;
  }
  const std::int64_t oc = code_ordinal(f, candidate);
  if (exact.hi == 0.0) return std::fabs(static_cast<double>(oc));

  // k = magnitude code of the largest finite value <= |x| (toward zero, saturating).
  const bool neg = std::signbit(exact.hi);
  Exact ax = to_exact(exact);
  ax.neg = false;
  const Rounded t = round_exact(f, ax, Rounder{Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve});
  const std::uint64_t k = t.code & f.magnitude_mask();
  const double vk = to_double(f, k);
  double step;
  if (k < f.max_finite_code()) {
    step = to_double(f, k + 1) - vk;  // exact: neighbours differ by one power-of-two spacing
  } else {
    step = vk - to_double(f, k - 1);  // beyond the largest finite: the top binade's spacing
  }
  // |x| - v_k = (|hi| - v_k) + lo', the first difference exact (v_k <= |x|, both near |hi|).
  const double lo_mag = neg ? -exact.lo : exact.lo;
  const double frac = ((std::fabs(exact.hi) - vk) + lo_mag) / step;
  const std::int64_t ik = static_cast<std::int64_t>(k);
  const std::int64_t D = neg ? oc + ik : oc - ik;  // pos(c) - sign*k, exact in integers
  const double dist = neg ? static_cast<double>(D) + frac : static_cast<double>(D) - frac;
  return std::fabs(dist);
}

}  // namespace fpcert
