// kernels/emu/split.cpp — the split schemes' table and their scalar arithmetic.
#include "kernels/emu/split.hpp"

#include <cmath>

namespace fpcert {

const std::vector<SplitScheme>& split_schemes() {
  using P = std::vector<std::pair<int, int>>;
  static const std::vector<SplitScheme> s = {
      // a = big + small + r with |r| <= 2^-22 |a| (rn splits; 2^-21 rz); the dropped small*small and
      // the residuals leave an operand error of about 2^-21 (rn) / 2^-20 (rz).
      {"3xtf32", &tf32, Rounding::NearestEven, 2, P{{1, 0}, {0, 1}, {0, 0}}, std::ldexp(1.0, -21), "2^-21: two tf32 slices, rn"},
      {"3xtf32_rz", &tf32, Rounding::TowardZero, 2, P{{1, 0}, {0, 1}, {0, 0}}, std::ldexp(1.0, -20), "2^-20: two tf32 slices, rz"},
      {"1xbf16", &bf16, Rounding::NearestEven, 1, P{{0, 0}}, std::ldexp(1.0, -8), "2^-8: one bf16 slice"},
      {"3xbf16", &bf16, Rounding::NearestEven, 2, P{{1, 0}, {0, 1}, {0, 0}}, std::ldexp(1.0, -14),
       "2^-14: three dropped terms of order 2^-16"},
      {"6xbf16", &bf16, Rounding::NearestEven, 3, P{{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}}, std::ldexp(1.0, -23),
       "2^-23: three bf16 slices, terms of order 2^-24 dropped"},
      {"9xbf16", &bf16, Rounding::NearestEven, 3, P{{2, 2}, {2, 1}, {1, 2}, {2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}},
       std::ldexp(1.0, -24), "2^-24: three bf16 slices hold a normal fp32 exactly; slack for slices lost to underflow"},
  };
  return s;
}

const SplitScheme* find_split_scheme(const std::string& name) {
  for (const auto& s : split_schemes())
    if (s.name == name) return &s;
  return nullptr;
}

void split_value(const SplitScheme& s, float x, float* out) {
  // A finite value saturates to the slice format's largest value instead of overflowing to Inf (the
  // overflow guard of kernels/emu/split.hpp); Inf and NaN stay what they are.
  // and once it has, the last slice is truncated (the slices then never sum past |x|).
  const Rounder r{s.rounding, default_saturation(*s.slice), NanPayload::Preserve};
  const Rounder sat{s.rounding, Saturation::Finite, NanPayload::Preserve};
  const Rounder rz{Rounding::TowardZero, Saturation::Finite, NanPayload::Preserve};
  float rest = x;
  bool saturated = false;
  for (int l = 0; l < s.slices; ++l) {
    const Rounder& use = !std::isfinite(rest) ? r : saturated && l == s.slices - 1 ? rz : sat;
    const Rounded rd = round_double(*s.slice, rest, use);
    saturated = saturated || (rd.flags & kOverflow) != 0;
    const float q = static_cast<float>(to_double(*s.slice, rd.code));
    out[l] = q;
    rest = rest - q;  // exact in fp32
  }
}

float split_product(const SplitScheme& s, float a, float b) {
  float as[3], bs[3];
  split_value(s, a, as);
  split_value(s, b, bs);
  float c = 0.0f;
  bool first = true;
  for (const auto& [i, j] : s.terms) {
    const float p = std::fma(as[i], bs[j], 0.0f);  // exact slice product (one rounding, exact unless it underflows)
    c = first ? p : c + p;
    first = false;
  }
  return c;
}

}  // namespace fpcert
