// kernels/block/block_quant_arith.cuh — the arithmetic of the CUDA block quantizer (kernels/block/cuda/block_quant.cu)
// for fp32 inputs, one description for the device and the host: scale exponents of the four E8M0 rules from
// amax's bits, correct rounding into an element format (nearest-even, toward zero or up, saturating), and
// the exact-quotient rounding NVFP4 needs (x / (S s_t) through an fp64 quotient and its exact fma remainder).
//
// Without nvcc this header compiles as plain C++ (emu_arith.cuh's pattern): tests/kernels/block/block_quant_arith_test.cpp
// holds these functions equal to the quantizer model of oracle/block/block_format.hpp, value for value, on every
// format and rule; the device kernels then match the model bit for bit wherever these functions do.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/emu/emu_arith.cuh"
#include "oracle/block/block_format.hpp"

namespace fpcert::blockq {

/// An element (or scale) format for the rounding below: sign-magnitude codes (MXINT8: int8_elem's view;
/// its bytes are converted to two's complement by the caller).
struct Elem {
  int frac_bits = 0;
  int bias = 0;
  std::uint32_t max_code = 0;  ///< magnitude code of the largest finite value
  std::uint32_t sign_bit = 0;  ///< 1 << (exp_bits + frac_bits)
  int emax = 0;                ///< exponent of the largest binade
  std::uint32_t max_frac23 = 0;  ///< (M - 1) * 2^23 for the largest value M * 2^emax, M in [1, 2) (the rceil compare)
  bool int8 = false;           ///< write two's complement bytes (MXINT8)
};

enum class Mode : std::uint8_t { NearestEven, TowardZero, Up };
enum class Rule : std::uint8_t { Floor, Ceil, Even, RCeil };

/// Leading-zero count of a 64-bit value (v != 0).
FPCERT_HD int clz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

/// Round the magnitude sig * 2^(E - 63) (bit 63 of sig set; sticky: more nonzero bits below) into e with
/// the given direction (on the magnitude: Up rounds away from zero, as the scales and positive quotients
/// need), saturating to the largest finite value. Returns the magnitude code; *sat is set when the rounded
/// value exceeded the largest. The same integer procedure as oracle/round.hpp's round_normalized.
FPCERT_HD std::uint32_t round_mag(const Elem& e, std::uint64_t sig, int E, bool sticky, Mode mode, bool* sat) {
  const int emin = 1 - e.bias;
  const int kept = E >= emin ? e.frac_bits + 1 : e.frac_bits + 1 - (emin - E);
  std::uint64_t r, rem;
  bool rest = sticky;
  if (kept >= 1) {
    r = sig >> (64 - kept);
    rem = sig << kept;
  } else if (kept == 0) {
    r = 0;
    rem = sig;
  } else {
    r = 0;
    const int s = -kept;
    rem = s >= 64 ? 0 : sig >> s;
    rest = rest || (s >= 64 ? sig != 0 : (sig << (64 - s)) != 0);
  }
  const std::uint64_t half = std::uint64_t{1} << 63;
  bool up = false;
  switch (mode) {
    case Mode::NearestEven: up = rem > half || (rem == half && (rest || (r & 1))); break;
    case Mode::TowardZero: up = false; break;
    case Mode::Up: up = rem != 0 || rest; break;
  }
  r += up ? 1 : 0;
  const int Eq = E >= emin ? E : emin;
  *sat = false;
  if (Eq > e.emax + 1) {
    *sat = true;
    return e.max_code;
  }
  const std::uint64_t code = r + (static_cast<std::uint64_t>(Eq + e.bias - 1) << e.frac_bits);
  if (code > e.max_code) {
    *sat = true;
    return e.max_code;
  }
  return static_cast<std::uint32_t>(code);
}

/// The sign-magnitude code with the sign applied (MXINT8: a two's complement byte).
FPCERT_HD std::uint32_t with_sign(const Elem& e, std::uint32_t mag, bool neg) {
  if (e.int8) return neg ? (256u - mag) & 0xFFu : mag;
  return mag | (neg ? e.sign_bit : 0u);
}

/// fp32 bits (finite, nonzero magnitude) as sig with bit 63 set and the exponent of that bit.
FPCERT_HD void f32_sig(std::uint32_t bits, std::uint64_t* sig, int* E) {
  const std::uint32_t mag = bits & 0x7FFFFFFFu;
  const int be = static_cast<int>(mag >> 23);
  if (be != 0) {
    *sig = (static_cast<std::uint64_t>((mag & 0x7FFFFFu) | 0x800000u)) << 40;
    *E = be - 127;
  } else {
    const int lz = clz64(static_cast<std::uint64_t>(mag));
    *sig = static_cast<std::uint64_t>(mag) << lz;
    *E = (63 - lz) - 149;
  }
}

/// The E8M0 scale exponent a rule gives for amax's fp32 bits (finite, nonzero), unclamped: with amax =
/// m 2^a, m in [1, 2) — floor: a - emax; ceil: + (m > 1); even: + (m >= 2 - 2^-p), p = frac_bits + 1;
/// rceil: + (m > M) (docs/block_formats.md).
FPCERT_HD int scale_exponent(const Elem& e, Rule rule, std::uint32_t amax_bits) {
  std::uint64_t sig;
  int a;
  f32_sig(amax_bits, &sig, &a);
  const std::uint32_t frac = static_cast<std::uint32_t>(sig >> 40) & 0x7FFFFFu;  // (m - 1) * 2^23
  int bump = 0;
  switch (rule) {
    case Rule::Floor: bump = 0; break;
    case Rule::Ceil: bump = frac != 0 ? 1 : 0; break;
    case Rule::Even: bump = frac >= 0x800000u - (0x800000u >> (e.frac_bits + 1)) ? 1 : 0; break;
    case Rule::RCeil: bump = frac > e.max_frac23 ? 1 : 0; break;
  }
  return a + bump - e.emax;
}

/// The E8M0 scale code: amax = 0 gives 0 (2^-127), exponents below -127 clamp to it, above 127 give the
/// NaN code 0xFF, as a NaN or Inf in the block does (nonfinite).
FPCERT_HD std::uint32_t e8m0_code(const Elem& e, Rule rule, std::uint32_t amax_bits, bool nonfinite) {
  if (nonfinite) return 0xFFu;
  if ((amax_bits & 0x7FFFFFFFu) == 0) return 0;
  const int x = scale_exponent(e, rule, amax_bits);
  if (x < -127) return 0;
  if (x > 127) return 0xFFu;
  return static_cast<std::uint32_t>(x + 127);
}

/// An element under an E8M0 scale 2^k (k = code - 127): x / 2^k rounded nearest-even into e, saturating.
/// x is finite fp32.
FPCERT_HD std::uint32_t quantize_pow2(const Elem& e, std::uint32_t x_bits, int k, bool* sat) {
  const bool neg = (x_bits >> 31) != 0;
  *sat = false;
  if ((x_bits & 0x7FFFFFFFu) == 0) return e.int8 ? 0u : with_sign(e, 0, neg);
  std::uint64_t sig;
  int E;
  f32_sig(x_bits, &sig, &E);
  const std::uint32_t mag = round_mag(e, sig, E - k, false, Mode::NearestEven, sat);
  return with_sign(e, mag, neg);
}

/// Round the exact quotient x / d (x, d finite fp64, d > 0) into e with `mode` on the magnitude: q = RN(mx / md)
/// of the mantissas in [1/2, 1) and the exact remainder mx - q md (an fma) decide the direction, so there is
/// one rounding (oracle/block/block_format.cpp, round_quotient, gives the proof).
FPCERT_HD std::uint32_t round_quotient(const Elem& e, double x, double d, Mode mode, bool* sat) {
  *sat = false;
  // Mantissas and exponents from the bits (x, d normal doubles here: fp32 inputs and scales); the sign
  // from the bits too, so -0 keeps its sign (x < 0 is false for -0).
  std::uint64_t xb, db;
  std::memcpy(&xb, &x, 8);
  std::memcpy(&db, &d, 8);
  const bool neg = (xb >> 63) != 0;
  if (x == 0) return e.int8 ? 0u : with_sign(e, 0, neg);
  const int ex = static_cast<int>((xb >> 52) & 0x7FF) - 1022, ed = static_cast<int>((db >> 52) & 0x7FF) - 1022;
  const std::uint64_t mxb = (xb & 0x000FFFFFFFFFFFFFULL) | (std::uint64_t{1022} << 52), mdb = (db & 0x000FFFFFFFFFFFFFULL) | (std::uint64_t{1022} << 52);
  double mx, md;
  std::memcpy(&mx, &mxb, 8);
  std::memcpy(&md, &mdb, 8);
#if defined(__CUDA_ARCH__)
  const double q = __ddiv_rn(mx, md);
  const double rem = __fma_rn(-q, md, mx);
#else
  const double q = mx / md;
  const double rem = __builtin_fma(-q, md, mx);
#endif
  std::uint64_t qb;
  std::memcpy(&qb, &q, 8);
  std::uint64_t sig = ((qb & 0x000FFFFFFFFFFFFFULL) | (std::uint64_t{1} << 52)) << 11;
  int E = static_cast<int>((qb >> 52) & 0x7FF) - 1023 + ex - ed;
  bool sticky = false;
  if (rem > 0) {
    sticky = true;
  } else if (rem < 0) {
    sig -= 1;
    sticky = true;
    if ((sig >> 63) == 0) {
      sig <<= 1;
      E -= 1;
    }
  }
  return with_sign(e, round_mag(e, sig, E, sticky, mode, sat), neg);
}

// ---- host: descriptors to parameters ----

/// The rounding parameters of a format (derived from the descriptor, never typed).
inline Elem elem_of(const Format& f, bool int8 = false) {
  Elem e;
  e.frac_bits = f.frac_bits;
  e.bias = f.bias;
  e.max_code = static_cast<std::uint32_t>(f.max_finite_code());
  e.sign_bit = static_cast<std::uint32_t>(f.sign_mask());
  e.emax = f.emax();
  // max_finite = M 2^emax with M in [1, 2): (M - 1) 2^23 is an integer (M has at most 8 bits).
  double M = f.max_finite();
  for (int i = 0; i < e.emax; ++i) M /= 2;
  for (int i = 0; i > e.emax; --i) M *= 2;
  e.max_frac23 = static_cast<std::uint32_t>((M - 1.0) * 8388608.0);
  e.int8 = int8;
  return e;
}
inline Elem elem_of(const BlockFormat& b) { return elem_of(*b.element, b.int_elements); }
inline Rule rule_of(ScaleRule r) {
  switch (r) {
    case ScaleRule::Floor: return Rule::Floor;
    case ScaleRule::Ceil: return Rule::Ceil;
    case ScaleRule::Even: return Rule::Even;
    case ScaleRule::RCeil: return Rule::RCeil;
  }
  return Rule::Floor;
}
/// NVFP4: the direction a rule rounds amax / (6 s_t) into the e4m3 scale.
inline Mode nvfp4_scale_mode(ScaleRule r) {
  return r == ScaleRule::Floor ? Mode::TowardZero : r == ScaleRule::Even ? Mode::NearestEven : Mode::Up;
}

/// e4m3 code (sign ignored) -> its value as fp32 (exact); 0x7F: NaN.
FPCERT_HD float e4m3_value(std::uint32_t code) {
  const std::uint32_t c = code & 0x7Fu;
  if (c == 0x7Fu) return emu::bits_f32(0x7FC00000u);
  const std::uint32_t ex = c >> 3, man = c & 7u;
  // subnormal: man * 2^-9; normal: (8 + man) * 2^(ex - 10): both exact fp32 products of small integers and powers of 2.
  return ex == 0 ? static_cast<float>(man) * emu::pow2f(-9) : static_cast<float>(8u + man) * emu::pow2f(static_cast<int>(ex) - 10);
}

/// NVFP4's block scale code: amax / (6 s_t) rounded by mode into e4m3, clamped to [2^-9, 448]; 0x7F for a
/// block with a NaN or Inf.
FPCERT_HD std::uint32_t nvfp4_scale_code(const Elem& e4m3e, Mode mode, std::uint32_t amax_bits, bool nonfinite, double six_ts) {
  if (nonfinite) return 0x7Fu;
  if ((amax_bits & 0x7FFFFFFFu) == 0) return 0x01u;
  bool sat = false;
  const std::uint32_t c = round_quotient(e4m3e, static_cast<double>(emu::bits_f32(amax_bits & 0x7FFFFFFFu)), six_ts, mode, &sat);
  return c == 0 ? 0x01u : c;
}

}  // namespace fpcert::blockq
