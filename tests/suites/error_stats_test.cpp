// tests/suites/error_stats_test.cpp — the graders' statistics over parallel chunks equal what one pass in element order
// gives: order statistics against std::sort (NaN left out, negatives, signed zeros, infinities, heavy ties, sizes on
// both sides of the radix path's 2^20, its early finish after one and after three passes), the worst elements,
// histograms, quantiles and error map of error fractions against plain loops, and
// the envelope's worst element (the first of the largest) against a loop over the fractions it returns, under 1 and 7
// threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "base/parallel.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "oracle/refvalue.hpp"
#include "results/results.hpp"
#include "suites/verdict/envelope.hpp"
#include "suites/verdict/error_stats.hpp"
#include "tests/support/problems.hpp"
#include "tests/support/test_seed.hpp"

using namespace fpcert;

namespace {

/// Values drawn to make a radix select work: most in a few distinct values (ties across a 16-bit bucket), some spread
/// over many binades, negatives, both zeros, infinities and NaN.
std::vector<double> awkward_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(n);
  for (double& x : v) {
    const double r = u(g);
    if (r < 0.4) x = 0.5;                      // a heavy tie
    else if (r < 0.5) x = std::nextafter(0.5, 1.0);  // its neighbour: the same top 16 bits, another low word
    else if (r < 0.55) x = r < 0.525 ? 0.0 : -0.0;
    else if (r < 0.56) x = NAN;
    else if (r < 0.565) x = r < 0.5625 ? INFINITY : -INFINITY;
    else x = std::ldexp(u(g) - 0.3, static_cast<int>(g() % 200) - 100);
  }
  return v;
}

/// Sets $FPCERT_THREADS for the scope of a test.
struct Threads {
  explicit Threads(int n) { setenv("FPCERT_THREADS", std::to_string(n).c_str(), 1); }
  ~Threads() { unsetenv("FPCERT_THREADS"); }
};

}  // namespace

/// Values spread over many binades without ties to speak of (NaN among them): every rank's first 16-bit bucket is
/// small, so the radix select collects after its first pass (the early finish).
std::vector<double> spread_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(n);
  for (double& x : v) x = g() % 97 == 0 ? NAN : std::ldexp(u(g) - 0.4, static_cast<int>(g() % 60) - 30);
  return v;
}

TEST_CASE("order statistics equal the sorted non-NaN values at every rank asked, small and radix paths") {
  const std::size_t big = (std::size_t{1} << 20) + 12345;
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, big, big + 1})
  for (const bool spread : {false, true}) {
    // awkward: heavy ties, all four radix passes; spread: collected after the first pass; big + 1 spread: every value
    // in [1, 1 + 2^-20), one first bucket, halves in the second: collected after the third pass.
    std::vector<double> v = spread ? spread_values(n, test::seed() + n) : awkward_values(n, test::seed() + n);
    if (spread && n == big + 1) {
      std::mt19937_64 g(test::seed() + 3);
      for (double& x : v) x = std::isnan(x) ? x : 1 + std::ldexp(static_cast<double>(g() >> 11), -73);
    }
    std::vector<double> sorted;
    for (double x : v)
      if (!std::isnan(x)) sorted.push_back(x);
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(!sorted.empty());
    std::vector<std::size_t> ranks = {0, sorted.size() - 1, sorted.size() / 2, sorted.size() * 99 / 100};
    std::mt19937_64 g(test::seed());
    for (int q = 0; q < 12; ++q) ranks.push_back(g() % sorted.size());
    for (const int threads : {1, 7}) {
      Threads t(threads);
      const std::vector<double> got = order_statistics(v, ranks);
      REQUIRE(got.size() == ranks.size());
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        INFO("n = " << n << (spread ? " spread" : " awkward") << ", rank " << ranks[i] << ", threads " << threads);
        CHECK(got[i] == sorted[ranks[i]]);  // -0 == +0: equal values, as nth_element would leave either
      }
    }
    const auto [p99, med] = p99_and_median(v);
    const std::size_t m = sorted.size();
    CHECK(p99 == sorted[static_cast<std::size_t>(std::floor(0.99 * static_cast<double>(m - 1) + 0.5))]);
    CHECK(med == sorted[static_cast<std::size_t>(std::floor(0.5 * static_cast<double>(m - 1) + 0.5))]);
  }
  CHECK(p99_and_median(std::vector<double>{NAN, NAN}) == std::pair<double, double>{0, 0});
}

