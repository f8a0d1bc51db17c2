// oracle/exact_sum.hpp — an exact superaccumulator: sums of doubles and of exact products of doubles
// (fp64 x fp64 included), with no rounding and no intermediate overflow, finalized into a RefValue
// or correctly rounded into a double.
//
// In the spirit of Neal's "small superaccumulator" (R. M. Neal, "Fast exact summation using small
// and large superaccumulators", arXiv:1505.05571, 2015), written for fpcert: the value is
//   sum_c chunk[c] * 2^(32 c + kLowExp)
// with signed 64-bit chunks that each take 32-bit digits; carries are propagated only when the
// value is read or after 2^30 additions, so an addition is a few integer adds. ExactSum's range covers
// every product of two finite doubles (2^-2148 .. 2^2048) and sums of up to 2^40 of them.
// docs/oracle.md states the invariants; tests/oracle/exact_sum_test.cpp checks it against MPFR.
//
// The same code runs on a GPU (issue 39, docs/oracle.md "On the GPU"): every function is FPCERT_EXACT_HD (__host__
// __device__ under nvcc, nothing otherwise; no CUDA header is included here), and BasicExactSum<Chunks, LowExp> with
// fewer chunks is the device's accumulator for the narrower range of fp32 inputs (oracle/exact_combine.hpp).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "oracle/refvalue.hpp"

#if defined(__CUDACC__)
#define FPCERT_EXACT_HD __host__ __device__
#else
#define FPCERT_EXACT_HD
#endif

namespace fpcert {

// Bit-level helpers that compile to the same operation on host and device.
namespace hd {
FPCERT_EXACT_HD inline std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<std::uint64_t>(x);
#endif
}
FPCERT_EXACT_HD inline double double_of(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  return std::bit_cast<double>(u);
#endif
}
/// Leading zeros of a 64-bit word (64 for 0).
FPCERT_EXACT_HD inline int clz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return std::countl_zero(v);
#endif
}
/// Trailing zeros of a 64-bit word (64 for 0).
FPCERT_EXACT_HD inline int ctz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return v ? __ffsll(static_cast<long long>(v)) - 1 : 64;
#else
  return std::countr_zero(v);
#endif
}
FPCERT_EXACT_HD inline int clz128(unsigned __int128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  return hi ? clz64(hi) : 64 + clz64(static_cast<std::uint64_t>(v));
}
/// 2^e as a double, -1022 <= e <= 1023.
FPCERT_EXACT_HD inline double pow2(int e) { return double_of(static_cast<std::uint64_t>(e + 1023) << 52); }
/// m * 2^q correctly rounded (std::ldexp; on the device, CUDA's ldexp: both exact when the result is representable).
FPCERT_EXACT_HD inline double ldexp_hd(double m, int q) {
#if defined(__CUDA_ARCH__)
  return ::ldexp(m, q);
#else
  return std::ldexp(m, q);
#endif
}
FPCERT_EXACT_HD inline bool sign_bit(double x) { return (bits_of(x) >> 63) != 0; }

}  // namespace hd

/// |x| = m * 2^e with m < 2^53 an integer (finite x; zero gives m = 0).
struct DoubleParts {
  std::uint64_t m;
  int e;
};
FPCERT_EXACT_HD inline DoubleParts double_parts(double x) {
  const std::uint64_t u = hd::bits_of(x) & 0x7FFFFFFFFFFFFFFFULL;
  const int be = static_cast<int>(u >> 52);
  const std::uint64_t f = u & 0x000FFFFFFFFFFFFFULL;
  if (be == 0) return {f, -1074};
  return {f | (std::uint64_t{1} << 52), be - 1075};
}
/// floor(log2 |x|) of a finite nonzero double (subnormals included).
FPCERT_EXACT_HD inline int top_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.e + 63 - hd::clz64(p.m);
}
/// Exponent of the lowest set bit of a finite nonzero double: x is an odd multiple of 2^this.
FPCERT_EXACT_HD inline int low_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.e + hd::ctz64(p.m);
}

