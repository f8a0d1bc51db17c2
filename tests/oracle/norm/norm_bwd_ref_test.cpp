// tests/oracle/norm/norm_bwd_ref_test.cpp — the LayerNorm / RMSNorm backward reference (oracle/norm/norm_bwd_ref.hpp):
// dx, dgamma and dbeta of random matrices (uniform; mean >> spread; dy correlated with xh, so that g_j - mean(g) -
// xh_j mean(g xh) cancels; tiny dy whose results are subnormal in f16/bf16/f32; gamma with mixed signs and magnitudes;
// saved statistics as fp32 values and recomputed ones) equal the textbook formulas evaluated with MPFR at 320 bits and
// rounded once (norm_bwd_mpfr, no shared code but MPFR), code for code; special values by hand. The seed is printed and
// read back from FPCERT_TEST_SEED to reproduce.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ios>
#include <limits>
#include <stdexcept>
#include <vector>

#include <mpfr.h>

#include "oracle/norm/norm_bwd_ref.hpp"
#include "tests/support/splitmix.hpp"

namespace fpcert {
namespace {

std::uint64_t seed_from_env() {
  const char* s = std::getenv("FPCERT_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261204;
}

using test::mix;
using test::unit;
double f32v(double v) { return static_cast<double>(static_cast<float>(v)); }

/// A rows x cols problem of kind `kind` (0 uniform, 1 mean >> spread, 2 dy correlated with xh, 3 tiny dy); mean and rstd
/// saved as fp32 roundings of the double statistics (what a forward would store, within an ulp of exact).
struct Case {
  std::vector<double> x, dy, gamma, mean, rstd;
};
Case make_case(std::uint64_t seed, int kind, std::int64_t rows, std::int64_t cols, bool rms) {
  Case c;
  const auto n = static_cast<std::size_t>(cols);
  c.x.resize(static_cast<std::size_t>(rows) * n), c.dy.resize(c.x.size()), c.gamma.resize(n);
  c.mean.resize(static_cast<std::size_t>(rows)), c.rstd.resize(static_cast<std::size_t>(rows));
  std::uint64_t k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double u = unit(seed, k++);
    c.gamma[j] = f32v((u < 0.5 ? -1 : 1) * std::ldexp(1 + u, static_cast<int>(mix(seed + j) % 9) - 4));  // 2^-4 .. 2^5, mixed signs
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    double* x = c.x.data() + static_cast<std::size_t>(r) * n;
    double* dy = c.dy.data() + static_cast<std::size_t>(r) * n;
    double s = 0, q = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double u = unit(seed, k++);
      x[j] = f32v(kind == 1 ? 1e3 + 0.25 * (u - 0.5) : 4 * u - 1.5);
      s += x[j];
    }
    const double m = rms ? 0 : s / static_cast<double>(n);
    for (std::size_t j = 0; j < n; ++j) q += (x[j] - m) * (x[j] - m);
    const double rs = 1 / std::sqrt(q / static_cast<double>(n) + 1e-5);
    c.mean[static_cast<std::size_t>(r)] = f32v(m);
    c.rstd[static_cast<std::size_t>(r)] = f32v(rs);
    for (std::size_t j = 0; j < n; ++j) {
      const double u = unit(seed, k++);
      double v = 2 * u - 1;
      if (kind == 2) v = (0.75 + (x[j] - m) * rs) / c.gamma[j] + 1e-3 * (u - 0.5);  // g_j = 0.75 + xh_j + noise
      if (kind == 3) v = 1e-36 * (u - 0.5);
      dy[j] = f32v(v);
    }
  }
  return c;
}

NormBwdInputs inputs(const Case& c, NormKind kind, std::int64_t rows, std::int64_t cols, bool with_gamma, bool saved) {
  NormBwdInputs in;
  in.kind = kind, in.rows = rows, in.cols = cols;
  in.x = c.x.data(), in.dy = c.dy.data(), in.gamma = with_gamma ? c.gamma.data() : nullptr;
  in.mean = c.mean.data(), in.rstd = c.rstd.data();
  in.reads_saved = saved, in.eps = f32v(1e-5);
  return in;
}

}  // namespace