TEST_CASE("the worst error fractions, their histogram and maximum equal one pass in element order") {
  const std::int64_t m = 700, n = 1600;  // 1,120,000 fractions: 18 chunks of the graders' passes, the radix path
  std::vector<double> f = awkward_values(static_cast<std::size_t>(m * n), test::seed() + 7);
  for (double& x : f)
    if (!std::isnan(x)) x = std::fabs(x);  // fractions are >= 0 or +inf; ties (0.5) across chunks decide by index
  const std::size_t keep = 25;
  // One pass in element order: largest first, ties the smaller index first.
  std::vector<std::pair<double, std::int64_t>> want;
  for (std::size_t x = 0; x < f.size(); ++x)
    if (!std::isnan(f[x])) want.push_back({f[x], static_cast<std::int64_t>(x)});
  std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  want.resize(keep);
  std::vector<std::uint64_t> hist(kErrFracBuckets, 0);
  for (double x : f)
    if (!std::isnan(x)) ++hist[static_cast<std::size_t>(err_frac_bucket(x))];
  for (const int threads : {1, 7}) {
    Threads t(threads);
    CaseResult out;
    record_error_fractions(f, m, n, keep, out);
    REQUIRE(out.worst_envelope.size() == keep);
    for (std::size_t q = 0; q < keep; ++q) {
      CHECK(out.worst_envelope[q].frac == want[q].first);
      CHECK(out.worst_envelope[q].i * n + out.worst_envelope[q].j == want[q].second);
    }
    CHECK(out.metrics.err_frac_hist == hist);
    CHECK(out.metrics.err_frac_max == want.front().first);
    REQUIRE(out.error_map);
    // Every cell the largest fraction of its rows and columns (NaN where none is graded), by a plain loop.
    const ErrorMap& em = *out.error_map;
    std::vector<double> cells(em.max_frac.size(), NAN);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = f[static_cast<std::size_t>(i * n + j)];
        double& c = cells[static_cast<std::size_t>((i / em.cell_rows) * em.cols + j / em.cell_cols)];
        if (!std::isnan(x) && (std::isnan(c) || x > c)) c = x;
      }
    std::int64_t cells_differ = 0;
    for (std::size_t c = 0; c < cells.size(); ++c)
      cells_differ += !(cells[c] == em.max_frac[c] || (std::isnan(cells[c]) && std::isnan(em.max_frac[c])));
    CHECK(cells_differ == 0);
    CHECK(em.rows * em.cell_rows >= m);
    CHECK(em.cols * em.cell_cols >= n);
    std::vector<double> graded;
    for (double x : f)
      if (!std::isnan(x)) graded.push_back(x);
    std::sort(graded.begin(), graded.end());
    const auto at = [&](double q) { return graded[static_cast<std::size_t>(std::floor(q * static_cast<double>(graded.size() - 1) + 0.5))]; };
    CHECK(out.metrics.err_frac_p99 == at(0.99));
    CHECK(out.metrics.err_frac_median == at(0.5));
  }
}

TEST_CASE("the envelope's verdict over parallel chunks: the first of the largest fractions, counts as one pass gives") {
  // 300 x 300 outputs: two chunks of the envelope's pass. Row 250 repeats row 10 (same reference, same allowance), and
  // both get the same error: their fractions tie across the chunks, and the smaller index must win.
  const std::int64_t m = 300, n = 300, k = 40;
  Problem p = test::uniform_problem(m, n, k, f32, test::seed());
  for (std::int64_t q = 0; q < k; ++q) p.a.data[static_cast<std::size_t>(250 * k + q)] = p.a.data[static_cast<std::size_t>(10 * k + q)];
  const GemmRef ref = gemm_reference(p.a.view(), p.b.view());
  const auto kernel = make_gemm_kernel("model_gemm_f32");
  const KernelTraits& t = kernel->traits();
  const Format& of = *t.out;
  std::vector<std::uint64_t> codes(static_cast<std::size_t>(m * n));
  for (std::size_t x = 0; x < codes.size(); ++x) codes[x] = round_ref(of, ref.c[x], Rounder::nearest(of)).code;
  for (const std::int64_t x : {10 * n + 7, 250 * n + 7}) codes[static_cast<std::size_t>(x)] += 40;  // 40 ulp: the worst, tied
  codes[5] += 1;
  const EnvelopeModel env = make_envelope(t, k);
  const std::vector<double> zeros_m(static_cast<std::size_t>(m), 0.0), zeros_n(static_cast<std::size_t>(n), 0.0);
  for (const int threads : {1, 7}) {
    Threads th(threads);
    std::vector<double> f;
    const EnvelopeVerdict v = evaluate_envelope(env, of, m, n, ref, codes, zeros_m, zeros_n, &f);
    std::int64_t graded = 0, exceed = 0, worst_index = -1;
    double worst = 0;
    for (std::size_t x = 0; x < f.size(); ++x) {
      if (std::isnan(f[x])) continue;
      ++graded;
      exceed += f[x] > 1;
      if (worst_index < 0 || f[x] > worst) worst = f[x], worst_index = static_cast<std::int64_t>(x);
    }
    CHECK(f[static_cast<std::size_t>(10 * n + 7)] == f[static_cast<std::size_t>(250 * n + 7)]);
    CHECK(v.worst_index == 10 * n + 7);
    CHECK(v.worst_index == worst_index);
    CHECK(v.worst == worst);
    CHECK(v.graded == graded);
    CHECK(v.graded == m * n);
    CHECK(v.exceed == exceed);
  }
}
