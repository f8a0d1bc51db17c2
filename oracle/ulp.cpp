// oracle/ulp.cpp — ordinal positions of codes and exact values; their distance.
#include "oracle/ulp.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace fpcert {

std::int64_t code_ordinal(const Format& f, std::uint64_t code) {
  const auto mag = static_cast<std::int64_t>(code & f.magnitude_mask());
  return code_is_negative(f, code) ? -mag : mag;
}

namespace {

/// The magnitude code k of RZ(|x|) onto f without the oracle's rounding, where that is quick and provably the same:
/// f signed, |hi| = a a normal double in f's normal range below its largest finite value. Then t = a with its low
/// 52 - frac_bits bits cleared is RZ(a) onto f, and a - t = r is exact. x = a + lo_mag (+ the tail's sign) lies in
/// (t, t + s) (s: f's spacing at t) when r > 0 and |lo_mag| < min(r, s - r); when r = 0 it is t, or below t (one code
/// lower) when lo_mag, else the tail, is negative and |lo_mag| is less than the spacing below t. Anything else: false
/// (the oracle decides). Also v_k and the spacing above it, exact. tests/oracle/ulp_test.cpp holds this to the oracle.
bool quick_rz_code(const Format& f, double a, double lo_mag, int tail_mag, std::uint64_t& k, double& vk, double& step) {
  if (!f.is_signed() || f.frac_bits > 52) return false;
  const auto bits = std::bit_cast<std::uint64_t>(a);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (e < f.emin() || e > f.emax() || e - f.frac_bits < -1022) return false;
  const int drop = 52 - f.frac_bits;
  const std::uint64_t code = (static_cast<std::uint64_t>(e + f.bias) << f.frac_bits) | ((bits & ((std::uint64_t{1} << 52) - 1)) >> drop);
  if (code >= f.max_finite_code()) return false;
  const double t = std::bit_cast<double>(drop ? bits & ~((std::uint64_t{1} << drop) - 1) : bits);
  const double r = a - t;                                                              // exact: a's low bits
  const double s = std::bit_cast<double>(static_cast<std::uint64_t>(e - f.frac_bits + 1023) << 52);  // 2^(e - frac_bits)
  const double m = std::fabs(lo_mag);
  if (r > 0) {
    if (!(m < r && m < s - r)) return false;
    k = code, vk = t, step = s;
    return true;
  }
  const bool below = lo_mag < 0 || (lo_mag == 0 && tail_mag < 0);
  if (!below) {
    if (!(m < s)) return false;
    k = code, vk = t, step = s;
    return true;
  }
  const bool boundary = (code & f.frac_mask()) == 0;  // t = 2^e: the spacing below is s / 2 (or s at f's emin)
  if (boundary && e == f.emin()) return false;
  step = boundary ? s / 2 : s;
  if (!(m < step)) return false;
  k = code - 1, vk = t - step;  // exact: t's neighbour below
  return true;
}

/// ulp_distance (quick: RZ(|x|) from hi's bits where quick_rz_code can) or ulp_distance_generic.
double distance(const Format& f, std::uint64_t candidate, const RefValue& exact, bool quick) {
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
  const double lo_mag = neg ? -exact.lo : exact.lo;
  std::uint64_t k = 0;
  double vk = 0, step = 0;
  if (!quick || !quick_rz_code(f, std::fabs(exact.hi), lo_mag, neg ? -exact.tail : exact.tail, k, vk, step)) {
    Exact ax = to_exact(exact);
    ax.neg = false;
    const Rounded t = round_exact(f, ax, Rounder{Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve});
    k = t.code & f.magnitude_mask();
    vk = to_double(f, k);
    if (k < f.max_finite_code()) {
      step = to_double(f, k + 1) - vk;  // exact: neighbours differ by one power-of-two spacing
    } else {
      step = vk - to_double(f, k - 1);  // beyond the largest finite: the top binade's spacing
    }
  }
  // |x| - v_k = (|hi| - v_k) + lo', the first difference exact (v_k <= |x|, both near |hi|).
  const double frac = ((std::fabs(exact.hi) - vk) + lo_mag) / step;
  const std::int64_t ik = static_cast<std::int64_t>(k);
  const std::int64_t D = neg ? oc + ik : oc - ik;  // pos(c) - sign*k, exact in integers
  const double dist = neg ? static_cast<double>(D) + frac : static_cast<double>(D) - frac;
  return std::fabs(dist);
}

}  // namespace

double ulp_distance(const Format& f, std::uint64_t candidate, const RefValue& exact) { return distance(f, candidate, exact, true); }

double ulp_distance_generic(const Format& f, std::uint64_t candidate, const RefValue& exact) {
  return distance(f, candidate, exact, false);
}

}  // namespace fpcert
