// oracle/refvalue.cpp — hi + lo + tail into an exact (significand, exponent, sticky) triple.
#include "oracle/refvalue.hpp"

#include <bit>
#include <cmath>

namespace fpcert {
namespace {

struct Parts {
  std::uint64_t m;  // integer significand (< 2^53)
  int e;            // value = m * 2^e
};

Parts parts(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x) & 0x7FFFFFFFFFFFFFFFULL;
  const int be = static_cast<int>(u >> 52);
  const std::uint64_t f = u & 0x000FFFFFFFFFFFFFULL;
  if (be == 0) return {f, -1074};
  return {f | (std::uint64_t{1} << 52), be - 1075};
}

int clz128(unsigned __int128 v) {
  const std::uint64_t hi = static_cast<std::uint64_t>(v >> 64);
  if (hi) return std::countl_zero(hi);
  return 64 + std::countl_zero(static_cast<std::uint64_t>(v));
}

}  // namespace

Exact to_exact(const RefValue& r) {
  if (!std::isfinite(r.hi)) return exact_from_double(r.hi);
  Exact x;
  if (r.hi == 0.0) {
    x.cls = FpClass::Zero;
    x.neg = std::signbit(r.hi);
    return x;
  }
  const bool neg = std::signbit(r.hi);
  // Magnitude window: |hi| in the top of a 128-bit integer W, value = W * 2^e0.
  const Parts h = parts(r.hi);
  unsigned __int128 W = static_cast<unsigned __int128>(h.m) << 75;
  const int e0 = h.e - 75;
  bool sticky = false;
  if (r.lo != 0.0) {
    const bool same = std::signbit(r.lo) == neg;  // lo adds to the magnitude
    const Parts l = parts(r.lo);
    const int d = l.e - e0;
    unsigned __int128 Lw;
    bool lost;
    if (d >= 0) {
      Lw = static_cast<unsigned __int128>(l.m) << d;  // |lo| <= ulp(hi)/2 keeps this inside 128 bits
      lost = false;
    } else if (-d >= 64) {
      Lw = 0;
      lost = l.m != 0;
    } else {
      Lw = l.m >> -d;
      lost = (l.m & ((std::uint64_t{1} << -d) - 1)) != 0;
    }
    if (same) {
      W += Lw;
      sticky = lost;
    } else {
      W -= Lw;
      if (lost) {  // W - (Lw + f) = (W - Lw - 1) + (1 - f), 0 < 1 - f < 1
        W -= 1;
        sticky = true;
      }
    }
  }
  const int tail_mag = neg ? -r.tail : r.tail;  // tail in the direction of the magnitude
  if (tail_mag > 0) {
    sticky = true;
  } else if (tail_mag < 0 && !sticky) {
    W -= 1;
    sticky = true;
  }
  const int lz = clz128(W);
  const unsigned __int128 norm = W << lz;
  x.cls = FpClass::Normal;
  x.neg = neg;
  x.sig = static_cast<std::uint64_t>(norm >> 64);
  sticky = sticky || static_cast<std::uint64_t>(norm) != 0;
  x.sticky = sticky;
  x.exp = e0 + 64 - lz;
  return x;
}

RefValue ref_from_two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  return {s, err, 0};
}

}  // namespace fpcert
