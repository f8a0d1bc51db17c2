// oracle/convert/convert_model.cpp — the host-side builders of the conversion model (oracle/convert/convert_model.hpp).
#include "oracle/convert/convert_model.hpp"

#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace fpcert {

bool embeds_in_f32(const Format& f) {
  if (f.total_bits() > 32 || f.precision() > 24) return false;
  // Largest binade and smallest quantum within fp32's: emax <= 127, emin - frac_bits >= -149.
  return f.emax() <= 127 && f.emin() - (f.subnormals ? f.frac_bits : 0) >= -149 && f.emin() >= -149;
}

const std::uint32_t* f32_decode_table(const Format& f) {
  if (f.total_bits() > 16 || !embeds_in_f32(f)) throw std::invalid_argument("f32_decode_table: a format of at most 16 bits inside fp32");
  // Keyed by every field that decides a value (pseudo formats share tags with nothing built in).
  using Key = std::tuple<std::string, int, int, int, int, bool, int>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<std::vector<std::uint32_t>>> tables;
  const Key key{std::string(f.tag), f.sign_bits, f.exp_bits, f.frac_bits, f.bias, f.subnormals, static_cast<int>(f.specials)};
  std::lock_guard<std::mutex> lock(mu);
  auto& t = tables[key];
  if (!t) {
    t = std::make_unique<std::vector<std::uint32_t>>(static_cast<std::size_t>(f.code_count()));
    for (std::uint64_t c = 0; c < f.code_count(); ++c) {
      // to_double is exact; every value here is an fp32 value, so its double's top bits are its fp32
      // bits (NaN payloads top-aligned in both).
      const std::uint64_t u = std::bit_cast<std::uint64_t>(to_double(f, c));
      const std::uint32_t sign = static_cast<std::uint32_t>(u >> 63) << 31;
      const std::uint64_t ax = u & 0x7FFFFFFFFFFFFFFFULL;
      std::uint32_t bits;
      if (ax >= 0x7FF0000000000000ULL) {
        bits = 0x7F800000u | static_cast<std::uint32_t>((ax & 0x000FFFFFFFFFFFFFULL) >> 29);
      } else if (ax == 0) {
        bits = 0;
      } else {
        bits = std::bit_cast<std::uint32_t>(static_cast<float>(std::bit_cast<double>(ax)));  // exact
      }
      (*t)[c] = sign | bits;
    }
  }
  return t->data();
}

CodeClass make_code_class(const Format& f) {
  CodeClass c;
  c.mag_mask = static_cast<std::uint32_t>(f.magnitude_mask());
  c.frac_bits = static_cast<std::uint32_t>(f.frac_bits);
  // mag >= nan_lo: NaN. IEEE: above the Inf code; fn and ue8m0: all ones; finite-only: never (no
  // magnitude of a format on this path reaches 2^32 - 1: 32-bit formats have a sign).
  c.nan_lo = f.specials == Specials::IEEE         ? static_cast<std::uint32_t>(f.inf_code() + 1)
             : f.specials == Specials::FiniteOnly ? 0xFFFFFFFFu
                                                  : static_cast<std::uint32_t>(f.magnitude_mask());
  c.inf_code = f.specials == Specials::IEEE ? static_cast<std::uint32_t>(f.inf_code()) : 0xFFFFFFFFu;
  c.zero_sub = f.specials == Specials::ScaleOnly ? 0u : 1u;
  return c;
}

ConvertTarget make_convert_target(const Format& d, const Rounder& r) {
  if (d.total_bits() > 32 || d.frac_bits > 23 || (d.specials != Specials::ScaleOnly && d.emin() < -126))
    throw std::invalid_argument("make_convert_target: destinations of at most 32 bits inside fp32's exponent range");
  ConvertTarget t{};
  t.rounding = r.rounding;
  t.scale_only = d.specials == Specials::ScaleOnly ? 1u : 0u;
  t.inf_in_code = static_cast<std::uint32_t>(detail::round_special(d, FpClass::Inf, false, 0, r).code);
  if (t.scale_only) return t;  // round_f32_ue8m0 needs nothing else
  t.frac = static_cast<std::uint32_t>(d.frac_bits);
  t.emin_b = static_cast<std::uint32_t>(d.emin() + 127);
  t.code_off = static_cast<std::uint32_t>(d.bias - 1 - 127);
  t.max_code = static_cast<std::uint32_t>(d.max_finite_code());
  t.sign_shift = static_cast<std::uint32_t>(d.exp_bits + d.frac_bits);
  for (int neg = 0; neg < 2; ++neg)
    for (int tz = 0; tz < 2; ++tz) {
      Rounder rr = r;
      if (tz) rr.rounding = Rounding::TowardZero;
      t.ovf_code[neg][tz] = static_cast<std::uint32_t>(detail::overflow_result(d, neg != 0, rr).code & d.magnitude_mask());
    }
  // NaN results, as detail::round_special makes them (nan_input_code, the one definition of each NaN
  // convention): the payload's top bits kept (IEEE preserve) or a fixed code, and the sign either kept
  // (XORed in: ml_dtypes' finite-only NaN is -0 for +NaN and +0 for -NaN) or dropped.
  const bool keep_payload = d.specials == Specials::IEEE && r.nan == NanPayload::Preserve;
  const std::uint64_t pos = nan_input_code(d, false, 0, r.nan), neg = nan_input_code(d, true, 0, r.nan);
  t.nan_payload_mask = keep_payload ? static_cast<std::uint32_t>(d.frac_mask()) : 0u;
  t.nan_or = static_cast<std::uint32_t>(pos);
  t.nan_keeps_sign = pos != neg ? 1u : 0u;
  if (pos != neg && (pos ^ neg) != d.sign_mask())
    throw std::logic_error("make_convert_target: a NaN convention whose +NaN and -NaN codes differ in more than the sign");
  return t;
}

bool convert_model_covers(const Format& src, const Format& dst) {
  const bool src_ok = src == f32 || src == tf32 || (src.total_bits() <= 16 && embeds_in_f32(src));
  return src_ok && dst.total_bits() <= 32 && dst.frac_bits <= 23 && (dst.specials == Specials::ScaleOnly || dst.emin() >= -126);
}

ConvertModel make_convert_model(const Format& src, const Format& dst, const Rounder& r) {
  if (!convert_model_covers(src, dst))
    throw std::invalid_argument("make_convert_model: " + std::string(src.tag) + " -> " + std::string(dst.tag) + " is not covered");
  ConvertModel m{};
  m.src.kind = src == f32 ? kSourceF32 : src == tf32 ? kSourceTf32 : kSourceTable;
  m.src.table = m.src.kind == kSourceTable ? f32_decode_table(src) : nullptr;
  m.src_class = make_code_class(src);
  m.dst_class = make_code_class(dst);
  m.dst = make_convert_target(dst, r);
  return m;
}

}  // namespace fpcert
