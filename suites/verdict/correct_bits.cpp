// suites/verdict/correct_bits.cpp — correct bits per element against the correctly rounded result
// (suites/verdict/correct_bits.hpp).
#include "suites/verdict/correct_bits.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "oracle/round.hpp"

namespace fpcert {

namespace {

/// The distance in ulps between two codes along the line of the format's values (+0 and -0 one point): the magnitudes'
/// difference for equal signs, their sum for opposite ones (magnitudes are below 2^63: the sum fits 64 bits).
std::uint64_t distance(const Format& f, std::uint64_t x, std::uint64_t y) {
  const int mag_bits = f.exp_bits + f.frac_bits;
  const std::uint64_t mask = (std::uint64_t{1} << mag_bits) - 1;
  const std::uint64_t mx = x & mask, my = y & mask;
  const bool nx = f.sign_bits == 1 && ((x >> mag_bits) & 1) != 0 && mx != 0;
  const bool ny = f.sign_bits == 1 && ((y >> mag_bits) & 1) != 0 && my != 0;
  if (nx == ny) return mx > my ? mx - my : my - mx;
  return mx + my;
}

}  // namespace

int correct_bits(const Format& f, std::uint64_t got, std::uint64_t rounded) {
  const int p = f.precision();
  const FpClass cg = classify(f, got), cr = classify(f, rounded);
  if (cg == FpClass::NaN || cr == FpClass::NaN) return cg == cr ? p : 0;
  if ((cg == FpClass::Inf || cr == FpClass::Inf) && got != rounded) return 0;
  const std::uint64_t d = distance(f, got, rounded);
  const int width = std::bit_width(d);
  return width >= p ? 0 : p - width;
}

CorrectBitsStats correct_bits_stats(const Format& f, const std::vector<std::uint64_t>& codes, const GemmRef& ref, ErrorMap* map) {
  CorrectBitsStats s;
  const int p = f.precision();
  s.hist.assign(static_cast<std::size_t>(p + 1), 0);
  const Rounder rn = Rounder::nearest(f);
  const bool mapped = map && map->rows > 0 && map->cols > 0 && ref.n > 0;
  if (mapped) map->min_correct_bits.assign(static_cast<std::size_t>(map->rows * map->cols), NAN);
  for (std::size_t x = 0; x < codes.size() && x < ref.c.size(); ++x) {
    const int b = correct_bits(f, codes[x], round_ref(f, ref.c[x], rn).code);
    ++s.hist[static_cast<std::size_t>(b)];
    s.min = s.min < 0 ? b : std::min(s.min, b);
    if (mapped) {
      const auto i = static_cast<std::int64_t>(x) / ref.n, j = static_cast<std::int64_t>(x) % ref.n;
      double& cell = map->min_correct_bits[static_cast<std::size_t>((i / map->cell_rows) * map->cols + j / map->cell_cols)];
      if (std::isnan(cell) || b < cell) cell = b;
    }
  }
  // The median: the smallest b with at least half the elements at or below it.
  const std::uint64_t total = codes.size() < ref.c.size() ? codes.size() : ref.c.size();
  std::uint64_t seen = 0;
  for (int b = 0; b <= p && total > 0; ++b) {
    seen += s.hist[static_cast<std::size_t>(b)];
    if (2 * seen >= total) {
      s.median = b;
      break;
    }
  }
  return s;
}

}  // namespace fpcert
