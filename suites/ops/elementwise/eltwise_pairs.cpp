// suites/ops/elementwise/eltwise_pairs.cpp — the input pairs of a binary function's case (docs/elementwise.md, "Binary
// functions"): every pair of the special values, and a Philox sample designed to force rounding and reach the hard regions
// (2^64 pairs cannot be exhaustive).
#include <bit>
#include <cmath>

#include "base/error.hpp"
#include "base/philox.hpp"
#include "suites/ops/elementwise/eltwise_runner.hpp"

namespace fpcert {

namespace {

std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
/// u in [0, 1) from two Philox words (53 bits).
double unit(std::uint32_t a, std::uint32_t b) { return static_cast<double>((static_cast<std::uint64_t>(a) << 21) ^ b) * 0x1p-53; }
/// A magnitude spread over every binade of f32 (2^-149 .. 2^128, log-uniform), rounded to f32.
float log_uniform(double u) { return static_cast<float>(std::exp2(-149.0 + u * 277.0)); }
float signed_by(std::uint32_t w, float v) { return (w & 1u) ? -v : v; }

/// The special values of every pair (IEEE 754 9.2's cases of pow and atan2, division's signed zeros and infinities, the
/// domain edges of CUDA's __fdividef).
constexpr std::uint32_t kSpecial[] = {
    0x00000000u, 0x80000000u,  // +0, -0
    0x7f800000u, 0xff800000u,  // +Inf, -Inf
    0x7fc00000u, 0xffc00000u,  // quiet NaN, negative quiet NaN
    0x7f800001u,               // signalling NaN
    0x3f800000u, 0xbf800000u,  // +1, -1 (pow(+1, y) = 1 for every y, pow(-1, +-Inf) = 1)
    0x3f7fffffu, 0x3f800001u,  // 1 - 2^-24, 1 + 2^-23 (pow towards +-Inf: 0 or Inf)
    0x00000001u, 0x80000001u,  // +-2^-149, the least subnormal
    0x00800000u, 0x80800000u,  // +-2^-126, the least normal (__fdividef's domain starts at |y| = 2^-126)
    0x7f7fffffu, 0xff7fffffu,  // +-max finite
    0x40000000u, 0xc0000000u,  // +-2 (an even integer exponent)
    0x40400000u, 0xc0400000u,  // +-3 (an odd integer: pow's sign rule)
    0x3f000000u, 0xbf000000u,  // +-0.5 (a non-integer exponent: pow of a negative base is NaN)
    0x7e800000u, 0xfe800000u,  // +-2^126, the end of __fdividef's domain
    0x7ec00000u, 0xfec00000u,  // +-1.5 2^126: __fdividef gives 0 (x finite), NaN (x infinite)
};

/// A code within +-64 codes of one of __fdividef's domain edges, or of 2^127 inside (2^126, 2^128).
std::uint32_t near_edge(std::uint32_t w) {
  constexpr std::uint32_t edges[] = {0x00800000u, 0x7e800000u, 0x7f000000u, 0x7f7fffc0u};
  const std::uint32_t c = edges[(w >> 1) % 4] + ((w >> 4) % 129) - 64;
  return (w & 1u) ? c | 0x80000000u : c;
}

}  // namespace

void eltwise_input_pairs(const EltwiseInputs& s, const EltwiseTraits& t, std::vector<std::uint32_t>& x1, std::vector<std::uint32_t>& x2) {
  x1.clear();
  x2.clear();
  if (s.kind == EltwiseInputs::Kind::All)
    throw InputError(std::string(math::to_string(t.fn)) + " is binary: 2^64 input pairs cannot be swept (inputs=special or inputs=sample)");
  if (s.kind == EltwiseInputs::Kind::Special) {
    for (std::uint32_t a : kSpecial)
      for (std::uint32_t b : kSpecial) x1.push_back(a), x2.push_back(b);
    return;
  }
  const math::Fn f = t.fn;
  x1.reserve(s.n);
  x2.reserve(s.n);
  for (std::uint64_t i = 0; i < s.n; ++i) {
    const auto w = philox_4x32(s.seed, 0x656c7432, i);  // "elt2"
    const double u = unit(w[1], w[2]), v = unit(w[3], w[0] ^ w[2]);
    float a = 0, b = 0;
    switch (i % 8) {
      case 0:  // random bit patterns: the whole domain (NaNs, infinities, subnormals included)
        x1.push_back(w[0]), x2.push_back(w[1]);
        continue;
      case 1:  // both near 1 (quotients near 1, atan2 near pi/4); pow: x1 near 1, |x2| up to 2^30 (results over the whole range)
        a = static_cast<float>(1.0 + (u - 0.5) * std::exp2(-static_cast<double>(w[0] % 24)));
        b = f == math::Fn::Pow ? signed_by(w[3], static_cast<float>(std::exp2(v * 30.0)))
                               : static_cast<float>(1.0 + (v - 0.5) * std::exp2(-static_cast<double>(w[3] % 24)));
        break;
      case 2:  // independent magnitudes over every binade: huge and tiny ratios, overflow and underflow of x1 / x2
        a = signed_by(w[0], log_uniform(u)), b = signed_by(w[3], log_uniform(v));
        break;
      case 3:  // x2 near __fdividef's domain edges 2^-126, 2^126, inside (2^126, 2^128), the largest finite
        a = signed_by(w[3], log_uniform(u));
        b = std::bit_cast<float>(near_edge(w[0]));
        break;
      case 4:  // subnormals: x2 (or both) subnormal, x1 anywhere
        a = (w[3] & 2u) ? std::bit_cast<float>(w[2] & 0x807fffffu) : signed_by(w[3], log_uniform(u));
        b = std::bit_cast<float>(w[0] & 0x807fffffu);
        if ((w[0] & 0x007fffffu) == 0) b = std::bit_cast<float>(w[0] | 1u);
        break;
      case 5:  // the function's own hard cases
        if (f == math::Fn::Pow) {
          // a negative base with an integer exponent (the sign rule; odd and even), results across the range
          a = -static_cast<float>(std::exp2((u - 0.5) * 8.0));
          b = static_cast<float>(static_cast<int>(w[0] % 401) - 200);
        } else if (f == math::Fn::Atan2) {
          // |x1| near |x2| (results near +-pi/4 and +-3pi/4)
          a = signed_by(w[0], log_uniform(u));
          b = signed_by(w[3], static_cast<float>(std::fabs(a) * (1.0 + (v - 0.5) * 0x1p-10)));
        } else if (f == math::Fn::Fmax || f == math::Fn::Fmin) {
          // one operand NaN (quiet or signalling, either side), or x2 = +-x1 (equal magnitudes, both zeros)
          a = signed_by(w[0], log_uniform(u));
          const std::uint32_t nan = (w[3] & 4u) ? 0x7f800000u | (w[2] & 0x003fffffu) | 1u : 0x7fc00000u | (w[2] & 0x3fffffu);
          b = (w[3] & 2u) ? std::bit_cast<float>(nan) : signed_by(w[3], a);
          if (w[3] & 8u) std::swap(a, b);
        } else {
          // the same significand within a few codes (quotients near powers of two: exact results and their neighbours)
          const std::uint32_t m = w[0] & 0x007fffffu, e1 = 1 + (w[2] % 254), e2 = 1 + (w[3] % 254);
          a = std::bit_cast<float>((e1 << 23) | m | (w[2] & 0x80000000u));
          b = std::bit_cast<float>((e2 << 23) | ((m + (w[1] % 9) - 4) & 0x007fffffu) | (w[3] & 0x80000000u));
        }
        break;
      case 6:  // results near the overflow and underflow thresholds
        if (f == math::Fn::Pow) {
          // x2 log2|x1| in [120, 136] or [-156, -120]: results around 2^128 and the subnormal range
          const double l = (w[0] & 2u ? 1.0 : -1.0) * std::exp2((u - 0.5) * 14.0);  // log2|x1| in +-[2^-7, 2^7]
          a = static_cast<float>(std::exp2(l));
          const double target = (w[3] & 1u) ? 120.0 + v * 16.0 : -156.0 + v * 36.0;
          b = static_cast<float>(target / std::log2(static_cast<double>(a)));
        } else {
          // x1 / x2 near 2^128, 2^-126 and 2^-149 (division), atan2's tiny and huge ratios
          constexpr int targets[] = {127, 128, -126, -149, -150, 100};
          const int e = targets[w[0] % 6];
          b = signed_by(w[3], static_cast<float>(std::exp2((v - 0.5) * 100.0)));
          a = signed_by(w[2], static_cast<float>(std::ldexp(std::fabs(static_cast<double>(b)) * (1.0 + u), e)));
          if (!std::isfinite(a) || a == 0) a = signed_by(w[2], log_uniform(u));
        }
        break;
      default:  // moderate values, uniform in [-16, 16]: ordinary results of every function
        a = static_cast<float>((u - 0.5) * 32.0), b = static_cast<float>((v - 0.5) * 32.0);
        break;
    }
    x1.push_back(bits(a));
    x2.push_back(bits(b));
  }
}

}  // namespace fpcert
