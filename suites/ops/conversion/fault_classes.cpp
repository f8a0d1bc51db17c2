// suites/ops/conversion/fault_classes.cpp — see fault_classes.hpp.
#include "suites/ops/conversion/fault_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "base/philox.hpp"
#include "oracle/round.hpp"

namespace fpcert {

namespace {

/// The window of source exponents (biased) where a result can depend on more than the sign: [lo, hi].
struct Window {
  int lo = 1, hi = 1, max_e = 0;  ///< max_e: the source's Inf/NaN exponent
  int bias = 0;
  int tiny = 0;   ///< exponent of the destination's smallest positive value
  int shift = 0;  ///< source fraction bits below the top q + 1
  int top_bits = 0;  ///< q + 1
  /// Exponents (mid_lo, mid_hi] (biased) are the scaled copies of mid_lo: strictly inside the destination's normal range,
  /// where every deterministic rounding gives the same significand and carry at any exponent.
  int mid_lo = 0, mid_hi = -1;
};

Window window_of(const ConversionTraits& t) {
  const Format &src = *t.src, &dst = *t.dst;
  Window w;
  w.max_e = src.max_biased_exp();
  w.bias = src.bias;
  w.tiny = dst.subnormals ? dst.emin() - dst.frac_bits : dst.emin();
  w.lo = std::clamp(w.tiny - 2 + src.bias, 1, w.max_e - 1);
  w.hi = std::clamp(dst.emax() + 2 + src.bias, w.lo, w.max_e - 1);
  w.top_bits = dst.frac_bits + 1;
  w.shift = src.frac_bits - w.top_bits;
  w.mid_lo = std::max(w.lo, dst.emin() + 2 + src.bias);
  w.mid_hi = std::min(w.hi, dst.emax() - 3 + src.bias);
  return w;
}

/// One interval of biased source exponents (with the zero/subnormal and Inf/NaN exponents where asked), and whether the
/// representatives with a nonzero rest (sticky) are swept.
struct ClassSpec {
  int lo = 0, hi = -1;  ///< biased exponents in the window (empty when hi < lo)
  bool zero_exp = false, special_exp = false, sticky = true;
  std::string what;
};

ClassSpec spec_of(ConversionFault f, const ConversionTraits& t, const Window& w) {
  const Format& dst = *t.dst;
  ClassSpec s;
  s.lo = w.lo;
  s.hi = w.hi;
  s.zero_exp = s.special_exp = true;
  switch (f) {
    case ConversionFault::TowardZero: s.what = "every class (a rounding direction can change any inexact result)"; break;
    case ConversionFault::TiesAway:
      s.sticky = false;
      s.what = "every tie (every class whose bits below the round bit are zero)";
      break;
    case ConversionFault::NoSaturation:
    case ConversionFault::SaturatesNan:
    case ConversionFault::NanPayloadLost:
    case ConversionFault::NanNotQuieted:
      s.lo = std::max(w.lo, dst.emax() - 1 + w.bias);
      s.zero_exp = false;
      s.what = "the overflow boundary and beyond (|x| >= 2^(emax - 1) of the destination), Inf and every NaN class";
      break;
    case ConversionFault::FlushOutputs:
      s.hi = std::min(w.hi, dst.emin() + 1 + w.bias);
      s.special_exp = false;
      s.what = "the underflow range (|x| < 2^(emin + 2) of the destination: every result that can be subnormal), zeros and subnormals";
      break;
    case ConversionFault::ZeroSignLost:
      s.hi = std::min(w.hi, w.tiny + 1 + w.bias);
      s.special_exp = false;
      s.what = "every source that can round to zero (|x| < 4 times the destination's smallest value), zeros and subnormals";
      break;
  }
  return s;
}

ConversionClassCodes class_codes(const ConversionTraits& t, const std::vector<ClassSpec>& specs, std::uint64_t sample) {
  if (const std::string why = conversion_classes_problem(t); !why.empty()) throw std::invalid_argument("conversion classes: " + why);
  const Format& src = *t.src;
  const Window w = window_of(t);
  const int top_bits = t.dst->frac_bits + 1;
  std::vector<std::uint64_t> codes;
  for (const ClassSpec& s : specs) {
    std::vector<int> exps;
    if (s.zero_exp) exps.push_back(0);
    for (int e = s.lo; e <= s.hi; ++e)
      if (e <= w.mid_lo || e > w.mid_hi) exps.push_back(e);  // one exponent of the scaled middle
    if (s.special_exp) exps.push_back(w.max_e);
    for (int sign = 0; sign <= (src.sign_bits ? 1 : 0); ++sign) {
      const std::uint64_t sm = sign ? src.sign_mask() : 0;
      if (s.zero_exp && w.lo <= 1)  // subnormals: each leading bit, every pattern of the q + 1 bits after it, the rest 0 or 1
        for (int lead = 0; lead < src.frac_bits; ++lead) {
          const int k = std::min(lead, top_bits), cut = lead - k;
          for (std::uint64_t p = 0; p < (std::uint64_t{1} << k); ++p) {
            const std::uint64_t base = sm | (std::uint64_t{1} << lead) | (p << cut);
            codes.push_back(base);
            if (s.sticky && cut > 0) codes.push_back(base + 1);
          }
        }
      for (const int e : exps)
        for (std::uint64_t top = 0; top < (std::uint64_t{1} << top_bits); ++top) {
          const std::uint64_t base = (sign ? src.sign_mask() : 0) | (static_cast<std::uint64_t>(e) << src.frac_bits) | (top << w.shift);
          codes.push_back(base);
          if (s.sticky && w.shift > 0) codes.push_back(base + 1);
        }
    }
  }
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  ConversionClassCodes r;
  r.class_codes = codes.size();
  for (std::uint64_t i = 0; i < sample; ++i) {  // the random sample: Philox, a fixed key ("clas")
    const auto b = philox_4x32(0x636c6173, 0, i);
    codes.push_back(((static_cast<std::uint64_t>(b[1]) << 32) | b[0]) & src.code_mask());
  }
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  r.sample_codes = codes.size() - r.class_codes;
  for (const std::uint64_t c : codes) {
    if (!r.ranges.empty() && r.ranges.back().first + r.ranges.back().second == c)
      ++r.ranges.back().second;
    else
      r.ranges.push_back({c, 1});
  }
  for (const ClassSpec& s : specs) {
    r.classes += r.classes.empty() ? "" : "; ";
    const bool scaled = s.lo <= w.mid_lo && w.mid_lo < w.mid_hi && w.mid_hi <= s.hi;
    r.classes += fmt::format("{}: both signs, source exponents 2^{} ... 2^{}{}{}{}, every pattern of the top {} fraction bits, the rest {}",
                             s.what, s.lo - w.bias, s.hi - w.bias,
                             scaled ? fmt::format(" (2^{} for the scaled middle 2^{} ... 2^{})", w.mid_lo - w.bias, w.mid_lo - w.bias, w.mid_hi - w.bias) : "",
                             s.zero_exp ? ", zeros and subnormals" : "", s.special_exp ? ", Inf and NaN" : "", top_bits,
                             s.sticky && w.shift > 0 ? "zero or 1" : "zero");
  }
  return r;
}

}  // namespace

std::string conversion_classes_problem(const ConversionTraits& t) {
  const Format &src = *t.src, &dst = *t.dst;
  if (t.rounder.rounding == Rounding::Stochastic) return "stochastic rounding: a result depends on every bit of its source";
  if (!src.has_inf() || !src.subnormals || !src.sign_bits) return fmt::format("the source {} is not an IEEE format", src.tag);
  if (src.total_bits() > 32) return fmt::format("the source {} has more than 32 bits", src.tag);
  if (dst.frac_bits >= src.frac_bits) return fmt::format("{} has no fewer fraction bits than {}: no rounding bit to reason on", dst.tag, src.tag);
  return "";
}

std::uint64_t conversion_class_representative(const ConversionTraits& t, std::uint64_t code) {
  const Format& src = *t.src;
  const Window w = window_of(t);
  const std::uint64_t sign = code & src.sign_mask(), frac = code & src.frac_mask();
  int e = static_cast<int>((code >> src.frac_bits) & static_cast<std::uint64_t>(w.max_e));
  if (e == 0 && frac == 0) return code;  // a zero
  if (e == 0 && w.lo <= 1) {              // a subnormal: its leading bit, the q + 1 bits after it, the rest 0 or 1
    const int lead = 63 - std::countl_zero(frac), cut = std::max(0, lead - w.top_bits);
    const std::uint64_t rest = frac & ((std::uint64_t{1} << cut) - 1);
    return sign | ((frac >> cut) << cut) | (rest != 0 ? 1 : 0);
  }
  if ((e != 0 && e < w.lo) || (e == 0 && w.lo > 1)) e = w.lo;  // far below: converts as any tiny value of its sign
  if (e != w.max_e && e > w.hi) e = w.hi;                        // far above: overflows as any
  const std::uint64_t low = w.shift > 0 ? frac & ((std::uint64_t{1} << w.shift) - 1) : 0;
  return sign | (static_cast<std::uint64_t>(e) << src.frac_bits) | ((frac >> w.shift) << w.shift) | (low != 0 ? 1 : 0);
}

std::uint64_t conversion_class_scaled(const ConversionTraits& t, std::uint64_t code) {
  const Format& src = *t.src;
  const Window w = window_of(t);
  const int e = static_cast<int>((code >> src.frac_bits) & static_cast<std::uint64_t>(w.max_e));
  if (e <= w.mid_lo || e > w.mid_hi) return code;
  return (code & ~src.exp_field_mask()) | (static_cast<std::uint64_t>(w.mid_lo) << src.frac_bits);
}

ConversionClassCodes conversion_fault_class_codes(ConversionFault f, const ConversionTraits& t, std::uint64_t sample) {
  if (const std::string why = conversion_classes_problem(t); !why.empty()) throw std::invalid_argument("conversion classes: " + why);
  return class_codes(t, {spec_of(f, t, window_of(t))}, sample);
}

ConversionClassCodes conversion_all_class_codes(const ConversionTraits& t, std::uint64_t sample) {
  if (const std::string why = conversion_classes_problem(t); !why.empty()) throw std::invalid_argument("conversion classes: " + why);
  ConversionClassCodes r = class_codes(t, {spec_of(ConversionFault::TowardZero, t, window_of(t))}, sample);
  r.classes = "every class: " + r.classes.substr(r.classes.find(':') + 2);
  return r;
}

}  // namespace fpcert
