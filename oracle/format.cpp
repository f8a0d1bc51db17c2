// oracle/format.cpp — format registry, exact decoding and derived values.
#include "oracle/format.hpp"

#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace fpcert {

std::string_view to_string(FpClass c) {
  switch (c) {
    case FpClass::Zero: return "zero";
    case FpClass::Subnormal: return "subnormal";
    case FpClass::Normal: return "normal";
    case FpClass::Inf: return "inf";
    case FpClass::NaN: return "nan";
  }
  return "?";
}

std::string_view to_string(Specials s) {
  switch (s) {
    case Specials::IEEE: return "ieee";
    case Specials::FiniteNaN: return "finite+nan";
    case Specials::FiniteOnly: return "finite-only";
    case Specials::ScaleOnly: return "scale-only";
  }
  return "?";
}

namespace {
constexpr std::array<const Format*, 11> kFormats = {&f64, &f32, &tf32, &f16, &bf16, &e4m3,
                                                    &e5m2, &e2m3, &e3m2, &e2m1, &ue8m0};

struct Alias {
  std::string_view alias;
  const Format* fmt;
};
constexpr std::array<Alias, 15> kAliases = {{
    {"double", &f64},         {"float", &f32},          {"single", &f32},
    {"half", &f16},           {"fp8_e4m3", &e4m3},      {"fp8_e5m2", &e5m2},
    {"float8_e4m3", &e4m3},   {"e4m3fn", &e4m3},        {"fp6_e2m3", &e2m3},
    {"fp6_e3m2", &e3m2},      {"fp4_e2m1", &e2m1},      {"fp4", &e2m1},
    {"e8m0", &ue8m0},         {"fp8_e8m0", &ue8m0},     {"float8_e8m0", &ue8m0},
}};

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

std::span<const Format* const> all_formats() { return kFormats; }

const Format* find_format(std::string_view name) {
  const std::string n = lower(name);
  for (const Format* f : kFormats)
    if (n == f->tag || n == f->name) return f;
  for (const auto& a : kAliases)
    if (n == a.alias) return a.fmt;
  return nullptr;
}

std::string format_tags() {
  std::string r;
  for (const Format* f : kFormats) {
    if (!r.empty()) r += ", ";
    r += f->tag;
  }
  return r;
}

double Format::max_finite() const {
  const std::uint64_t m = max_finite_code();
  return to_double(*this, m);
}
double Format::min_normal() const { return std::ldexp(1.0, emin()); }
double Format::min_subnormal() const {
  return subnormals ? std::ldexp(1.0, emin() - frac_bits) : std::ldexp(1.0, emin());
}
double Format::unit_roundoff() const { return std::ldexp(1.0, -precision()); }
double Format::epsilon() const { return std::ldexp(1.0, -frac_bits); }

FpClass classify(const Format& f, std::uint64_t code) {
  const std::uint64_t mag = code & f.magnitude_mask();
  const std::uint64_t biased = mag >> f.frac_bits;
  const std::uint64_t frac = mag & f.frac_mask();
  switch (f.specials) {
    case Specials::IEEE:
      if (biased == static_cast<std::uint64_t>(f.max_biased_exp())) return frac ? FpClass::NaN : FpClass::Inf;
      break;
    case Specials::FiniteNaN:
      if (mag == f.magnitude_mask()) return FpClass::NaN;
      break;
    case Specials::ScaleOnly:
      return mag == f.magnitude_mask() ? FpClass::NaN : FpClass::Normal;
    case Specials::FiniteOnly: break;
  }
  if (biased == 0) return frac ? FpClass::Subnormal : FpClass::Zero;
  return FpClass::Normal;
}

Unpacked unpack(const Format& f, std::uint64_t code) {
  Unpacked u;
  u.cls = classify(f, code);
  u.neg = code_is_negative(f, code);
  const std::uint64_t mag = code & f.magnitude_mask();
  const int biased = static_cast<int>(mag >> f.frac_bits);
  const std::uint64_t frac = mag & f.frac_mask();
  switch (u.cls) {
    case FpClass::Zero: u.sig = 0; u.exp = 0; break;
    case FpClass::Subnormal: u.sig = frac; u.exp = f.emin() - f.frac_bits; break;
    case FpClass::Normal:
      // Without subnormals (ue8m0) biased exponent 0 is one more binade, decoded the same way.
      u.sig = frac | (std::uint64_t{1} << f.frac_bits);
      u.exp = biased - f.bias - f.frac_bits;
      break;
    case FpClass::Inf:
    case FpClass::NaN: u.sig = frac; u.exp = 0; break;
  }
  return u;
}

double to_double(const Format& f, std::uint64_t code) {
  if (f.total_bits() == 64) return std::bit_cast<double>(code);  // fp64 itself
  // Every other built-in value is a normal double: build its bits directly.
  const std::uint64_t sign = code_is_negative(f, code) ? std::uint64_t{1} << 63 : 0;
  const std::uint64_t mag = code & f.magnitude_mask();
  const std::uint64_t biased = mag >> f.frac_bits;
  const std::uint64_t frac = mag & f.frac_mask();
  const std::uint64_t top = static_cast<std::uint64_t>(f.max_biased_exp());
  constexpr std::uint64_t kExpInf = 0x7FF0000000000000ULL;
  switch (f.specials) {
    case Specials::IEEE:
      if (biased == top) {
        if (frac == 0) return std::bit_cast<double>(sign | kExpInf);
        // NaN: payload top-aligned into the double's fraction, quiet bit as in the source.
        return std::bit_cast<double>(sign | kExpInf | (frac << (52 - f.frac_bits)));
      }
      break;
    case Specials::FiniteNaN:
    case Specials::ScaleOnly:
      if (mag == f.magnitude_mask()) return std::bit_cast<double>(sign | kExpInf | 0x0008000000000000ULL);
      break;
    case Specials::FiniteOnly: break;
  }
  if (biased == 0 && f.subnormals) {
    if (frac == 0) return std::bit_cast<double>(sign);
    const int lz = std::countl_zero(frac);  // leading bit at 63 - lz
    const int E = f.emin() - f.frac_bits + (63 - lz);
    const std::uint64_t m = (frac << (lz - 11)) & 0x000FFFFFFFFFFFFFULL;
    return std::bit_cast<double>(sign | (static_cast<std::uint64_t>(E + 1023) << 52) | m);
  }
  const std::uint64_t e = biased - static_cast<std::uint64_t>(f.bias) + 1023;
  return std::bit_cast<double>(sign | (e << 52) | (frac << (52 - f.frac_bits)));
}

std::uint64_t to_container(const Format& f, std::uint64_t code) {
  if (f == tf32) return code << 13;
  return code;
}

std::uint64_t from_container(const Format& f, std::uint64_t bits) {
  if (f == tf32) return (bits >> 13) & f.code_mask();
  return bits & f.code_mask();
}

std::string hex_code(const Format& f, std::uint64_t code) {
  char buf[32];
  const int digits = (f.container_bits + 3) / 4;
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits,
                static_cast<unsigned long long>(to_container(f, code)));
  return buf;
}

}  // namespace fpcert
