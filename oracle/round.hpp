// oracle/round.hpp — correct rounding of exact values into any format (the fast path).
//
// One core, round_normalized(), rounds a finite nonzero magnitude given as a normalized
// 64-bit significand, its exponent and a sticky bit. Everything else (from a double, from
// the code of another format, from a double-double with a tail) builds that triple exactly
// and calls it, so there is no double rounding anywhere. MPFR is the independent check
// (oracle/mpfr_ref.hpp); docs/formats.md states the semantics below in prose.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oracle/format.hpp"

namespace fpcert {

enum class Rounding : std::uint8_t { NearestEven, NearestAway, TowardZero, Up, Down, Stochastic };
/// What an overflow (and an Inf input) becomes: Inf (IEEE), the largest finite value (CUDA
/// __NV_SATFINITE), or NaN (finite-with-NaN formats without saturation, CUDA __NV_NOSAT).
enum class Saturation : std::uint8_t { Inf, Finite, NaN };
/// What a NaN input becomes: the NaN conventions a conversion may declare (docs/formats.md, "NaN
/// conventions"). nan_input_code() is the one place that computes the expected code of each, from the
/// destination's descriptor; a check accepts exactly that code (Any: any NaN of the destination).
enum class NanPayload : std::uint8_t {
  Preserve,   ///< IEEE: sign kept, payload's top bits kept, quiet bit set; fn: sign kept; ue8m0: 0xFF
  Canonical,  ///< the IEEE canonical quiet NaN: positive, quiet bit only (f16 0x7E00, f32 0x7FC00000); fn: +NaN
  Nvidia,     ///< NVIDIA's NaN: positive, every exponent and fraction bit set (f16/bf16 0x7FFF, f32 0x7FFFFFFF,
              ///< e4m3/e5m2 0x7F): magnitude_mask(); finite-only: +largest finite (PTX cvt .satfinite), the same code
  Any,        ///< any NaN of the destination (only NaN-ness checked); needs a destination with NaN
  MlDtypes,   ///< finite-only destinations only, as ml_dtypes writes it: +NaN -> -0 (the sign bit alone), -NaN -> +0
};
inline constexpr NanPayload kAllNanPayloads[] = {NanPayload::Preserve, NanPayload::Canonical, NanPayload::Nvidia, NanPayload::Any,
                                                 NanPayload::MlDtypes};

inline constexpr Rounding kAllRoundings[] = {Rounding::NearestEven, Rounding::NearestAway,
                                             Rounding::TowardZero,  Rounding::Up,
                                             Rounding::Down,        Rounding::Stochastic};
inline constexpr Saturation kAllSaturations[] = {Saturation::Inf, Saturation::Finite, Saturation::NaN};

std::string_view to_string(Rounding r);
std::string_view to_string(Saturation s);
std::string_view to_string(NanPayload n);
std::optional<Rounding> parse_rounding(std::string_view s);     ///< rn|rne|nearest-even, rna, rz, ru, rd, rs|stochastic
std::optional<Saturation> parse_saturation(std::string_view s);  ///< inf|none|nosat, finite|satfinite, nan
std::optional<NanPayload> parse_nan_payload(std::string_view s);  ///< preserve, canonical, nvidia|cuda, any, ml_dtypes
std::string rounding_names();
std::string saturation_names();
std::string nan_payload_names();

/// Whether a NaN convention can be declared for destination f: Any needs a NaN in f, MlDtypes a
/// finite-only f; the others fit every format. The empty string when it can, else why not.
std::string nan_payload_problem(const Format& f, NanPayload n);
/// The code a NaN input (sign `neg`, payload top-aligned in 64 bits, bit 63 the quiet bit) becomes in
/// d under convention n: the one place that defines every convention (Any: the canonical code stands
/// for "some NaN"; finite-only destinations under Preserve, Canonical or Any: +largest finite, fpcert's
/// meaning before the conventions were declarable).
std::uint64_t nan_input_code(const Format& d, bool neg, std::uint64_t payload_top, NanPayload n);
/// What n writes into d, in words with the codes: "every NaN input -> 0x7fff", "+NaN -> 0x20, -NaN ->
/// 0x00", "sign and the payload's top bits kept, quiet bit set", "any NaN".
std::string describe_nan_convention(const Format& d, NanPayload n);
/// Whether `got` satisfies convention n for a NaN input whose expected code (nan_input_code) is
/// `expected`: the same code, or under Any any NaN of d.
bool nan_result_accepted(const Format& d, NanPayload n, std::uint64_t expected, std::uint64_t got);

/// Inf where the format has Inf, else NaN where it has NaN, else Finite.
Saturation default_saturation(const Format& f);
/// Whether a saturation mode makes sense for a format (Inf needs Inf; NaN needs a NaN code and
/// no Inf; finite-only formats saturate).
bool saturation_valid(const Format& f, Saturation s);

struct Rounder {
  Rounding rounding = Rounding::NearestEven;
  Saturation saturation = Saturation::Inf;
  NanPayload nan = NanPayload::Preserve;
  /// Round-to-nearest-even into f with f's default saturation.
  static Rounder nearest(const Format& f) { return {Rounding::NearestEven, default_saturation(f), NanPayload::Preserve}; }
};

enum RoundFlag : std::uint8_t {
  kInexact = 1,
  kOverflow = 2,   ///< the rounded magnitude exceeded the largest finite value
  kUnderflow = 4,  ///< tiny (|x| < 2^emin, before rounding) and inexact
};

struct Rounded {
  std::uint64_t code = 0;
  std::uint8_t flags = 0;
  friend bool operator==(const Rounded&, const Rounded&) = default;
};

/// Outcome classes of a conversion (fpcert convert --exhaustive counts them).
enum class Outcome : std::uint8_t {
  NaN,               ///< NaN in (or a NaN made from an Inf: see OverflowNaN)
  Inf,               ///< Inf in, Inf out
  Zero,              ///< zero in, zero out
  ExactNormal,       ///< finite in, same value out, normal in the destination
  ExactSubnormal,    ///< same, subnormal in the destination
  RoundedNormal,     ///< inexact, normal result
  RoundedSubnormal,  ///< inexact, subnormal result
  OverflowInf,       ///< overflow to Inf
  Saturated,         ///< overflow (or Inf in) clamped to the largest finite value
  OverflowNaN,       ///< overflow (or Inf in) to NaN: fn formats without saturation, ue8m0
  UnderflowZero,     ///< nonzero in, zero out
};
inline constexpr int kOutcomeCount = 11;
std::string_view to_string(Outcome o);
Outcome classify_outcome(const Format& src, std::uint64_t src_code, const Format& dst, const Rounded& r);

/// An exact value: (-1)^neg * (sig + f) * 2^exp with 0 <= f < 1 and sticky == (f != 0).
/// cls Inf/NaN: sig holds a NaN payload top-aligned in 64 bits (bit 63 = the quiet bit).
struct Exact {
  FpClass cls = FpClass::Zero;  ///< Zero, Normal (any finite nonzero), Inf, NaN
  bool neg = false;
  std::uint64_t sig = 0;
  int exp = 0;
  bool sticky = false;
};

namespace detail {

Rounded round_special(const Format& d, FpClass cls, bool neg, std::uint64_t payload_top, const Rounder& r);
Rounded round_scale_only(bool neg, std::uint64_t sig, int E, bool sticky, const Rounder& r, std::uint32_t rbits);
Rounded overflow_result(const Format& d, bool neg, const Rounder& r);

/// Round the finite nonzero magnitude sig * 2^(E - 63) (+ sticky below), bit 63 of sig set,
/// into d. E is the exponent of the leading bit.
inline Rounded round_normalized(const Format& d, bool neg, std::uint64_t sig, int E, bool sticky,
                                const Rounder& rr, std::uint32_t rbits) {
  if (d.specials == Specials::ScaleOnly) return round_scale_only(neg, sig, E, sticky, rr, rbits);
  const std::uint64_t sign = neg ? d.sign_mask() : 0;
  const int emin = d.emin();
  const int kept = E >= emin ? d.frac_bits + 1 : d.frac_bits + 1 - (emin - E);  // bits of sig kept
  std::uint64_t r, rem;  // kept bits; discarded bits left-aligned
  bool rest = sticky;    // anything below rem
  if (kept >= 1) {
    r = sig >> (64 - kept);
    rem = sig << kept;  // kept <= 53: shift is in range
  } else if (kept == 0) {
    r = 0;
    rem = sig;
  } else {
    r = 0;
    const int s = -kept;
    rem = s >= 64 ? 0 : sig >> s;
    rest = rest || (s >= 64 ? sig != 0 : (sig << (64 - s)) != 0);
  }
  const bool inexact = rem != 0 || rest;
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  bool up = false;
  switch (rr.rounding) {
    case Rounding::NearestEven: up = rem > kHalf || (rem == kHalf && (rest || (r & 1))); break;
    case Rounding::NearestAway: up = rem >= kHalf; break;
    case Rounding::TowardZero: up = false; break;
    case Rounding::Up: up = !neg && inexact; break;
    case Rounding::Down: up = neg && inexact; break;
    case Rounding::Stochastic: up = ((rem >> 32) + rbits) >> 32; break;  // D + R >= 2^32
  }
  r += up;
  const int Eq = E >= emin ? E : emin;
  std::uint8_t flags = inexact ? kInexact : 0;
  if (E < emin && inexact) flags |= kUnderflow;
  constexpr std::uint8_t kOver = kOverflow | kInexact;  // an overflow is always inexact (IEEE 754 7.4)
  if (Eq > d.emax() + 1) return {overflow_result(d, neg, rr).code, static_cast<std::uint8_t>(flags | kOver)};
  // Normal: (Eq + bias) << frac plus the fraction; r may carry into the next binade. Subnormal
  // (Eq == emin, r < 2^frac): emin + bias - 1 == 0 so the code is r, and r == 2^frac is the
  // smallest normal.
  const std::uint64_t code = r + (static_cast<std::uint64_t>(Eq + d.bias - 1) << d.frac_bits);
  if (code > d.max_finite_code())
    return {overflow_result(d, neg, rr).code, static_cast<std::uint8_t>(flags | kOver)};
  return {code | sign, flags};
}

}  // namespace detail

/// Correct rounding of an exact value into d.
Rounded round_exact(const Format& d, const Exact& x, const Rounder& r, std::uint32_t rbits = 0);

/// Fast path: correct rounding of a double (an exact value) into d. rbits: the 32 random bits
/// of stochastic rounding (round away from zero iff D + rbits >= 2^32, D = the first 32 bits
/// of the discarded fraction); ignored by the other modes.
inline Rounded round_double(const Format& d, double x, const Rounder& rr, std::uint32_t rbits = 0) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x);
  const bool neg = (u >> 63) != 0;
  const std::uint64_t ax = u & 0x7FFFFFFFFFFFFFFFULL;
  if (ax >= 0x7FF0000000000000ULL) {
    const bool nan = ax != 0x7FF0000000000000ULL;
    return detail::round_special(d, nan ? FpClass::NaN : FpClass::Inf, neg, ax << 12, rr);
  }
  if (ax == 0) return detail::round_special(d, FpClass::Zero, neg, 0, rr);
  const int be = static_cast<int>(ax >> 52);
  std::uint64_t sig;
  int E;
  if (be != 0) {
    sig = (ax << 11) | (std::uint64_t{1} << 63);
    E = be - 1023;
  } else {
    const int lz = std::countl_zero(ax);
    sig = ax << lz;
    E = (63 - lz) - 1074;
  }
  return detail::round_normalized(d, neg, sig, E, false, rr, rbits);
}

/// Convert the code of one format into another (exact decode, then one correct rounding).
Rounded convert(const Format& src, std::uint64_t code, const Format& dst, const Rounder& r,
                std::uint32_t rbits = 0);

/// Exact value of a double as an Exact.
Exact exact_from_double(double x);
/// Exact value of a code.
Exact exact_from_code(const Format& f, std::uint64_t code);

/// Round-to-nearest-even of a double into f, as a double (a convenience for kernel models).
inline double quantize(const Format& f, double x) {
  return to_double(f, round_double(f, x, Rounder::nearest(f)).code);
}

}  // namespace fpcert
