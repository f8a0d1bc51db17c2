// oracle/parse_value.cpp — decimal-to-format with MPFR, bit patterns checked against the format.
#include "oracle/parse_value.hpp"

#include <mpfr.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/// A quiet NaN with an explicit payload: [+-]nan(PAYLOAD), PAYLOAD decimal or 0x hex, placed in the
/// fraction bits below the quiet bit (IEEE formats); false when the text is no such NaN.
bool nan_with_payload(const Format& f, const std::string& s, ParsedValue& r) {
  std::size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  const bool neg = s[0] == '-';
  if (s.size() < i + 5) return false;
  std::string head = s.substr(i, 4);
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (head != "nan(" || s.back() != ')') return false;
  const std::string payload = s.substr(i + 4, s.size() - i - 5);
  char* end = nullptr;
  errno = 0;
  const unsigned long long p = payload.empty() || !std::isdigit(static_cast<unsigned char>(payload[0]))
                                   ? 0
                                   : std::strtoull(payload.c_str(), &end, 0);
  if (payload.empty() || !end || *end != '\0' || errno == ERANGE)
    throw InputError("value: '" + s + "': a NaN payload is a non-negative integer, e.g. nan(0x123)");
  if (f.specials != Specials::IEEE) {
    if (p != 0)
      throw InputError("value: '" + s + "': " + std::string(f.tag) + " has " + (f.has_nan() ? "a single NaN code" : "no NaN") +
                       ", so no NaN payload");
    return false;
  }
  const std::uint64_t room = (std::uint64_t{1} << (f.frac_bits - 1)) - 1;  // below the quiet bit
  if (p > room)
    throw InputError("value: '" + s + "': payload " + payload + " does not fit " + std::string(f.tag) + "'s " +
                     std::to_string(f.frac_bits - 1) + " payload bits (at most " + std::to_string(room) + ")");
  r.code = f.inf_code() | (std::uint64_t{1} << (f.frac_bits - 1)) | p | (neg ? f.sign_mask() : 0);
  r.exact = true;
  return true;
}

}  // namespace

ParsedValue parse_value(const Format& f, std::string_view text) {
  if (text.empty() || text.size() > 4000)
    throw InputError("value: expected a number of at most 4000 characters, got " +
                     (text.empty() ? std::string("''") : std::to_string(text.size()) + " characters"));
  const std::string s(text);
  if (space(s.front()) || space(s.back())) throw InputError("value: '" + s + "' has spaces around the number");
  if (ParsedValue r; nan_with_payload(f, s, r)) return r;
  // Precision far above any decimal text's rounding boundary distance: the second rounding into
  // f cannot differ from a direct one (strings are capped at 4000 characters).
  mpfr_ref::Mpfr x(20000);
  char* end = nullptr;
  const int t = mpfr_strtofr(x, s.c_str(), &end, 0, MPFR_RNDN);
  if (end == s.c_str() || *end != '\0')
    throw InputError("value: '" + s + "' is not a number (decimal, hex float 0x1.8p3, inf or nan)");
  ParsedValue r;
  if (mpfr_nan_p(x)) {
    // MPFR's NaN carries no sign: `-nan` is the canonical NaN with the sign bit set, as `-nan(0)` is.
    r.code = f.has_nan() ? f.canonical_nan_code() | (s[0] == '-' ? f.sign_mask() : 0) : f.max_finite_code();
    r.exact = f.has_nan();
    return r;
  }
  if (mpfr_inf_p(x)) {
    const Rounded rr = round_double(f, mpfr_signbit(x) ? -INFINITY : INFINITY, Rounder::nearest(f));
    r.code = rr.code;
    r.exact = f.has_inf();
    return r;
  }
  const Rounded rr = mpfr_ref::round(f, x, Rounder::nearest(f));
  r.code = rr.code;
  r.exact = t == 0 && (rr.flags & (kInexact | kOverflow)) == 0;
  return r;
}

std::uint64_t parse_bits(const Format& f, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  // strtoull would skip spaces and wrap a '-': only digits are a bit pattern.
  const bool digits = !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]));
  const unsigned long long v = digits ? std::strtoull(s.c_str(), &end, 0) : 0;
  if (!digits || end == s.c_str() || *end != '\0' || errno == ERANGE)
    throw InputError("bits: '" + s + "' is not an integer bit pattern (e.g. 0x3c00)");
  const std::uint64_t container_mask =
      f.container_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << f.container_bits) - 1;
  if ((v & ~container_mask) != 0)
    throw InputError("bits: " + s + " does not fit the " + std::to_string(f.container_bits) + "-bit container of " +
                     std::string(f.tag));
  if (to_container(f, from_container(f, v)) != v)
    throw InputError("bits: " + s + " has bits outside the " + std::string(f.tag) + " code (tf32 uses the top 19 bits)");
  return from_container(f, v);
}

}  // namespace fpcert
