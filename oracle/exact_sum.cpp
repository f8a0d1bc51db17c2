// oracle/exact_sum.cpp — carry propagation, sign, correct rounding and RefValue of ExactSum.
#include "oracle/exact_sum.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace fpcert {
namespace {

constexpr std::int64_t kDigitMask = 0xFFFFFFFF;

int clz128(unsigned __int128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  if (hi) return std::countl_zero(hi);
  return 64 + std::countl_zero(static_cast<std::uint64_t>(v));
}

}  // namespace

void ExactSum::below_range() {
  throw std::logic_error("ExactSum::add_scaled: nonzero bits below 2^-2176 (outside every product's range)");
}

void ExactSum::reset_all() {
  std::memset(chunk_, 0, sizeof chunk_);
  lo_ = kChunks;
  hi_ = -1;
  adds_ = 0;
}

void ExactSum::clear() {
  if (hi_ >= lo_) std::memset(chunk_ + lo_, 0, sizeof(std::int64_t) * static_cast<std::size_t>(hi_ - lo_ + 1));
  lo_ = kChunks;
  hi_ = -1;
  adds_ = 0;
}

void ExactSum::normalize() {
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

bool ExactSum::is_zero_normalized() const {
  if (hi_ < lo_) return true;
  if (chunk_[hi_] != 0) return false;
  for (int c = lo_; c < hi_; ++c)
    if (chunk_[c]) return false;
  return true;
}

void ExactSum::negate() {
  for (int c = lo_; c <= hi_; ++c) chunk_[c] = -chunk_[c];
  normalize();
}

int ExactSum::sign() {
  normalize();
  if (is_zero_normalized()) return 0;
  return chunk_[hi_] < 0 ? -1 : 1;
}

int ExactSum::leading_exponent() const {
  int t = hi_;
  while (t > lo_ && chunk_[t] == 0) --t;
  const auto d = static_cast<std::uint32_t>(chunk_[t]);
  return 32 * t + 31 - std::countl_zero(d) + kLowExp;
}

double ExactSum::round_magnitude(MagRound mode) const {
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
  w <<= clz128(w);  // leading bit at 127, of weight 2^L
  const int L = 32 * t + 31 - std::countl_zero(static_cast<std::uint32_t>(chunk_[t])) + kLowExp;
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
  const int top = mant ? q + 63 - std::countl_zero(mant) : q;
  if (top >= 1024)
    return mode == MagRound::TowardZero ? std::numeric_limits<double>::max() : std::numeric_limits<double>::infinity();
  return std::ldexp(static_cast<double>(mant), q);
}

double ExactSum::round_nearest() {
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

double ExactSum::round_up() {
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

RefValue ExactSum::finalize(std::uint8_t& status) {
  constexpr std::uint8_t kOverflowBit = 2, kTinyBit = 4;  // RefStatus (gemm_ref.hpp)
  normalize();
  if (is_zero_normalized()) return {};
  const bool neg = chunk_[hi_] < 0;
  if (neg) negate();  // the accumulator now holds M = |S|
  if (leading_exponent() <= -970) status |= kTinyBit;  // |S| < 2^-969
  const double hi_m = round_magnitude(MagRound::Nearest);
  if (std::isinf(hi_m)) {
    status |= kOverflowBit;
    return {neg ? -hi_m : hi_m, 0.0, 0};
  }
  add(-hi_m);  // R = M - hi (exact)
  normalize();
  if (is_zero_normalized()) return {neg ? -hi_m : hi_m, 0.0, 0};
  const bool rneg = chunk_[hi_] < 0;
  if (rneg) negate();                        // holds |R|
  const double lo_abs = round_magnitude(MagRound::Nearest);  // RN(|R|) = |RN(R)|
  add(-lo_abs);                                  // |R| - |lo|
  const int t = sign();                          // sign(R - lo) = (rneg ? -t : t)
  const double lo_m = rneg ? -lo_abs : lo_abs;
  const int tail_m = rneg ? -t : t;
  RefValue r;
  r.hi = neg ? -hi_m : hi_m;
  r.lo = neg ? -lo_m : lo_m;
  r.tail = static_cast<std::int8_t>(neg ? -tail_m : tail_m);
  return r;
}

}  // namespace fpcert
