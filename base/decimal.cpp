// base/decimal.cpp — exact binary-to-decimal with GMP.
#include "base/decimal.hpp"

#include <gmp.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fpcert {

std::string exact_decimal(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  int e;
  const double m = std::frexp(std::fabs(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  const auto mi = static_cast<std::uint64_t>(std::ldexp(m, 53));
  e -= 53;  // |x| = mi * 2^e exactly
  mpz_t n;
  mpz_init_set_ui(n, 0);
  mpz_import(n, 1, 1, sizeof mi, 0, 0, &mi);
  std::string digits;
  int point;  // number of digits before the decimal point (may be <= 0)
  if (e >= 0) {
    mpz_mul_2exp(n, n, static_cast<mp_bitcnt_t>(e));
    char* s = mpz_get_str(nullptr, 10, n);
    digits = s;
    std::free(s);
    point = static_cast<int>(digits.size());
  } else {
    // mi * 2^e = mi * 5^-e / 10^-e
    mpz_t p5;
    mpz_init(p5);
    mpz_ui_pow_ui(p5, 5, static_cast<unsigned long>(-e));
    mpz_mul(n, n, p5);
    mpz_clear(p5);
    char* s = mpz_get_str(nullptr, 10, n);
    digits = s;
    std::free(s);
    point = static_cast<int>(digits.size()) + e;
  }
  mpz_clear(n);
  while (digits.size() > 1 && digits.back() == '0' && static_cast<int>(digits.size()) > point) digits.pop_back();
  std::string out = std::signbit(x) ? "-" : "";
  const int nd = static_cast<int>(digits.size());
  if (point > 21 || point < -6) {  // scientific: d.ddd...e±X, all digits kept
    out += digits[0];
    if (nd > 1) out += "." + digits.substr(1);
    out += "e" + std::to_string(point - 1);
  } else if (point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (point >= nd) {
    out += digits + std::string(static_cast<std::size_t>(point - nd), '0');
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}

std::string short_decimal(double x) {
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (std::strtod(buf, nullptr) == x || std::isnan(x)) break;
  }
  return buf;
}

}  // namespace fpcert
