// oracle/convert/representable.cpp — exactly_representable (oracle/convert/representable.hpp).
#include "oracle/convert/representable.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace fpcert {

bool exactly_representable(const Format& f, double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x) & 0x7FFFFFFFFFFFFFFFULL;
  if (u == 0) return true;
  if (u >= 0x7FF0000000000000ULL) return false;  // Inf, NaN
  const int be = static_cast<int>(u >> 52);
  const std::uint64_t frac = u & 0x000FFFFFFFFFFFFFULL;
  const std::uint64_t sig = be ? frac | (std::uint64_t{1} << 52) : frac;
  const int e = be ? be - 1023 : 63 - std::countl_zero(frac) - 1074;  // floor(log2|x|)
  const int low = (be ? be - 1075 : -1074) + std::countr_zero(sig);   // exponent of the lowest set bit
  if (e > f.emax() || (e == f.emax() && std::fabs(x) > f.max_finite())) return false;
  return low >= e - f.frac_bits && low >= f.emin() - f.frac_bits;
}

}  // namespace fpcert