TEST_CASE("norm backward reference: dx, dgamma, dbeta equal MPFR at 320 bits rounded once") {
  const std::uint64_t seed = seed_from_env();
  std::printf("norm_bwd_ref_test: FPCERT_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  const Format* outs[] = {&f32, &f16, &bf16};
  const std::int64_t shapes[][2] = {{1, 1}, {3, 2}, {5, 7}, {17, 33}, {9, 100}, {64, 37}, {4, 257}};
  std::int64_t compared = 0, inexact = 0, subnormal = 0, mismatches = 0;
  for (int kind = 0; kind < 4; ++kind)
    for (const auto& sh : shapes)
      for (const NormKind nk : {NormKind::LayerNorm, NormKind::RmsNorm})
        for (const bool saved : {true, false}) {
          const std::int64_t rows = sh[0], cols = sh[1];
          const std::uint64_t cs = seed + static_cast<std::uint64_t>(kind * 1000 + rows * 7 + cols);
          const Case c = make_case(cs, kind, rows, cols, nk == NormKind::RmsNorm);
          const NormBwdInputs in = inputs(c, nk, rows, cols, (rows + kind) % 2 == 0, saved);
          for (const Format* dxo : outs) {
            const Format& po = *outs[(kind + rows) % 3];
            const NormBwdRef ref = norm_bwd_reference(in, *dxo, po, 2);
            std::vector<std::uint64_t> dx(ref.dx_code.size()), dg(static_cast<std::size_t>(cols)), db(static_cast<std::size_t>(cols));
            norm_bwd_mpfr(in, *dxo, po, 320, dx.data(), dg.data(), db.data());
            for (std::size_t e = 0; e < dx.size(); ++e) {
              ++compared;
              const double v = ref.dx_value[e];
              inexact += to_double(*dxo, ref.dx_code[e]) != v;
              subnormal += v != 0 && std::fabs(v) < dxo->min_normal();
              if (dx[e] != ref.dx_code[e] && mismatches++ < 5)
                FAIL_CHECK("dx row " << e / static_cast<std::size_t>(cols) << " col " << e % static_cast<std::size_t>(cols) << " kind "
                                     << kind << " " << to_string(nk) << " saved " << saved << " out " << dxo->tag << ": ref 0x"
                                     << std::hex << ref.dx_code[e] << " mpfr 0x" << dx[e] << std::dec << " (seed " << seed << ")");
            }
            for (std::size_t j = 0; j < dg.size(); ++j) {
              compared += 2;
              if (dg[j] != ref.dgamma_code[j] && mismatches++ < 5)
                FAIL_CHECK("dgamma col " << j << " kind " << kind << " saved " << saved << ": ref 0x" << std::hex << ref.dgamma_code[j]
                                         << " mpfr 0x" << dg[j] << std::dec);
              if (nk == NormKind::LayerNorm && db[j] != ref.dbeta_code[j] && mismatches++ < 5)
                FAIL_CHECK("dbeta col " << j << ": ref 0x" << std::hex << ref.dbeta_code[j] << " mpfr 0x" << db[j] << std::dec);
            }
            CHECK(ref.stats.unsettled == 0);
          }
        }
  std::printf("norm_bwd_ref_test: %lld values compared, %lld dx inexact in their format, %lld subnormal\n",
              static_cast<long long>(compared), static_cast<long long>(inexact), static_cast<long long>(subnormal));
  CHECK(mismatches == 0);
  CHECK(inexact > compared / 2);  // the comparison is about rounding: most dx are not values of their format
  CHECK(subnormal > 100);         // kind 3 puts dx below every format's smallest normal
}

TEST_CASE("norm backward reference: cancellation in g - mean(g) - xh mean(g xh) is resolved exactly") {
  // dy_j = (0.75 + xh_j) / gamma_j exactly would make dx = 0 up to the saved statistics' own rounding: the reference
  // must keep what is left (and MPFR at 320 bits agrees); the values are far below |g| rstd, not zero.
  const Case c = make_case(7, 2, 8, 64, false);
  const NormBwdInputs in = inputs(c, NormKind::LayerNorm, 8, 64, true, true);
  const NormBwdRef ref = norm_bwd_reference(in, f32, f32, 1);
  std::vector<std::uint64_t> dx(ref.dx_code.size()), dg(64), db(64);
  norm_bwd_mpfr(in, f32, f32, 400, dx.data(), dg.data(), db.data());
  double small = 0;
  for (std::size_t e = 0; e < dx.size(); ++e) {
    CHECK(dx[e] == ref.dx_code[e]);
    small = std::max(small, std::fabs(ref.dx_value[e]));
  }
  CHECK(small > 0);
  CHECK(small < 0.05 * c.rstd[0]);  // |g_j| rstd is about 0.75 rstd: at least 15x cancelled
}

TEST_CASE("norm backward reference: special values and bad input") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {1, 2, 3, 4, 5, 6}, dy = {0.5, -1, 0.25, 2, nan, 1}, mean = {2, 5}, rstd = {1.25, 1.25};
  NormBwdInputs in;
  in.rows = 2, in.cols = 3, in.x = x.data(), in.dy = dy.data(), in.mean = mean.data(), in.rstd = rstd.data();
  const NormBwdRef ref = norm_bwd_reference(in, f32, f32, 1);
  for (int j = 0; j < 3; ++j) {
    CHECK(std::isfinite(ref.dx_value[static_cast<std::size_t>(j)]));    // row 0 finite
    CHECK(std::isnan(ref.dx_value[static_cast<std::size_t>(3 + j)]));   // row 1's NaN reaches every dx of it (A, B)
  }
  CHECK(std::isfinite(ref.dgamma_value[0]));
  CHECK(std::isnan(ref.dgamma_value[1]));  // dy[1][1] is NaN
  CHECK(std::isnan(ref.dbeta_value[1]));
  CHECK(ref.dbeta_value[2] == 1.25);  // 0.25 + 1 exactly
  // Row 0 by hand: xh = (-1.25, 0, 1.25), g = dy, A = -0.25, B = -0.625 + 0.3125 = -0.3125;
  // dx_0 = 1.25 (3 * 0.5 + 0.25 - 1.25 * 0.3125) / 3 = 1.25 * 1.359375 / 3 = 0.56640625 (exact: 1.69921875 / 3).
  CHECK(ref.dx_value[0] == doctest::Approx(1.25 * (1.5 + 0.25 - 0.390625) / 3).epsilon(1e-15));
  in.rstd = nullptr;
  CHECK_THROWS_AS(norm_bwd_reference(in, f32, f32, 1), std::invalid_argument);
}

