// suites/verdict/error_stats.cpp — see error_stats.hpp.
#include "suites/verdict/error_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>

#include "base/parallel.hpp"
#include "oracle/ulp.hpp"
#include "suites/verdict/bound.hpp"

namespace fpcert {
namespace {

/// Element-wise sum of two histograms of the same length (parallel_reduce's merge).
void add_histogram(std::vector<std::uint64_t>& acc, const std::vector<std::uint64_t>& h) {
  for (std::size_t b = 0; b < h.size(); ++b) acc[b] += h[b];
}

/// A key whose unsigned order is the values' order (negatives below -0 below +0 below positives; no NaN).
std::uint64_t order_key(double v) {
  const auto u = std::bit_cast<std::uint64_t>(v);
  return u >> 63 ? ~u : u | (std::uint64_t{1} << 63);
}
double from_order_key(std::uint64_t k) { return std::bit_cast<double>(k >> 63 ? k & ~(std::uint64_t{1} << 63) : ~k); }

}  // namespace

/// Histogram bucket of a ulp distance: 0: [0, 0.5], 1: (0.5, 1], 2: (1, 2], ..., 16: (2^14, inf), 17: non-finite.
int ulp_bucket(double u) {
  if (!std::isfinite(u)) return 17;
  if (u <= 0.5) return 0;
  if (u <= 1) return 1;
  int b = 2;
  double edge = 2;
  while (u > edge && b < 16) {
    edge *= 2;
    ++b;
  }
  return b;
}

std::vector<double> order_statistics(const std::vector<double>& v, const std::vector<std::size_t>& ranks) {
  std::vector<double> out;
  out.reserve(ranks.size());
  if (v.size() < (std::size_t{1} << 20)) {
    std::vector<double> w;
    w.reserve(v.size());
    for (double x : v)
      if (!std::isnan(x)) w.push_back(x);
    for (std::size_t r : ranks) {
      std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(r), w.end());
      out.push_back(w[r]);
    }
    return out;
  }
  // A radix select on the keys, 16 bits a pass, every rank in the same passes: each rank counts the elements whose key
  // matches its prefix so far (the bits found; above: their mask) in a histogram of its own. Once every rank's bucket
  // holds at most kCollect keys (after the first pass, unless values tie or crowd into 1/16 of a binade), one more pass
  // collects those keys and std::nth_element finishes: two passes over v instead of four.
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  constexpr std::size_t kBuckets = 65536;
  constexpr std::uint64_t kCollect = std::uint64_t{1} << 18;
  const std::size_t nr = ranks.size();
  std::vector<std::size_t> rank = ranks;
  std::vector<std::uint64_t> prefix(nr, 0);
  std::uint64_t above = 0;
  for (int shift = 48; shift >= 0; shift -= 16) {
    const std::vector<std::uint64_t> h =
        parallel_reduce(v.size(), kChunk, std::vector<std::uint64_t>(nr * kBuckets, 0), [&](std::uint64_t x0, std::uint64_t x1) {
          std::vector<std::uint64_t> part(nr * kBuckets, 0);
          for (std::uint64_t x = x0; x < x1; ++x) {
            if (std::isnan(v[x])) continue;
            const std::uint64_t k = order_key(v[x]);
            const std::size_t digit = (k >> shift) & 0xFFFF;
            for (std::size_t r = 0; r < nr; ++r)
              if ((k & above) == prefix[r]) ++part[r * kBuckets + digit];
          }
          return part;
        }, add_histogram);
    bool small = true;
    for (std::size_t r = 0; r < nr; ++r) {
      const std::uint64_t* hr = h.data() + r * kBuckets;
      std::uint64_t b = 0;
      while (rank[r] >= hr[b]) rank[r] -= hr[b++];  // the caller's rank is below the count: some bucket holds it
      prefix[r] |= b << shift;
      small = small && hr[b] <= kCollect;
    }
    above |= std::uint64_t{0xFFFF} << shift;
    if (small && shift > 0) {
      // Each rank's keys with its prefix (in any order: the k-th smallest of a set does not depend on it).
      using Keys = std::vector<std::vector<std::uint64_t>>;
      Keys keys = parallel_reduce(v.size(), kChunk, Keys(nr), [&](std::uint64_t x0, std::uint64_t x1) {
        Keys part(nr);
        for (std::uint64_t x = x0; x < x1; ++x) {
          if (std::isnan(v[x])) continue;
          const std::uint64_t k = order_key(v[x]);
          for (std::size_t r = 0; r < nr; ++r)
            if ((k & above) == prefix[r]) part[r].push_back(k);
        }
        return part;
      }, [](Keys& acc, const Keys& part) {
        for (std::size_t r = 0; r < acc.size(); ++r) acc[r].insert(acc[r].end(), part[r].begin(), part[r].end());
      });
      for (std::size_t r = 0; r < nr; ++r) {
        std::vector<std::uint64_t>& kr = keys[r];
        std::nth_element(kr.begin(), kr.begin() + static_cast<std::ptrdiff_t>(rank[r]), kr.end());
        prefix[r] = kr[rank[r]];
      }
      break;
    }
  }
  for (std::size_t r = 0; r < nr; ++r) out.push_back(from_order_key(prefix[r]));
  return out;
}

namespace {

std::pair<double, double> p99_and_median_of(const std::vector<double>& v, std::size_t n) {
  if (n == 0) return {0, 0};
  auto rank = [n](double q) { return static_cast<std::size_t>(std::min<double>(static_cast<double>(n - 1), std::floor(q * static_cast<double>(n - 1) + 0.5))); };
  const std::vector<double> s = order_statistics(v, {rank(0.99), rank(0.5)});
  return {s[0], s[1]};
}

}  // namespace

