// oracle/exact_sum.hpp — an exact superaccumulator: sums of doubles and of exact products of doubles
// (fp64 x fp64 included), with no rounding and no intermediate overflow, finalized into a RefValue
// or correctly rounded into a double.
//
// In the spirit of Neal's "small superaccumulator" (R. M. Neal, "Fast exact summation using small
// and large superaccumulators", arXiv:1505.05571, 2015), written for fpcert: the value is
//   sum_c chunk[c] * 2^(32 c + kLowExp)
// with signed 64-bit chunks that each take 32-bit digits; carries are propagated only when the
// value is read or after 2^30 additions, so an addition is a few integer adds. The range covers
// every product of two finite doubles (2^-2148 .. 2^2048) and sums of up to 2^40 of them.
// docs/oracle.md states the invariants; tests/oracle/exact_sum_test.cpp checks it against MPFR.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "oracle/refvalue.hpp"

namespace fpcert {

/// |x| = m * 2^e with m < 2^53 an integer (finite x; zero gives m = 0).
struct DoubleParts {
  std::uint64_t m;
  int e;
};
inline DoubleParts double_parts(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x) & 0x7FFFFFFFFFFFFFFFULL;
  const int be = static_cast<int>(u >> 52);
  const std::uint64_t f = u & 0x000FFFFFFFFFFFFFULL;
  if (be == 0) return {f, -1074};
  return {f | (std::uint64_t{1} << 52), be - 1075};
}
/// floor(log2 |x|) of a finite nonzero double (subnormals included).
inline int top_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.e + 63 - std::countl_zero(p.m);
}
/// Exponent of the lowest set bit of a finite nonzero double: x is an odd multiple of 2^this.
inline int low_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.e + std::countr_zero(p.m);
}

class ExactSum {
 public:
  ExactSum() { reset_all(); }
  /// Back to zero (touches only the chunks used since the last clear).
  void clear();

  /// Add x (finite; callers route NaN and Inf elsewhere).
  void add(double x) {
    const DoubleParts p = double_parts(x);
    if (p.m) add_magnitude(p.m, p.e, std::signbit(x));
  }
  /// Add the exact product a * b of two finite doubles (106-bit significand, exponent down to 2^-2148).
  void add_product(double a, double b) {
    const DoubleParts pa = double_parts(a), pb = double_parts(b);
    const unsigned __int128 prod = static_cast<unsigned __int128>(pa.m) * pb.m;
    if (prod == 0) return;
    const bool neg = std::signbit(a) != std::signbit(b);
    add_magnitude(static_cast<std::uint64_t>(prod), pa.e + pb.e, neg);
    const auto high = static_cast<std::uint64_t>(prod >> 64);
    if (high) add_magnitude(high, pa.e + pb.e + 64, neg);
  }
  /// Add v * 2^e exactly (v any signed 128-bit integer except INT128_MIN). The value must lie in
  /// the accumulator's range: bits of v below 2^kLowExp must be zero (std::logic_error otherwise)
  /// and |v| 2^e < 2^2100.
  void add_scaled(__int128 v, int e) {
    if (v == 0) return;
    const bool neg = v < 0;
    unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    if (e < kLowExp) {
      const int sh = kLowExp - e;
      if (sh >= 128 || (u & ((static_cast<unsigned __int128>(1) << sh) - 1)) != 0) below_range();
      u >>= sh;
      e = kLowExp;
    }
    if (static_cast<std::uint64_t>(u)) add_magnitude(static_cast<std::uint64_t>(u), e, neg);
    const auto high = static_cast<std::uint64_t>(u >> 64);
    if (high) add_magnitude(high, e + 64, neg);
  }

  /// Sign of the exact sum: -1, 0 or +1.
  int sign();
  /// The exact sum rounded to the nearest double, ties to even (subnormals and overflow to +-Inf
  /// as IEEE 754 says).
  double round_nearest();
  /// The exact sum rounded toward +Inf (overflow: +Inf, or -DBL_MAX for a sum below -DBL_MAX).
  double round_up();

  /// hi = RN(S), lo = RN(S - hi), tail = sign(S - hi - lo) (see RefValue). Status bits
  /// (gemm_ref.hpp's RefStatus values): 2 (overflow: RN(S) is +-Inf; then hi = +-Inf, lo = 0,
  /// tail = 0) and 4 (tiny: |S| < 2^-969, so hi + lo may carry fewer than 106 bits). Consumes
  /// the sum: clear() before reusing the accumulator.
  RefValue finalize(std::uint8_t& status);

  static constexpr int kLowExp = -2176;  ///< weight of bit 0 of chunk 0 (products reach 2^-2148)
  static constexpr int kChunks = 136;    ///< up to 2^(32*136 - 2176) = 2^2176 > 2^40 * 2^2048

 private:
  void reset_all();
  [[noreturn]] static void below_range();
  /// Add (neg ? -1 : 1) * m * 2^e, m < 2^64.
  void add_magnitude(std::uint64_t m, int e, bool neg) {
    const int p = e - kLowExp;  // >= 0 by the range above
    const int c = p >> 5, o = p & 31;
    const unsigned __int128 v = static_cast<unsigned __int128>(m) << o;  // < 2^95
    const auto w0 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v));
    const auto w1 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 32));
    const auto w2 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 64));
    if (neg) {
      chunk_[c] -= w0;
      chunk_[c + 1] -= w1;
      chunk_[c + 2] -= w2;
    } else {
      chunk_[c] += w0;
      chunk_[c + 1] += w1;
      chunk_[c + 2] += w2;
    }
    if (c < lo_) lo_ = c;
    if (c + 2 > hi_) hi_ = c + 2;
    // Each chunk receives at most one digit (< 2^32) per call: 2^30 calls keep |chunk| < 2^63.
    if (++adds_ == (1u << 30)) normalize();
  }
  /// Propagate carries: chunks lo_..hi_-1 become digits in [0, 2^32), chunk hi_ is 0 or -1 (the sign).
  void normalize();
  /// Negate the value in place (and normalize).
  void negate();
  bool is_zero_normalized() const;
  enum class MagRound { Nearest, Away, TowardZero };
  /// Round the (normalized, positive, nonzero) value to a double: nearest-even, away from zero or
  /// toward zero (which saturates at DBL_MAX).
  double round_magnitude(MagRound mode) const;
  /// Exponent of the leading bit of the (normalized, positive, nonzero) value.
  int leading_exponent() const;

  std::int64_t chunk_[kChunks];
  int lo_ = kChunks, hi_ = -1;  ///< chunks that may be nonzero: [lo_, hi_]
  std::uint32_t adds_ = 0;      ///< additions since the last normalization
};

}  // namespace fpcert