TEST_CASE("norm backward reference: saved statistics are the correctly rounded fp32 mean and rstd") {
  // Compared with MPFR at 400 bits (mean, two-pass variance, sqrt, division), rounded to fp32 once: the same code
  // unless the 400-bit value sits within 2^-400 of a rounding boundary (never for these rows).
  for (std::uint64_t r = 0; r < 200; ++r) {
    const std::size_t n = 1 + r % 37;
    std::vector<double> x(n);
    for (std::size_t j = 0; j < n; ++j) x[j] = f32v((r % 2 ? 1e3 : 0.0) + (r % 3 ? 1.0 : 1e-20) * (unit(r, j) - 0.5));
    for (const NormKind k : {NormKind::LayerNorm, NormKind::RmsNorm}) {
      double mean, rstd;
      norm_saved_stats(k, x.data(), n, 1e-5, &mean, &rstd);
      mpfr_t m, v, t;
      mpfr_inits2(400, m, v, t, static_cast<mpfr_ptr>(nullptr));
      mpfr_set_zero(m, 1), mpfr_set_zero(v, 1);
      for (double e : x) mpfr_add_d(m, m, e, MPFR_RNDN);
      mpfr_div_ui(m, m, n, MPFR_RNDN);
      if (k == NormKind::RmsNorm) mpfr_set_zero(m, 1);
      for (double e : x) mpfr_set_d(t, e, MPFR_RNDN), mpfr_sub(t, t, m, MPFR_RNDN), mpfr_sqr(t, t, MPFR_RNDN), mpfr_add(v, v, t, MPFR_RNDN);
      mpfr_div_ui(v, v, n, MPFR_RNDN), mpfr_add_d(v, v, 1e-5, MPFR_RNDN), mpfr_rec_sqrt(v, v, MPFR_RNDN);
      CHECK(mean == static_cast<double>(mpfr_get_flt(m, MPFR_RNDN)));
      CHECK(rstd == static_cast<double>(mpfr_get_flt(v, MPFR_RNDN)));
      mpfr_clears(m, v, t, static_cast<mpfr_ptr>(nullptr));
    }
  }
  double mean, rstd;
  const double bad[] = {1, std::numeric_limits<double>::infinity()};
  norm_saved_stats(NormKind::LayerNorm, bad, 2, 1e-5, &mean, &rstd);
  CHECK((std::isnan(mean) && std::isnan(rstd)));
}

}  // namespace fpcert
