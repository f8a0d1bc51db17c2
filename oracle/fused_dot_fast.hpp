// oracle/fused_dot_fast.hpp — internal to oracle/fused_dot*.cpp (not a public API): the operand decoder and the
// fast path's applicability and operands, shared by fused_dot's int64 path (fused_dot.cpp) and the batched
// path (fused_dot_lanes.cpp).
#pragma once

#include <cstdint>

#include "oracle/format.hpp"
#include "oracle/fused_dot.hpp"

namespace fpcert::fused_detail {

inline constexpr int kMaxFused = 256;
inline constexpr int kFastMaxAlign = 36;  // aligned terms below 2^(36 + 2) each
inline constexpr int kFastMaxBlock = 32;  // products per block: 33 terms with C, |sum| < 2^44 (exact in binary64 too)

/// unpack() for the signed formats with subnormals the model takes, without its per-call tag
/// comparisons: the descriptor's fields read once, then a few integer operations per code.
struct Decoder {
  std::uint64_t mag_mask, frac_mask, sign_mask;
  int frac, bias, emin;
  std::uint64_t top;  ///< biased exponent of Inf/NaN (IEEE)
  bool ieee, finite_nan, tf32_container;
  explicit Decoder(const Format& f)
      : mag_mask(f.magnitude_mask()), frac_mask(f.frac_mask()), sign_mask(f.sign_mask()), frac(f.frac_bits), bias(f.bias), emin(f.emin()),
        top(static_cast<std::uint64_t>(f.max_biased_exp())), ieee(f.specials == Specials::IEEE), finite_nan(f.specials == Specials::FiniteNaN),
        tf32_container(f == tf32) {}
  Unpacked operator()(std::uint64_t code) const {
    Unpacked u;
    u.neg = (code & sign_mask) != 0;
    const std::uint64_t mag = code & mag_mask;
    const std::uint64_t biased = mag >> frac;
    const std::uint64_t fr = mag & frac_mask;
    if ((ieee && biased == top) || (finite_nan && mag == mag_mask)) {
      u.cls = (ieee && fr == 0) ? FpClass::Inf : FpClass::NaN;
      u.sig = fr;
      u.exp = 0;
    } else if (biased == 0) {
      u.cls = fr ? FpClass::Subnormal : FpClass::Zero;
      u.sig = fr;
      u.exp = fr ? emin - frac : 0;
    } else {
      u.cls = FpClass::Normal;
      u.sig = fr | (std::uint64_t{1} << frac);
      u.exp = static_cast<int>(biased) - bias - frac;
    }
    return u;
  }
};

/// Whether fused_dot's int64 fast path (and so the batched path) applies to these parameters.
bool fast_applies(const FusedDotParams& p);

/// One operand, decoded for the fast path: value = sig * 2^exp, ref = the exponent of its leading bit
/// position (emin for subnormals); special: Inf or NaN.
struct FastOp {
  std::int32_t sig;  // signed significand (0: zero)
  int exp, ref;
  bool special;
};
FastOp fast_operand(const Decoder& d, std::uint64_t bits);

}  // namespace fpcert::fused_detail
