// oracle/round.cpp — special values, saturation, ue8m0 and the out-of-line parts of rounding.
#include "oracle/round.hpp"

#include <array>
#include <cctype>

namespace fpcert {

std::string_view to_string(Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return "rn";
    case Rounding::NearestAway: return "rna";
    case Rounding::TowardZero: return "rz";
    case Rounding::Up: return "ru";
    case Rounding::Down: return "rd";
    case Rounding::Stochastic: return "rs";
  }
  return "?";
}

std::string_view to_string(Saturation s) {
  switch (s) {
    case Saturation::Inf: return "inf";
    case Saturation::Finite: return "satfinite";
    case Saturation::NaN: return "nan";
  }
  return "?";
}

std::string_view to_string(NanPayload n) {
  switch (n) {
    case NanPayload::Preserve: return "preserve";
    case NanPayload::Canonical: return "canonical";
    case NanPayload::Nvidia: return "nvidia";
    case NanPayload::Any: return "any";
    case NanPayload::MlDtypes: return "ml_dtypes";
  }
  return "?";
}

namespace {
std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

std::optional<Rounding> parse_rounding(std::string_view s) {
  const std::string n = lower(s);
  if (n == "rn" || n == "rne" || n == "nearest" || n == "nearest-even" || n == "nearesteven") return Rounding::NearestEven;
  if (n == "rna" || n == "nearest-away" || n == "nearestaway") return Rounding::NearestAway;
  if (n == "rz" || n == "toward-zero" || n == "towardzero" || n == "trunc") return Rounding::TowardZero;
  if (n == "ru" || n == "rp" || n == "up") return Rounding::Up;
  if (n == "rd" || n == "rm" || n == "down") return Rounding::Down;
  if (n == "rs" || n == "sr" || n == "stochastic") return Rounding::Stochastic;
  return std::nullopt;
}

std::optional<Saturation> parse_saturation(std::string_view s) {
  const std::string n = lower(s);
  if (n == "inf" || n == "none" || n == "nosat") return Saturation::Inf;
  if (n == "finite" || n == "satfinite" || n == "sat") return Saturation::Finite;
  if (n == "nan") return Saturation::NaN;
  return std::nullopt;
}

std::optional<NanPayload> parse_nan_payload(std::string_view s) {
  const std::string n = lower(s);
  if (n == "preserve") return NanPayload::Preserve;
  if (n == "canonical" || n == "ieee") return NanPayload::Canonical;
  if (n == "nvidia" || n == "cuda" || n == "all_ones" || n == "all-ones") return NanPayload::Nvidia;
  if (n == "any") return NanPayload::Any;
  if (n == "ml_dtypes" || n == "ml-dtypes" || n == "mldtypes") return NanPayload::MlDtypes;
  return std::nullopt;
}

std::string nan_payload_names() {
  return "preserve (sign and payload kept, quiet), canonical (IEEE: positive, quiet bit only), nvidia (positive, all ones; "
         "finite-only: +largest), any (any NaN), ml_dtypes (finite-only destinations: +NaN -> -0, -NaN -> +0)";
}

std::string nan_payload_problem(const Format& f, NanPayload n) {
  if (n == NanPayload::Any && !f.has_nan())
    return std::string(f.tag) + " has no NaN, so 'any NaN' would accept nothing: declare nvidia (+largest finite, CUDA's "
           "cvt.satfinite) or ml_dtypes";
  if (n == NanPayload::MlDtypes && f.specials != Specials::FiniteOnly)
    return "ml_dtypes is the convention of finite-only destinations (e2m3, e3m2, e2m1); " + std::string(f.tag) +
           " has a NaN code: declare preserve, canonical, nvidia or any";
  return {};
}

std::uint64_t nan_input_code(const Format& d, bool neg, std::uint64_t payload_top, NanPayload n) {
  const std::uint64_t sign = neg ? d.sign_mask() : 0;
  switch (d.specials) {
    case Specials::IEEE:
      switch (n) {
        case NanPayload::Preserve: {
          const std::uint64_t quiet = std::uint64_t{1} << (d.frac_bits - 1);
          return sign | d.inf_code() | (payload_top >> (64 - d.frac_bits)) | quiet;
        }
        case NanPayload::Nvidia: return d.magnitude_mask();
        default: return d.canonical_nan_code();  // Canonical; Any (some NaN); MlDtypes is refused for IEEE destinations
      }
    case Specials::FiniteNaN:  // one NaN magnitude, S.1..1.1..1: only its sign is a choice
      return (n == NanPayload::Preserve ? sign : 0) | d.canonical_nan_code();
    case Specials::FiniteOnly:  // no NaN: a number stands for it
      if (n == NanPayload::MlDtypes) return d.sign_mask() ^ sign;  // ml_dtypes: -quiet_NaN() flips quiet_NaN() = -0
      return d.max_finite_code();  // +largest: PTX cvt .satfinite, cuda_fp6.hpp/cuda_fp4.hpp ("positive MAXNORM")
    case Specials::ScaleOnly: return d.canonical_nan_code();  // 0xFF, the only NaN
  }
  return 0;
}

std::string describe_nan_convention(const Format& d, NanPayload n) {
  if (n == NanPayload::Any) return "any NaN of " + std::string(d.tag);
  const std::uint64_t pos0 = nan_input_code(d, false, 0, n), pos1 = nan_input_code(d, false, ~std::uint64_t{0}, n);
  const std::uint64_t neg0 = nan_input_code(d, true, 0, n);
  if (pos0 != pos1) return "sign and the payload's top bits kept, quiet bit set";
  if (pos0 == neg0) return "every NaN input -> " + hex_code(d, pos0);
  return "+NaN -> " + hex_code(d, pos0) + ", -NaN -> " + hex_code(d, neg0);
}

bool nan_result_accepted(const Format& d, NanPayload n, std::uint64_t expected, std::uint64_t got) {
  return got == expected || (n == NanPayload::Any && classify(d, got) == FpClass::NaN);
}

std::string rounding_names() { return "rn (nearest-even), rna (nearest-away), rz, ru, rd, rs (stochastic)"; }
std::string saturation_names() { return "inf (IEEE overflow), satfinite (largest finite), nan (fn formats)"; }

Saturation default_saturation(const Format& f) {
  if (f.has_inf()) return Saturation::Inf;
  if (f.has_nan()) return Saturation::NaN;
  return Saturation::Finite;
}

bool saturation_valid(const Format& f, Saturation s) {
  switch (s) {
    case Saturation::Inf: return f.has_inf();
    case Saturation::Finite: return true;
    case Saturation::NaN: return f.has_nan() && !f.has_inf();
  }
  return false;
}

std::string_view to_string(Outcome o) {
  static constexpr std::array<std::string_view, kOutcomeCount> kNames = {
      "nan",           "inf",          "zero",      "exact_normal", "exact_subnormal", "rounded_normal",
      "rounded_subnormal", "overflow_inf", "saturated", "overflow_nan", "underflow_zero"};
  return kNames[static_cast<int>(o)];
}

Outcome classify_outcome(const Format& src, std::uint64_t src_code, const Format& dst, const Rounded& r) {
  const FpClass sc = classify(src, src_code);
  const FpClass dc = classify(dst, r.code);
  if (sc == FpClass::NaN) return Outcome::NaN;
  if (sc == FpClass::Inf) return dc == FpClass::Inf ? Outcome::Inf : dc == FpClass::NaN ? Outcome::OverflowNaN : Outcome::Saturated;
  if (sc == FpClass::Zero) return dc == FpClass::Zero ? Outcome::Zero : Outcome::RoundedNormal;
  if (r.flags & kOverflow) return dc == FpClass::Inf ? Outcome::OverflowInf : dc == FpClass::NaN ? Outcome::OverflowNaN : Outcome::Saturated;
  if (dc == FpClass::Zero) return Outcome::UnderflowZero;
  const bool exact = (r.flags & kInexact) == 0;
  if (dc == FpClass::Subnormal) return exact ? Outcome::ExactSubnormal : Outcome::RoundedSubnormal;
  return exact ? Outcome::ExactNormal : Outcome::RoundedNormal;
}

namespace detail {

Rounded overflow_result(const Format& d, bool neg, const Rounder& r) {
  const std::uint64_t sign = neg ? d.sign_mask() : 0;
  // IEEE 754: a directed rounding toward zero never overflows to Inf; it stops at the largest finite.
  const bool toward_zero = r.rounding == Rounding::TowardZero || (r.rounding == Rounding::Up && neg) ||
                           (r.rounding == Rounding::Down && !neg);
  if (d.specials == Specials::ScaleOnly)
    return {r.saturation == Saturation::Finite ? d.max_finite_code() : d.canonical_nan_code(), 0};
  if (r.saturation == Saturation::Finite || toward_zero || d.specials == Specials::FiniteOnly)
    return {sign | d.max_finite_code(), 0};
  if (r.saturation == Saturation::Inf && d.has_inf()) return {sign | d.inf_code(), 0};
  return {sign | d.canonical_nan_code(), 0};  // NaN saturation (fn formats)
}

Rounded round_special(const Format& d, FpClass cls, bool neg, std::uint64_t payload_top, const Rounder& r) {
  const std::uint64_t sign = neg ? d.sign_mask() : 0;
  switch (cls) {
    case FpClass::Zero:
      if (d.specials == Specials::ScaleOnly) return {0, kInexact | kUnderflow};  // no zero: 2^-127
      return {sign, 0};
    case FpClass::Inf:
      if (d.specials == Specials::ScaleOnly)
        return {r.saturation == Saturation::Finite ? d.max_finite_code() : d.canonical_nan_code(), 0};
      if (r.saturation == Saturation::Finite || d.specials == Specials::FiniteOnly) return {sign | d.max_finite_code(), 0};
      if (r.saturation == Saturation::Inf && d.has_inf()) return {sign | d.inf_code(), 0};
      return {sign | d.canonical_nan_code(), 0};
    case FpClass::NaN: return {nan_input_code(d, neg, payload_top, r.nan), 0};
    default: break;
  }
  return {0, 0};
}

Rounded round_scale_only(bool /*neg: ue8m0 rounds |x|*/, std::uint64_t sig, int E, bool sticky, const Rounder& r,
                         std::uint32_t rbits) {
  // |x| = sig * 2^(E-63) in [2^E, 2^(E+1)); candidates 2^E and 2^(E+1). Directions act on |x|.
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  const std::uint64_t frac = sig << 1;  // (|x| / 2^E - 1), left-aligned
  const bool exact = frac == 0 && !sticky;
  bool up = false;
  switch (r.rounding) {
    case Rounding::NearestEven: up = frac > kHalf || (frac == kHalf && (sticky || ((E + 127) & 1))); break;
    case Rounding::NearestAway: up = frac >= kHalf; break;
    case Rounding::TowardZero:
    case Rounding::Down: up = false; break;
    case Rounding::Up: up = !exact; break;
    case Rounding::Stochastic: up = ((frac >> 32) + rbits) >> 32; break;
  }
  const int e = E + (up ? 1 : 0);
  std::uint8_t flags = exact ? 0 : kInexact;
  if (E < -127) return {0, static_cast<std::uint8_t>(kInexact | kUnderflow)};  // below 2^-127; no zero: 2^-127
  if (e > 127)
    return {r.saturation == Saturation::Finite ? 0xFEu : 0xFFu, static_cast<std::uint8_t>(kInexact | kOverflow)};
  return {static_cast<std::uint64_t>(e + 127), flags};
}

}  // namespace detail

Rounded round_exact(const Format& d, const Exact& x, const Rounder& r, std::uint32_t rbits) {
  if (x.cls != FpClass::Normal && x.cls != FpClass::Subnormal) {
    if (x.cls == FpClass::Zero && x.sticky) {
      // Zero with sticky is not a representable Exact; treat as an invalid input.
      return detail::round_special(d, FpClass::NaN, x.neg, 0, r);
    }
    return detail::round_special(d, x.cls, x.neg, x.sig, r);
  }
  if (x.sig == 0) return detail::round_special(d, FpClass::Zero, x.neg, 0, r);
  const int lz = std::countl_zero(x.sig);
  return detail::round_normalized(d, x.neg, x.sig << lz, x.exp + 63 - lz, x.sticky, r, rbits);
}

Exact exact_from_double(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x);
  Exact e;
  e.neg = (u >> 63) != 0;
  const std::uint64_t ax = u & 0x7FFFFFFFFFFFFFFFULL;
  const int be = static_cast<int>(ax >> 52);
  const std::uint64_t m = ax & 0x000FFFFFFFFFFFFFULL;
  if (be == 0x7FF) {
    e.cls = m ? FpClass::NaN : FpClass::Inf;
    e.sig = m << 12;
  } else if (ax == 0) {
    e.cls = FpClass::Zero;
  } else {
    e.cls = FpClass::Normal;
    e.sig = be ? (m | (std::uint64_t{1} << 52)) : m;
    e.exp = (be ? be : 1) - 1075;
  }
  return e;
}

Exact exact_from_code(const Format& f, std::uint64_t code) { return exact_from_double(to_double(f, code)); }

Rounded convert(const Format& src, std::uint64_t code, const Format& dst, const Rounder& r, std::uint32_t rbits) {
  return round_double(dst, to_double(src, code), r, rbits);
}

}  // namespace fpcert
