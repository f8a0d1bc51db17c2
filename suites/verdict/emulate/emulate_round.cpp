// suites/verdict/emulate/emulate_round.cpp — the bitwise tier's scalar rounding (suites/verdict/emulate/emulate_round.hpp) and the public
// rounding entries of suites/verdict/emulate/emulate.hpp: emulate_add, emulate_fma, emulate_round, round_values.
#include "suites/verdict/emulate/emulate_round.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "base/parallel.hpp"
#include "oracle/refvalue.hpp"
#include "suites/verdict/emulate/emulate.hpp"

namespace fpcert {
namespace emulate_detail {

namespace {

double to_value(const Format& f, std::uint64_t code) { return to_double(f, code); }

/// 2^e as a double (|e| < 1023: a normal power of two, built from its exponent field).
double pow2(int e) { return std::bit_cast<double>(static_cast<std::uint64_t>(1023 + e) << 52); }

}  // namespace

bool fast_format(const Format& f) { return f.specials == Specials::IEEE && f.precision() <= 26 && f.emax() <= 127 && f.emin() >= -126; }

bool f32_grid(const Format& f) {
  return f.specials == Specials::IEEE && f.sign_bits == 1 && f.subnormals && f.exp_bits == 8 && f.bias == 127 && f.frac_bits < 23;
}

bool f32_normal_grid(const Format& f) {
  return f.sign_bits == 1 && f.specials != Specials::ScaleOnly && f.frac_bits < 23 && f.emin() >= -126 && f.emax() <= 127;
}

bool grid_format(const Format& f) {
  return f.sign_bits == 1 && f.subnormals && f.specials != Specials::ScaleOnly && f.precision() <= 26 && f.emax() <= 127 && f.emin() >= -126;
}

/// The exact value hi + lo (a two-sum pair: hi = RN(x), |lo| <= ulp(hi)/2; finite, nonzero hi) rounded into
/// f (fast_format) with rounding r (not stochastic), IEEE overflow (to Inf, or to the largest finite value
/// for directed modes pointing inward). Scale |hi + lo| so that f's last kept bit has weight 1: the integer
/// part is the truncation, the fraction (with lo's sign where hi's fraction is exactly 0 or 1/2) decides.
/// hi has at most 53 significant bits and the grid at most 26, so lo can move the fraction off 0 or 1/2
/// but never across them.
double round_exact_sum(const Grid& f, Rounding r, double hi, double lo) {
  const bool neg = std::signbit(hi);
  const double ah = std::fabs(hi), al = neg ? -lo : lo;
  // hi is a normal double here (products of fp32-range values are >= 2^-298): its exponent field is e + 1023.
  int e = static_cast<int>(std::bit_cast<std::uint64_t>(ah) >> 52) - 1023;
  if (al < 0 && (std::bit_cast<std::uint64_t>(ah) & 0x000FFFFFFFFFFFFFULL) == 0) --e;  // just below a power of two
  const int q = std::max(e, f.emin) - f.frac_bits;
  const double t = ah * pow2(-q);  // exact: a power-of-two scaling, t < 2^27 and far above double's underflow
  double whole = std::floor(t);
  const double frac = t - whole;  // exact
  enum { Exact, Low, Half, High } cls;
  if (frac == 0) cls = al == 0 ? Exact : al > 0 ? Low : High;
  else if (frac == 0.5) cls = al == 0 ? Half : al > 0 ? High : Low;
  else cls = frac < 0.5 ? Low : High;
  if (frac == 0 && al < 0) whole -= 1;  // just below the integer: its truncation is one less
  bool inc = false;
  switch (r) {
    case Rounding::NearestEven: inc = cls == High || (cls == Half && (static_cast<std::uint64_t>(whole) & 1) != 0); break;
    case Rounding::NearestAway: inc = cls == High || cls == Half; break;
    case Rounding::TowardZero: break;
    case Rounding::Up: inc = !neg && cls != Exact; break;
    case Rounding::Down: inc = neg && cls != Exact; break;
    case Rounding::Stochastic: throw std::logic_error("emulator: stochastic rounding has no exact emulation");
  }
  double mag = (whole + (inc ? 1 : 0)) * pow2(q);
  if (mag > f.max_finite) {
    // Overflow (IEEE 754 §7.4): to nearest, and directed modes pointing outward, give Inf; inward, the largest finite.
    const bool inward = r == Rounding::TowardZero || (r == Rounding::Up && neg) || (r == Rounding::Down && !neg);
    mag = inward ? f.max_finite : INFINITY;
  }
  return neg ? -mag : mag;
}

double add_rounded(const Format& f, const Grid* grid, Rounding r, double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y))  // IEEE Inf/NaN rules
    return to_value(f, round_double(f, x + y, Rounder{r, default_saturation(f), NanPayload::Preserve}).code);
  if (x == -y) {
    // An exact zero sum (IEEE 754 §6.3): two zeros of one sign keep it; any other exact zero is +0,
    // or -0 when rounding toward -Inf.
    if (x == 0 && std::signbit(x) == std::signbit(y)) return x;
    return r == Rounding::Down ? -0.0 : 0.0;
  }
  const RefValue s = ref_from_two_sum(x, y);
  const double ah = std::fabs(s.hi);
  if (grid && ah >= 0x1p-330 && ah <= 0x1p300) return round_exact_sum(*grid, r, s.hi, s.lo);
  return to_value(f, round_ref(f, s, Rounder{r, default_saturation(f), NanPayload::Preserve}).code);
}

