// suites/verdict/wide_sums.cpp — sums of magnitudes beyond double's range, scaled (docs/fp64.md, "Sums beyond
// double's range"): what the envelope and the componentwise bound stand on for fp64 inputs near their largest finite
// values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/parallel.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

namespace {

/// An upper bound of sum_t |x_t y_t| 2^-shift (y null: sum_t |x_t| 2^-shift) over n terms at strides sx, sy; a product
/// scales each factor by half the shift. Each scaled operand and product, and each addition, is within a relative 2^-53
/// or an absolute 2^-1075 of its exact value; the sum of n terms so formed is within (2n + 2) 2^-53 relative and
/// (3n + 1) 2^-1075 absolute of the exact one: both covered, with room for the two roundings of the cover itself.
double scaled_abs_sum(const double* x, std::ptrdiff_t sx, const double* y, std::ptrdiff_t sy, std::int64_t n, int shift) {
  const int sa = shift / 2, sb = shift - sa;
  double s = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    const double a = std::fabs(x[t * sx]);
    s += y ? std::ldexp(a, -sa) * std::ldexp(std::fabs(y[t * sy]), -sb) : std::ldexp(a, -shift);
  }
  const double nd = static_cast<double>(n);
  return s * (1 + (2 * nd + 8) * 0x1p-53) + (3 * nd + 4) * 0x1p-1074;
}

}  // namespace

WideSums wide_sums(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmRef& ref) {
  WideSums w;
  if (m <= 0 || n <= 0 || k <= 0) return w;
  // No sum reaches double's largest value when k max|a| max|b|, k max|a| and k max|b| stay below 2^1020 (the sums of
  // at most k such terms, each addition within 2^-53 relative): the common case costs one pass over the inputs.
  double ma = 0, mb = 0;
  for (double v : a)
    if (std::isfinite(v)) ma = std::max(ma, std::fabs(v));
  for (double v : b)
    if (std::isfinite(v)) mb = std::max(mb, std::fabs(v));
  const double kd = static_cast<double>(k), lim = 0x1p1020;
  if (kd * ma < lim && kd * mb < lim && (ma == 0 || mb == 0 || std::log2(kd) + std::log2(ma) + std::log2(mb) < 1020)) return w;
  // Which rows and columns overflow on their own (sum_k |a_ik|, sum_k |b_kj| in double, as grade forms them).
  std::vector<std::uint8_t> row_wide(static_cast<std::size_t>(m), 0), col_wide(static_cast<std::size_t>(n), 0);
  for (std::int64_t i = 0; i < m; ++i) {
    double s = 0;
    for (std::int64_t q = 0; q < k; ++q) s += std::fabs(a[static_cast<std::size_t>(i * k + q)]);
    row_wide[static_cast<std::size_t>(i)] = !(s * (1 + 0x1p-30) < 0x1p1023);
  }
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t q = 0; q < k; ++q) s += std::fabs(b[static_cast<std::size_t>(q * n + j)]);
    col_wide[static_cast<std::size_t>(j)] = !(s * (1 + 0x1p-30) < 0x1p1023);
  }
  const auto mn = static_cast<std::uint64_t>(m * n);
  std::vector<std::uint8_t> pick(mn, 0);
  parallel_for(mn, 1 << 14, [&](std::uint64_t x0, std::uint64_t x1, unsigned) {
    for (std::uint64_t x = x0; x < x1; ++x) {
      if (!std::isfinite(ref.c[x].hi)) continue;  // non-finite: the special-value rules, not a bound
      const auto i = static_cast<std::int64_t>(x) / n, j = static_cast<std::int64_t>(x) % n;
      pick[x] = !std::isfinite(ref.abs_sum[x]) || row_wide[static_cast<std::size_t>(i)] || col_wide[static_cast<std::size_t>(j)];
    }
  });
  for (std::uint64_t x = 0; x < mn; ++x) {
    if (!pick[x]) continue;
    const auto i = static_cast<std::int64_t>(x) / n, j = static_cast<std::int64_t>(x) % n;
    const double* ar = a.data() + i * k;
    const double* bc = b.data() + j;
    auto at = [&](int shift) {
      return WideSums::Sums{shift, scaled_abs_sum(ar, 1, bc, n, k, shift), scaled_abs_sum(ar, 1, nullptr, 0, k, shift),
                            scaled_abs_sum(bc, n, nullptr, 0, k, shift)};
    };
    // First at 2^-1100 (finite for any K below 2^75), then at the element's own shift: the largest sum near 2^1000, so
    // that what the scaling loses below double's range (2^(shift - 1075) unscaled) is as small as it can be.
    const WideSums::Sums far = at(1100);
    const double big = std::max({far.abs_sum, far.row_abs_a, far.col_abs_b});
    w.index.push_back(static_cast<std::int64_t>(x));
    w.sums.push_back(at(std::clamp(std::ilogb(big) + 1100 - 1000, 1, 1100)));
  }
  return w;
}

}  // namespace fpcert
