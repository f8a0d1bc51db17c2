// oracle/parse_value.cpp — decimal-to-format with MPFR, bit patterns checked against the format.
#include "oracle/parse_value.hpp"

#include <mpfr.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "oracle/mpfr_ref.hpp"

namespace fpcert {

ParsedValue parse_value(const Format& f, std::string_view text) {
  if (text.empty() || text.size() > 4000) throw InputError("value: expected a number, got '" + std::string(text) + "'");
  const std::string s(text);
  // Precision far above any decimal text's rounding boundary distance: the second rounding into
  // f cannot differ from a direct one (strings are capped at 4000 characters).
  mpfr_ref::Mpfr x(20000);
  char* end = nullptr;
  const int t = mpfr_strtofr(x, s.c_str(), &end, 0, MPFR_RNDN);
  if (end == s.c_str() || *end != '\0')
    throw InputError("value: '" + s + "' is not a number (decimal, hex float 0x1.8p3, inf or nan)");
  ParsedValue r;
  if (mpfr_nan_p(x)) {
    r.code = f.has_nan() ? f.canonical_nan_code() : f.max_finite_code();
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
  const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE)
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