double round_one(const Format& f, const Grid* grid, Rounding r, double x) {
  // The integer path needs a normal double far from double's range ends (|x| within 2^-330 .. 2^300).
  const double ax = std::fabs(x);
  if (!grid || !(ax >= 0x1p-330 && ax <= 0x1p300) || (!grid->ieee && ax > grid->max_finite))
    return to_value(f, round_double(f, x, Rounder{r, default_saturation(f), NanPayload::Preserve}).code);
  return round_exact_sum(*grid, r, x, 0.0);
}

}  // namespace emulate_detail

using namespace emulate_detail;

double emulate_add(const Format& f, Rounding r, double x, double y) {
  const bool fast = fast_format(f) && r != Rounding::Stochastic;
  const Grid g(f);
  return add_rounded(f, fast ? &g : nullptr, r, x, y);
}

double emulate_fma(const Format& f, Rounding r, double a, double b, double acc) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(acc))
    return to_value(f, round_double(f, a * b + acc, Rounder{r, default_saturation(f), NanPayload::Preserve}).code);
  return emulate_add(f, r, a * b, acc);  // a * b exact (the caller's operands have at most 26 bits)
}

double emulate_round(const Format& f, Rounding r, double x) {
  const Grid g(f);
  return round_one(f, grid_format(f) && r != Rounding::Stochastic ? &g : nullptr, r, x);
}

std::vector<double> round_values(const std::vector<double>& exact, const Format& f, Rounding r) {
  std::vector<double> v(exact.size());
  const Grid g(f);  // once: a format's constants are not free
  const Grid* grid = grid_format(f) && r != Rounding::Stochastic ? &g : nullptr;
  // A float value rounding into a format of fp32's exponent range (bf16, tf32) to nearest even or toward zero
  // rounds on its bit pattern; NaN and values that are not floats go to round_one.
  // Other formats of fp32's normal grid (f16, FP8) the same way for floats in their normal range.
  const bool mode = r == Rounding::NearestEven || r == Rounding::TowardZero;
  const bool bits = f32_grid(f) && mode;
  const bool normal_bits = !bits && f32_normal_grid(f) && mode;
  const double lo = f.min_normal(), hi = f.max_finite();
  const int drop = 23 - f.frac_bits;
  parallel_for(v.size(), 1 << 14, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    for (std::uint64_t i = i0; i < i1; ++i) {
      const double x = exact[i];
      const auto xf = static_cast<float>(x);
      const bool on_bits = static_cast<double>(xf) == x && (bits || (normal_bits && std::fabs(x) >= lo && std::fabs(x) <= hi));
      v[i] = on_bits ? f32_grid_round(xf, drop, r == Rounding::NearestEven) : round_one(f, grid, r, x);
    }
  });
  return v;
}

}  // namespace fpcert
