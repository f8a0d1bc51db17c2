// tests/support/same_reference.hpp — two exact GEMM references compared element by element (the engine tests: an engine
// must not change a bit of hi, lo, tail or status; abs_sum within its documented bound of MPFR's RU(sum |ab|)).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <algorithm>

#include "oracle/gemm_ref.hpp"

namespace fpcert::test {

struct RefDiff {
  std::int64_t count = 0;  ///< elements that differ
  std::string first;       ///< the first of them, both values in hex
};

inline bool same_double(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
}

/// Two RefValues bit for bit (NaN as NaN), and one in hex for a failure's message.
inline bool same_ref(const RefValue& x, const RefValue& y) {
  return same_double(x.hi, y.hi) && same_double(x.lo, y.lo) && x.tail == y.tail;
}
inline std::string show_ref(const RefValue& v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{hi %a, lo %a, tail %d}", v.hi, v.lo, v.tail);
  return buf;
}

/// x against y: hi, lo bit for bit (NaN as NaN), tail, and status (kRefFallback ignored when `ignore_fallback`: the
/// MPFR path never sets it).
inline RefDiff diff_values(const GemmRef& x, const GemmRef& y, bool ignore_fallback) {
  RefDiff d;
  if (x.m != y.m || x.n != y.n) return {1, "shapes differ"};
  const std::uint8_t mask = ignore_fallback ? static_cast<std::uint8_t>(~kRefFallback) : 0xff;
  for (std::size_t e = 0; e < x.c.size(); ++e) {
    const RefValue &a = x.c[e], &b = y.c[e];
    if (same_double(a.hi, b.hi) && same_double(a.lo, b.lo) && a.tail == b.tail &&
        (x.status[e] & mask) == (y.status[e] & mask))
      continue;
    if (d.count++ == 0) {
      char buf[300];
      std::snprintf(buf, sizeof buf, "C[%lld,%lld]: {%a, %a, %d} status %u vs {%a, %a, %d} status %u",
                    static_cast<long long>(static_cast<std::int64_t>(e) / x.n), static_cast<long long>(static_cast<std::int64_t>(e) % x.n),
                    a.hi, a.lo, a.tail, x.status[e], b.hi, b.lo, b.tail, y.status[e]);
      d.first = buf;
    }
  }
  return d;
}

/// |x| < 2^e for every entry of row i of A (rows) or column j of B (!rows); 0 when all are zero or non-finite.
inline int line_exponent(const MatrixView& m, std::int64_t l, bool rows) {
  double mx = 0;
  const std::int64_t len = rows ? m.cols : m.rows;
  for (std::int64_t k = 0; k < len; ++k) {
    const double v = rows ? m.at(l, k) : m.at(k, l);
    if (std::isfinite(v)) mx = std::max(mx, std::fabs(v));
  }
  return mx == 0 ? 0 : std::ilogb(mx) + 1;
}

/// x's abs_sum against the ground truth's RU(sum |a_ik b_kj|) (mpfr): RU <= x <= RU (1 + 3 (K + nb + 2) 2^-53) +
/// K 2^-1072 2^(e_i + e_j), the underflow term fp64 inputs may need (docs/oracle.md, "abs_sum"; negligible otherwise);
/// +Inf where the truth is.
inline RefDiff diff_abs_sum(const GemmRef& x, const GemmRef& mpfr, const MatrixView& a, const MatrixView& b) {
  RefDiff d;
  const std::int64_t K = a.cols;
  const double nb = static_cast<double>(x.info.kblock ? (K + x.info.kblock - 1) / x.info.kblock : 1);
  const double rel = 3 * (static_cast<double>(K) + nb + 2) * 0x1p-53;
  std::vector<int> ei(static_cast<std::size_t>(x.m)), ej(static_cast<std::size_t>(x.n));
  for (std::int64_t i = 0; i < x.m; ++i) ei[static_cast<std::size_t>(i)] = line_exponent(a, i, true);
  for (std::int64_t j = 0; j < x.n; ++j) ej[static_cast<std::size_t>(j)] = line_exponent(b, j, false);
  for (std::size_t e = 0; e < x.abs_sum.size(); ++e) {
    const double u = x.abs_sum[e], t = mpfr.abs_sum[e];
    const int es = ei[e / static_cast<std::size_t>(x.n)] + ej[e % static_cast<std::size_t>(x.n)];
    const double eta = static_cast<double>(K) * std::ldexp(1.0, es - 1072);
    const bool ok = std::isinf(t) ? std::isinf(u) : (u >= t && u <= t * (1 + rel) + eta + 0x1p-1074);
    if (ok) continue;
    if (d.count++ == 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "abs_sum element %zu: %a, MPFR's RU %a (K %lld)", e, u, t, static_cast<long long>(K));
      d.first = buf;
    }
  }
  return d;
}

}  // namespace fpcert::test