/// The superaccumulator over 2^LowExp .. 2^(32 Chunks + LowExp). Sums must stay inside that range (ExactSum's holds
/// every product of doubles); chunks are signed, so 2^30 additions between normalisations never overflow them.
template <int Chunks, int LowExp>
class BasicExactSum {
 public:
  FPCERT_EXACT_HD BasicExactSum() { reset_all(); }
  /// Back to zero (touches only the chunks used since the last clear).
  FPCERT_EXACT_HD void clear() {
    for (int c = lo_; c <= hi_; ++c) chunk_[c] = 0;
    lo_ = kChunks;
    hi_ = -1;
    adds_ = 0;
  }

  /// Add x (finite; callers route NaN and Inf elsewhere).
  FPCERT_EXACT_HD void add(double x) {
    const DoubleParts p = double_parts(x);
    if (!p.m) return;
    if constexpr (kNarrow) {  // the significand's trailing zeros may sit below the range: shifted out, checked
      add_scaled(hd::sign_bit(x) ? -static_cast<__int128>(p.m) : static_cast<__int128>(p.m), p.e);
      return;
    }
    add_magnitude(p.m, p.e, hd::sign_bit(x));
  }
  /// Add the exact product a * b of two finite doubles (106-bit significand, exponent down to 2^-2148).
  FPCERT_EXACT_HD void add_product(double a, double b) {
    const DoubleParts pa = double_parts(a), pb = double_parts(b);
    const unsigned __int128 prod = static_cast<unsigned __int128>(pa.m) * pb.m;
    if (prod == 0) return;
    const bool neg = hd::sign_bit(a) != hd::sign_bit(b);
    if constexpr (kNarrow) {
      add_scaled(neg ? -static_cast<__int128>(prod) : static_cast<__int128>(prod), pa.e + pb.e);  // prod < 2^106
      return;
    }
    add_magnitude(static_cast<std::uint64_t>(prod), pa.e + pb.e, neg);
    const auto high = static_cast<std::uint64_t>(prod >> 64);
    if (high) add_magnitude(high, pa.e + pb.e + 64, neg);
  }
  /// Add v * 2^e exactly (v any signed 128-bit integer except INT128_MIN). The value must lie in
  /// the accumulator's range: bits of v below 2^kLowExp must be zero (std::logic_error otherwise;
  /// a trap on the device) and |v| 2^e < 2^(32 Chunks + LowExp - 64).
  FPCERT_EXACT_HD void add_scaled(__int128 v, int e) {
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
  FPCERT_EXACT_HD int sign() {
    normalize();
    if (is_zero_normalized()) return 0;
    return chunk_[hi_] < 0 ? -1 : 1;
  }
  /// The exact sum rounded to the nearest double, ties to even (subnormals and overflow to +-Inf
  /// as IEEE 754 says).
  FPCERT_EXACT_HD double round_nearest() {
    normalize();
    if (is_zero_normalized()) return 0.0;
    if (chunk_[hi_] < 0) {
      negate();
      const double r = -round_magnitude(MagRound::Nearest);
      negate();
      return r;
    }
    return round_magnitude(MagRound::Nearest);
  }
  /// The exact sum rounded toward +Inf (overflow: +Inf, or -DBL_MAX for a sum below -DBL_MAX).
  FPCERT_EXACT_HD double round_up() {
    normalize();
    if (is_zero_normalized()) return 0.0;
    if (chunk_[hi_] < 0) {  // toward +Inf is toward zero in magnitude
      negate();
      const double r = -round_magnitude(MagRound::TowardZero);
      negate();
      return r;
    }
    return round_magnitude(MagRound::Away);
  }

  /// hi = RN(S), lo = RN(S - hi), tail = sign(S - hi - lo) (see RefValue). Status bits
  /// (gemm_ref.hpp's RefStatus values): 2 (overflow: RN(S) is +-Inf; then hi = +-Inf, lo = 0,
  /// tail = 0) and 4 (tiny: |S| < 2^-969, so hi + lo may carry fewer than 106 bits). Consumes
  /// the sum: clear() before reusing the accumulator.
  FPCERT_EXACT_HD RefValue finalize(std::uint8_t& status) {
    constexpr std::uint8_t kOverflowBit = 2, kTinyBit = 4;  // RefStatus (gemm_ref.hpp)
    normalize();
    if (is_zero_normalized()) return {};
    const bool neg = chunk_[hi_] < 0;
    if (neg) negate();  // the accumulator now holds M = |S|
    if (leading_exponent() <= -970) status |= kTinyBit;  // |S| < 2^-969
    const double hi_m = round_magnitude(MagRound::Nearest);
    if (hi_m > std::numeric_limits<double>::max()) {
      status |= kOverflowBit;
      return {neg ? -hi_m : hi_m, 0.0, 0};
    }
    add(-hi_m);  // R = M - hi (exact)
    normalize();
    if (is_zero_normalized()) return {neg ? -hi_m : hi_m, 0.0, 0};
    const bool rneg = chunk_[hi_] < 0;
    if (rneg) negate();                                        // holds |R|
    const double lo_abs = round_magnitude(MagRound::Nearest);  // RN(|R|) = |RN(R)|
    add(-lo_abs);                                              // |R| - |lo|
    const int t = sign();                                      // sign(R - lo) = (rneg ? -t : t)
    const double lo_m = rneg ? -lo_abs : lo_abs;
    const int tail_m = rneg ? -t : t;
    RefValue r;
    r.hi = neg ? -hi_m : hi_m;
    r.lo = neg ? -lo_m : lo_m;
    r.tail = static_cast<std::int8_t>(neg ? -tail_m : tail_m);
    return r;
  }

  static constexpr int kLowExp = LowExp;  ///< weight of bit 0 of chunk 0
  static constexpr int kChunks = Chunks;

 private:
  static constexpr std::int64_t kDigitMask = 0xFFFFFFFF;
  /// Narrower than every product of doubles (F32ExactSum): values enter through add_scaled, which refuses bits below.
  static constexpr bool kNarrow = LowExp > -2148;

  FPCERT_EXACT_HD void reset_all() {
    for (int c = 0; c < kChunks; ++c) chunk_[c] = 0;
    lo_ = kChunks;
    hi_ = -1;
    adds_ = 0;
  }
  FPCERT_EXACT_HD static void below_range() {
#if defined(__CUDA_ARCH__)
    __trap();  // the launch fails: a DeviceError at the host's check, never a silent value
#else
    throw std::logic_error("ExactSum::add_scaled: nonzero bits below the accumulator's range");
#endif
  }
  /// Add (neg ? -1 : 1) * m * 2^e, m < 2^64.
  FPCERT_EXACT_HD void add_magnitude(std::uint64_t m, int e, bool neg) {
    const int p = e - kLowExp;  // >= 0 by the range above
    if constexpr (kNarrow) {
      if (p < 0) below_range();  // unreachable through add_scaled; kept for the compiler's bounds analysis
    }
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
  FPCERT_EXACT_HD void normalize() {
    adds_ = 0;
    if (hi_ < lo_) return;
    std::int64_t carry = 0;
    int c = lo_;
    for (; c <= hi_; ++c) {
      const std::int64_t v = chunk_[c] + carry;  // |v| < 2^63: |chunk| <= 2^62, |carry| <= 2^32
      carry = v >> 32;                            // floor division by 2^32 (arithmetic shift)
      chunk_[c] = v & kDigitMask;
    }
    // The remaining carry is the signed part above hi_: spread it into digits until only the sign
    // (0 or -1, i.e. -2^(32c)) is left.
    while (carry != 0 && carry != -1) {
      chunk_[c] = carry & kDigitMask;
      carry >>= 32;
      ++c;
    }
    chunk_[c] = carry;
    hi_ = c;
    // Trim zero digits at the bottom (keeps later passes short).
    while (lo_ < hi_ && chunk_[lo_] == 0) ++lo_;
  }
  /// Negate the value in place (and normalize).
  FPCERT_EXACT_HD void negate() {
    for (int c = lo_; c <= hi_; ++c) chunk_[c] = -chunk_[c];
    normalize();
  }
  FPCERT_EXACT_HD bool is_zero_normalized() const {
    if (hi_ < lo_) return true;
    if (chunk_[hi_] != 0) return false;
    for (int c = lo_; c < hi_; ++c)
      if (chunk_[c]) return false;
    return true;
  }
  enum class MagRound { Nearest, Away, TowardZero };
  /// Round the (normalized, positive, nonzero) value to a double: nearest-even, away from zero or
  /// toward zero (which saturates at DBL_MAX).
  FPCERT_EXACT_HD double round_magnitude(MagRound mode) const {
    // Top nonzero digit t; a 128-bit window of digits t..t-3, everything below is the sticky bit.
    int t = hi_;
    while (t > lo_ && chunk_[t] == 0) --t;
    unsigned __int128 w = 0;
    for (int c = t; c > t - 4; --c) {
      w <<= 32;
      if (c >= lo_) w |= static_cast<std::uint32_t>(chunk_[c]);
    }
    bool sticky = false;
    for (int c = lo_; c <= t - 4; ++c)
      if (chunk_[c]) {
        sticky = true;
        break;
      }
    w <<= hd::clz128(w);  // leading bit at 127, of weight 2^L
    const int L = 32 * t + 31 - (hd::clz64(static_cast<std::uint32_t>(chunk_[t])) - 32) + kLowExp;
    const int q = L - 52 > -1074 ? L - 52 : -1074;  // exponent of the result's last place
    const int kept = L - q + 1;                       // <= 53 bits kept; <= 0 below 2^-1074
    std::uint64_t mant;
    bool up;
    if (kept >= 1) {
      mant = static_cast<std::uint64_t>(w >> (128 - kept));
      const unsigned __int128 rest = kept == 128 ? 0 : w << kept;  // discarded bits, left-aligned
      constexpr unsigned __int128 kHalf = static_cast<unsigned __int128>(1) << 127;
      const bool inexact = rest != 0 || sticky;
      switch (mode) {
        case MagRound::Nearest: up = rest > kHalf || (rest == kHalf && (sticky || (mant & 1))); break;
        case MagRound::Away: up = inexact; break;
        default: up = false; break;
      }
    } else {
      // kept == 0: the value is in [2^-1075, 2^-1074), exactly 2^-1075 a tie (to even: 0);
      // kept < 0: below 2^-1075, nearer to 0.
      mant = 0;
      const bool above_half = kept == 0 && ((w << 1) != 0 || sticky);
      switch (mode) {
        case MagRound::Nearest: up = above_half; break;
        case MagRound::Away: up = true; break;
        default: up = false; break;
      }
    }
    mant += up;
    // mant <= 2^53; mant * 2^q overflows when its top bit reaches 2^1024.
    const int top = mant ? q + 63 - hd::clz64(mant) : q;
    if (top >= 1024)
      return mode == MagRound::TowardZero ? std::numeric_limits<double>::max() : std::numeric_limits<double>::infinity();
    return hd::ldexp_hd(static_cast<double>(mant), q);
  }
  /// Exponent of the leading bit of the (normalized, positive, nonzero) value.
  FPCERT_EXACT_HD int leading_exponent() const {
    int t = hi_;
    while (t > lo_ && chunk_[t] == 0) --t;
    const auto d = static_cast<std::uint32_t>(chunk_[t]);
    return 32 * t + 31 - (hd::clz64(d) - 32) + kLowExp;
  }

  std::int64_t chunk_[Chunks];
  int lo_ = Chunks, hi_ = -1;  ///< chunks that may be nonzero: [lo_, hi_]
  std::uint32_t adds_ = 0;     ///< additions since the last normalization
};

/// Every product of two finite doubles (2^-2148 .. 2^2048) and sums of up to 2^40 of them: kLowExp = -2176, 136 chunks
/// (up to 2^2176).
using ExactSum = BasicExactSum<136, -2176>;

}  // namespace fpcert
