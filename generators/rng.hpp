// generators/rng.hpp — counter-based random variates for the generators (Philox4x32-10).
//
// A Stream is (key = the spec's seed, id = a stream number fixed per family and purpose). Draw
// number `index` of a stream, attempt `a`, is Philox4x32-10(key, counter = (id << 32 | a) << 64 |
// index): element i of a matrix always reads counter i, so values never depend on threading or
// iteration order, and no state is carried from one element to the next. docs/generators.md
// lists the stream numbers of each family.
//
// Only integer arithmetic and IEEE basic operations (plus detmath's log) turn bits into numbers;
// no std::*_distribution (their algorithms differ between standard libraries).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "base/philox.hpp"
#include "generators/detmath.hpp"

namespace fpcert {

struct Stream {
  std::uint64_t key = 0;  ///< the spec's seed
  std::uint32_t id = 0;   ///< stream number (docs/generators.md, "Random streams")
  /// A sub-stream: id + offset (families number their purposes within their own range).
  Stream sub(std::uint32_t offset) const { return {key, id + offset}; }
};

/// The four 32-bit words of draw `index`, attempt `attempt`.
inline std::array<std::uint32_t, 4> draw_words(const Stream& s, std::uint64_t index, std::uint32_t attempt = 0) {
  return philox_4x32(s.key, (static_cast<std::uint64_t>(s.id) << 32) | attempt, index);
}

/// A double in [0, 1) from 53 random bits: (hi:lo >> 11) * 2^-53 (exact).
inline double u53(std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t b = (static_cast<std::uint64_t>(hi) << 32) | lo;
  return static_cast<double>(b >> 11) * 0x1p-53;
}

/// Uniform [0, 1) from words 0 and 1 of draw `index`.
inline double uniform01(const Stream& s, std::uint64_t index) {
  const auto w = draw_words(s, index);
  return u53(w[0], w[1]);
}

/// Two independent uniforms [0, 1) of draw `index`: words 0,1 and 2,3.
inline std::array<double, 2> uniform01_pair(const Stream& s, std::uint64_t index, std::uint32_t attempt = 0) {
  const auto w = draw_words(s, index, attempt);
  return {u53(w[0], w[1]), u53(w[2], w[3])};
}

/// An integer uniform in [0, n) (n >= 1) from words 0 and 1: floor(b * n / 2^64) (the 64x64 ->
/// 128-bit multiply; bias at most n / 2^64).
inline std::uint64_t uniform_below(const Stream& s, std::uint64_t index, std::uint64_t n) {
  const auto w = draw_words(s, index);
  const std::uint64_t b = (static_cast<std::uint64_t>(w[1]) << 32) | w[0];
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(b) * n) >> 64);
}

/// A standard normal by Marsaglia's polar method: attempt a = 0, 1, ... draws u, v uniform in
/// [-1, 1) from draw (index, attempt) until 0 < s = u^2 + v^2 < 1; returns u * sqrt(-2 log(s) / s)
/// with detmath's log (the second variate v * ... is not used, so each element owns its counter).
/// The acceptance rate is pi / 4; attempts beyond 2^32 would wrap (probability 0.21^(2^32)).
inline double normal(const Stream& s, std::uint64_t index) {
  for (std::uint32_t a = 0;; ++a) {
    const auto w = draw_words(s, index, a);
    const double u = 2.0 * u53(w[0], w[1]) - 1.0;  // exact
    const double v = 2.0 * u53(w[2], w[3]) - 1.0;
    const double q = u * u + v * v;
    if (q > 0.0 && q < 1.0) return u * std::sqrt((-2.0 * det_log(q)) / q);  // IEEE sqrt: exact rounding
  }
}

/// True with probability p (p in [0, 1]): uniform01 < p.
inline bool bernoulli(const Stream& s, std::uint64_t index, double p) { return uniform01(s, index) < p; }

/// A random sign (+1 or -1) from bit 0 of word 3 of draw `index`.
inline double random_sign(const Stream& s, std::uint64_t index) { return (draw_words(s, index)[3] & 1u) ? -1.0 : 1.0; }

}  // namespace fpcert
