// oracle/reduce/reduce_acc.hpp — internal: the accumulator arithmetic of the reduction emulations (every
// rounding into the accumulator format through oracle/round.hpp, numbered for stochastic bits). Shared by
// reduce_order.cpp and nrm2_scaled.cpp; not a public API.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/philox.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "oracle/refvalue.hpp"

namespace fpcert::detail {

/// The accumulator: every rounding into arith.acc goes through oracle/round.hpp, numbered for stochastic bits.
class Acc {
 public:
  explicit Acc(const ReduceArith& a) : a_(a) {}

  /// R(p + q) for p, q exact doubles. Both finite: TwoSum gives s = RN(p + q) and e = p + q - s exactly
  /// (Knuth; no overflow: p and q are below 2^256 in magnitude), so {s, e} is the exact sum and round_ref
  /// rounds it once. A non-finite operand: IEEE double addition (Inf + x = Inf, Inf - Inf = NaN, NaN
  /// propagates), then rounded into acc (Inf per the saturation mode).
  double add(double p, double q) {
    const std::uint32_t rb = next_bits();
    if (!std::isfinite(p) || !std::isfinite(q)) return decode(round_double(*a_.acc, p + q, a_.rounder, rb));
    const RefValue s = ref_from_two_sum(p, q);
    if (s.hi == 0 && s.lo == 0) {
      // An exact zero sum (IEEE 754-2019 §6.3): x + x keeps x's sign (two zeros of one sign); otherwise +0,
      // except -0 under roundTowardNegative.
      if (std::signbit(p) == std::signbit(q)) return p;  // both zeros of one sign (nonzero p = -q differ in sign)
      return a_.rounder.rounding == Rounding::Down ? -0.0 : 0.0;
    }
    return decode(round_ref(*a_.acc, s, a_.rounder, rb));
  }
  /// R(t) for one exact value (a product, or a term alone at a leaf or a chain's start).
  double lone(double t) { return decode(round_double(*a_.acc, t, a_.rounder, next_bits())); }
  /// R(p q) for two values of the accumulator (at most 26 bits each: the product is exact in double).
  double mul(double p, double q) { return lone(p * q); }
  /// R(p / q), q != 0, p and q values of acc. The double quotient r = RN53(p / q) and the sign of p - r q
  /// (exact by one FMA: the remainder of a correctly rounded quotient is a double) place the exact quotient
  /// against every rounding boundary of acc (each a double), as sqrt() below does for the root.
  double div(double p, double q) {
    const std::uint32_t rb = next_bits();
    const double r = p / q;
    if (!std::isfinite(r) || !std::isfinite(p) || !std::isfinite(q) || r == 0) return decode(round_double(*a_.acc, r, a_.rounder, rb));
    const double rem = std::fma(-r, q, p);
    const int s = (rem > 0 ? 1 : rem < 0 ? -1 : 0) * (q < 0 ? -1 : 1);
    return decode(round_exact(*a_.acc, to_exact(RefValue{r, 0.0, static_cast<std::int8_t>(s)}), a_.rounder, rb));
  }
  /// R(sqrt(s)) for s a value of acc: r = RN53(sqrt s) (IEEE sqrt) and sign(s - r^2), exact by one FMA (the
  /// remainder of a correctly rounded square root is a double: s >= 2^-149 keeps it far from underflow), give
  /// the exact root's position as hi = r with the tail; to_exact turns that into (significand, sticky) and the
  /// round core rounds it. That is one correct rounding for any acc of <= 52 bits: every rounding boundary
  /// of such a format is a double, so r = RN53(sqrt s) lies on the same side of it as sqrt s, or on it (then
  /// the tail decides).
  double sqrt(double s) {
    const std::uint32_t rb = next_bits();
    if (!(s > 0) || std::isinf(s)) return decode(round_double(*a_.acc, std::sqrt(s), a_.rounder, rb));
    const double r = std::sqrt(s);
    const double rem = std::fma(-r, r, s);
    const RefValue v{r, 0.0, static_cast<std::int8_t>(rem > 0 ? 1 : rem < 0 ? -1 : 0)};
    return decode(round_exact(*a_.acc, to_exact(v), a_.rounder, rb));
  }

 private:
  std::uint32_t next_bits() {
    const std::uint64_t j = ops_++;
    return a_.rounder.rounding == Rounding::Stochastic ? random_bits32(a_.stochastic_key, j) : 0;
  }
  double decode(const Rounded& r) const { return to_double(*a_.acc, r.code); }

  const ReduceArith& a_;
  std::uint64_t ops_ = 0;
};

}  // namespace fpcert::detail
