// suites/verdict/unwritten.cpp — see unwritten.hpp.
#include "suites/verdict/unwritten.hpp"

#include <cmath>

namespace fpcert {

UnwrittenCount discount_prefill_results(const Format& out, const std::vector<std::uint64_t>& codes, const UnwrittenCount& in,
                                        const std::function<double(std::size_t)>& exact) {
  if (in.unwritten == 0 || out.has_inf() || !out.has_nan()) return in;
  const std::uint64_t nan = out.canonical_nan_code();
  const double top = out.max_finite();
  UnwrittenCount r;
  for (std::size_t x = 0; x < codes.size(); ++x) {
    if (codes[x] != nan) continue;
    const double v = exact(x);
    if (std::isnan(v) || std::fabs(v) >= top) continue;  // NaN is RN's own result here (or may be, at the range's edge)
    if (r.first_unwritten < 0) r.first_unwritten = static_cast<std::int64_t>(x);
    ++r.unwritten;
  }
  return r;
}

}  // namespace fpcert
