// suites/verdict/emulate/emulate_round.hpp — the bitwise tier's scalar rounding (internal to suites/verdict/emulate/emulate.cpp and
// suites/verdict/emulate/emulate_round.cpp): the integer rounding of an exact two-sum, one rounded addition, one rounding of
// a double. The public entries (emulate_add, emulate_fma, emulate_round, round_values) are in suites/verdict/emulate/emulate.hpp.
#pragma once

#include <bit>
#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/round.hpp"

namespace fpcert::emulate_detail {

/// Whether round_exact_sum's integer path applies: IEEE specials, at most 26 significant bits, fp32's
/// exponent range or less (every accumulator format fpcert knows but fp64; products of such values and
/// their sums stay between 2^-330 and 2^300, so every power of two below is a normal double).
bool fast_format(const Format& f);

/// Whether round_one's integer path serves f: fast_format's, or a format of the same grid whose overflow
/// differs (fn: no Inf; finite-only), for magnitudes up to its largest finite value (rounding is monotone:
/// nothing there rounds past it; beyond it, saturation is the oracle's).
bool grid_format(const Format& f);

/// A format's constants for round_exact_sum, computed once (max_finite is not free).
struct Grid {
  int emin, frac_bits;
  double max_finite;
  bool ieee;  ///< IEEE specials: round_exact_sum's overflow is f's
  explicit Grid(const Format& f) : emin(f.emin()), frac_bits(f.frac_bits), max_finite(f.max_finite()), ieee(f.specials == Specials::IEEE) {}
};

/// The exact value hi + lo (a two-sum pair: hi = RN(x), |lo| <= ulp(hi)/2; finite, nonzero hi) rounded into
/// f (fast_format) with rounding r (not stochastic), IEEE overflow (to Inf, or to the largest finite value
/// for directed modes pointing inward).
double round_exact_sum(const Grid& f, Rounding r, double hi, double lo);

/// round(x + y) into f: IEEE specials and zero signs, then the exact two-sum rounded once (through the
/// integer path when `grid` is given and the sum is in its range, else through the oracle).
double add_rounded(const Format& f, const Grid* grid, Rounding r, double x, double y);

/// Whether f is fp32's grid without its low 23 - frac_bits bits (IEEE specials, fp32's exponent range and
/// subnormals, fewer fraction bits: bf16, tf32): a float rounds into it on its bit pattern (f32_grid_round).
bool f32_grid(const Format& f);

/// Whether f's normal range lies on fp32's grid without its low 23 - frac_bits bits (signed, fewer fraction bits,
/// exponents within fp32's normal range: f16, the FP8 and FP6 formats, bf16, tf32): a float of magnitude between f's
/// smallest normal and largest finite value rounds into it on its bit pattern (f32_grid_round), whatever f's
/// subnormals, overflow and specials (the rounding stays in that range: both ends are values of f).
bool f32_normal_grid(const Format& f);

/// A float x (finite or Inf) rounded into such a format, drop = 23 - f.frac_bits: to nearest even by adding
/// half a unit less one plus the kept last bit and masking (a carry out of the fraction moves to the next
/// binade, past the largest finite value to Inf: IEEE's overflow), else toward zero by masking (finite stays
/// finite).
inline float f32_grid_round(float x, int drop, bool nearest) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(x), mask = (std::uint32_t{1} << drop) - 1;
  const std::uint32_t up = nearest ? (mask >> 1) + ((b >> drop) & 1u) : 0u;
  return std::bit_cast<float>((b + up) & ~mask);
}

/// round_f(x) through the integer path (`grid`: f's, when grid_format(f) and r is not stochastic) or the oracle.
double round_one(const Format& f, const Grid* grid, Rounding r, double x);

}  // namespace fpcert::emulate_detail