std::pair<double, double> p99_and_median(const std::vector<double>& v) {
  return p99_and_median_of(v, static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](double x) { return !std::isnan(x); })));
}

/// The ULP histogram (ulp_bucket) of output codes against the exact reference, leaving out the finite outputs of
/// cancellation-dominated elements (results/results.hpp, kCancellationRatio).
std::vector<std::uint64_t> ulp_histogram(const Format& of, const std::vector<std::uint64_t>& codes, const GemmRef& ref) {
  return parallel_reduce(codes.size(), kGradeChunk, std::vector<std::uint64_t>(18, 0), [&](std::uint64_t x0, std::uint64_t x1) {
    std::vector<std::uint64_t> h(18, 0);
    for (std::uint64_t x = x0; x < x1; ++x) {
      const FpClass gc = classify(of, codes[x]);
      const bool finite_out = gc != FpClass::NaN && gc != FpClass::Inf;
      if (finite_out && std::isfinite(ref.c[x].hi) && cancellation_dominated(ref.c[x].hi, ref.abs_sum[x])) continue;
      ++h[static_cast<std::size_t>(ulp_bucket(ulp_distance(of, codes[x], ref.c[x])))];
    }
    return h;
  }, add_histogram);
}

std::vector<std::uint64_t> err_frac_histogram(const std::vector<double>& fracs) {
  return parallel_reduce(fracs.size(), kGradeChunk, std::vector<std::uint64_t>(kErrFracBuckets, 0), [&](std::uint64_t x0, std::uint64_t x1) {
    std::vector<std::uint64_t> h(kErrFracBuckets, 0);
    for (std::uint64_t x = x0; x < x1; ++x)
      if (!std::isnan(fracs[x])) ++h[static_cast<std::size_t>(err_frac_bucket(fracs[x]))];
    return h;
  }, add_histogram);
}

/// The error fraction's statistics, histogram, map and `keep` worst elements (m x n fractions, NaN: not graded) into out.
void record_error_fractions(const std::vector<double>& fracs, std::int64_t m, std::int64_t n, std::size_t keep, CaseResult& out) {
  Metrics& M = out.metrics;
  // The worst elements, largest first (ties: the smaller index first): each task's `keep` worst in a short sorted list,
  // the lists merged in task order (an element of a later task displaces only a strictly larger fraction's rival).
  using Worst = std::vector<std::pair<double, std::int64_t>>;
  auto insert = [keep](Worst& worst, double f, std::int64_t x) {
    if (std::isnan(f) || (worst.size() == keep && !(f > worst.back().first))) return;
    auto at = std::find_if(worst.begin(), worst.end(), [&](const auto& w) { return f > w.first; });
    worst.insert(at, {f, x});
    if (worst.size() > keep) worst.pop_back();
  };
  M.err_frac_hist.assign(kErrFracBuckets, 0);
  out.worst_envelope.clear();
  M.err_frac_max = 0;
  M.err_frac_p99 = M.err_frac_median = 0;
  if (m <= 0 || n <= 0) return;
  ErrorMap em;
  em.cell_rows = (m + kErrorMapCells - 1) / kErrorMapCells;
  em.cell_cols = (n + kErrorMapCells - 1) / kErrorMapCells;
  em.rows = (m + em.cell_rows - 1) / em.cell_rows;
  em.cols = (n + em.cell_cols - 1) / em.cell_cols;
  em.max_frac.assign(static_cast<std::size_t>(em.rows * em.cols), NAN);
  // One pass: each task whole rows of cells (about kGradeChunk elements; its cells of the map are its own), its worst
  // list in element order and its histogram.
  struct Part {
    Worst worst;
    std::vector<std::uint64_t> hist = std::vector<std::uint64_t>(kErrFracBuckets, 0);
  };
  const auto rows = static_cast<std::uint64_t>(em.cell_rows) *
                    std::max<std::uint64_t>(1, kGradeChunk / static_cast<std::uint64_t>(em.cell_rows * n));
  const Part all = parallel_reduce(static_cast<std::uint64_t>(m), rows, Part{}, [&](std::uint64_t i0, std::uint64_t i1) {
    Part P;
    for (auto i = static_cast<std::int64_t>(i0); i < static_cast<std::int64_t>(i1); ++i) {
      const double* row = fracs.data() + i * n;
      double* cells = em.max_frac.data() + (i / em.cell_rows) * em.cols;
      for (std::int64_t c = 0, j = 0; c < em.cols; ++c) {
        double& cell = cells[c];
        for (const std::int64_t j1 = std::min(n, j + em.cell_cols); j < j1; ++j) {
          const double f = row[j];
          if (std::isnan(f)) continue;
          ++P.hist[static_cast<std::size_t>(err_frac_bucket(f))];
          insert(P.worst, f, i * n + j);
          if (std::isnan(cell) || f > cell) cell = f;
        }
      }
    }
    return P;
  }, [&](Part& acc, const Part& P) {
    for (const auto& [f, x] : P.worst) insert(acc.worst, f, x);
    add_histogram(acc.hist, P.hist);
  });
  for (const auto& [f, x] : all.worst) out.worst_envelope.push_back({x / n, x % n, f});
  M.err_frac_hist = all.hist;
  M.err_frac_max = all.worst.empty() ? 0 : all.worst.front().first;
  std::uint64_t graded = 0;  // the non-NaN fractions: every one is in a bucket
  for (const std::uint64_t c : all.hist) graded += c;
  std::tie(M.err_frac_p99, M.err_frac_median) = p99_and_median_of(fracs, static_cast<std::size_t>(graded));
  out.error_map = std::move(em);
}

}  // namespace fpcert
