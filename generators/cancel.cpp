// generators/cancel.cpp — dot products and GEMMs with a prescribed condition number
// kappa = sum |x_i y_i| / |sum x_i y_i| (docs/generators.md, "cancel" and "cancel_gemm").
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/parallel.hpp"
#include "generators/family.hpp"
#include "oracle/gemm_ref.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kCancelId = 11, kCancelGemmId = 12;

/// An exact sum kept as an expansion: doubles whose exact sum is the value, the first one its
/// rounding to nearest. (A RefValue's hi + lo keeps 106 bits; once cancellation removes the
/// leading bits, the bits below them decide the result, so nothing may be dropped.)
struct Expansion {
  std::vector<double> parts;
  double hi() const { return parts.empty() ? 0.0 : parts.front(); }
};

/// The exact value of sum_i xs_i ys_i as an Expansion, peeled with the exact oracle: (hi, lo)
/// of the sum, then (hi, lo) of what remains, until the oracle reports no remainder (tail 0).
/// Only the oracle's RefValue is used, which the exact value defines uniquely (hi = RN(exact),
/// lo = RN(exact - hi), tail = its sign), so the bits never depend on how the oracle computes it.
Expansion exact_expansion(std::vector<double> xs, std::vector<double> ys) {
  Expansion e;
  for (;;) {
    const DotRef d = exact_dot(xs.data(), ys.data(), xs.size());
    if (d.value.hi == 0) break;  // exactly zero (hi == 0 only for an exact 0)
    for (double v : {d.value.hi, d.value.lo})
      if (v != 0) {
        e.parts.push_back(v);
        xs.push_back(v);
        ys.push_back(-1.0);
      }
    if (d.value.tail == 0) break;  // exact == hi + lo
  }
  return e;
}

/// s + x y, exactly.
Expansion add_product(const Expansion& s, double x, double y) {
  std::vector<double> xs = s.parts, ys(s.parts.size(), 1.0);
  xs.push_back(x);
  ys.push_back(y);
  return exact_expansion(std::move(xs), std::move(ys));
}

/// The last product q (signed) that makes (A + |q|) / |S + q| equal kappa exactly (GenDot's
/// final step solved in closed form): if |S| is too large for kappa, cancel part of it; if too
/// small, add to it. kappa == 1 needs every product of one sign: add a like-signed product.
double closing_product(double S, double A, double kappa, double like_sign_magnitude) {
  const double sg = S < 0 ? -1.0 : 1.0;
  if (kappa == 1.0) return sg * like_sign_magnitude;
  const double aS = std::fabs(S);
  if (aS == 0 || A > kappa * aS) return sg * ((A - kappa * aS) / (kappa - 1.0));  // grow |S|
  return -sg * ((kappa * aS - A) / (kappa + 1.0));                                 // shrink |S|
}

/// Smallest dot length for which GenDot's steps can reach kappa in precision p (the derivation
/// is in docs/generators.md, "cancel"): the n - ceil(n/2) - 1 cancelling steps must reduce the
/// running sum from at most n 2^(b+2) to below 1/(16u), b = log2 kappa, at most p bits a step,
/// with the exponent schedule falling by at most p - 4 bits a step.
/// Needs p > 4 (the schedule falls by p - 4 bits a step: with p <= 4 no length reaches kappa, and the
/// search never ended); the search stops at 2^40, past any dot a problem may have.
std::int64_t gendot_min_n(double b, int p) {
  if (p <= 4) return std::numeric_limits<std::int64_t>::max();
  for (std::int64_t n = 6; n < (std::int64_t{1} << 40); ++n) {
    const double steps = static_cast<double>(n / 2 - 1);  // n - ceil(n/2) - 1
    const double need = std::max(std::ceil(b / (2.0 * (p - 4))), std::ceil((b + det_log2(static_cast<double>(n)) + 9 - p) / p));
    if (steps >= need) return n;
  }
  return std::numeric_limits<std::int64_t>::max();
}

void make_cancel(const ParsedSpec& ps, Problem& p, const GenContext&) {
  const Format& src = *p.source;
  const std::int64_t n = ps.integer("n");
  const double kappa = ps.real("kappa");
  const int prec = src.precision();
  const double b = det_log2(kappa);
  if (prec <= 4)
    ps.fail("source " + std::string(src.tag) + " has " + std::to_string(prec) +
            " bits of precision; cancel's construction needs more than 4 (it cancels up to p - 4 bits a step): use source f16, bf16 or wider");
  const std::int64_t nmin = gendot_min_n(b, prec);
  if (n < nmin)
    ps.fail("field 'n' = " + ps.text("n") + " is too short to reach kappa = " + ps.text("kappa") + " with source " +
            std::string(src.tag) + ": need n >= " + std::to_string(nmin));
  // The largest entries are about 2^(b/2 + 1) * sqrt(n); they must fit the source format.
  if (b / 2 + det_log2(static_cast<double>(n)) / 2 + 4 > src.emax())
    ps.fail("kappa = " + ps.text("kappa") + " needs entries near 2^" + std::to_string(static_cast<int>(b / 2 + 4)) +
            ", beyond source " + std::string(src.tag) + "'s range");
  set_dot_shape(ps, p, n);
  std::vector<double>& x = p.a.data;
  std::vector<double>& y = p.b.data;
  const Stream sxy = stream_for(p.seed, kCancelId, kShared), se = stream_for(p.seed, kCancelId, kShared + 1);
  const Stream sbias = stream_for(p.seed, kCancelId, kShared + 2), st = stream_for(p.seed, kCancelId, kShared + 3);
  const Stream sperm = stream_for(p.seed, kCancelId, kShared + 4);
  const double half_b = b / 2;
  const double bias = 1.0 / kappa;  // P(product forced positive): E[sign(x_i y_i)] = 1 / kappa
  auto rn = [&](double v) { return to_source(src, v); };
  // A random pair at exponent e (the paper's (2 rand - 1) 2^e), with the sign bias.
  auto random_pair = [&](std::int64_t i, int e) {
    const auto u = uniform01_pair(sxy, static_cast<std::uint64_t>(i));
    x[i] = rn(std::ldexp(2.0 * u[0] - 1.0, e));
    double yy = std::ldexp(2.0 * u[1] - 1.0, e);
    if (bernoulli(sbias, static_cast<std::uint64_t>(i), bias)) yy = std::copysign(yy, x[i]);
    y[i] = rn(yy);
  };

  // Phase 1 (GenDot lines 1-6): n2 = round(n/2) random pairs, exponents round(rand * b/2), the
  // first at round(b/2) + 1 and the last at 0.
  const std::int64_t n2 = (n + 1) / 2;
  for (std::int64_t i = 0; i < n2; ++i) {
    int e = static_cast<int>(std::floor(uniform01(se, static_cast<std::uint64_t>(i)) * half_b + 0.5));
    if (i == 0) e = static_cast<int>(std::floor(half_b + 0.5)) + 1;
    if (i == n2 - 1) e = 0;
    random_pair(i, e);
  }
  // sum |x_i y_i| in double, in index order (a guide for the construction: exact for sources up
  // to f32, whose products fit in 53 bits; what was achieved is measured at the end).
  double A = 0;
  for (std::int64_t i = 0; i < n2; ++i) A += std::fabs(x[i] * y[i]);
  Expansion S = exact_expansion(std::vector<double>(x.begin(), x.begin() + n2), std::vector<double>(y.begin(), y.begin() + n2));

  // Phase 2 (GenDot lines 7-10): exponents linspace(b/2, 0, n - n2), y_i chosen so that the
  // running sum (exact, from the oracle) falls to about 2^e_i; the last entry is solved below.
  const std::int64_t N = n - n2;
  for (std::int64_t j = 0; j + 1 < N; ++j) {
    const std::int64_t i = n2 + j;
    const int e = static_cast<int>(std::floor(half_b * (1.0 - static_cast<double>(j) / static_cast<double>(N - 1)) + 0.5));
    const double kcur = S.hi() == 0 ? INFINITY : A / std::fabs(S.hi());
    // (A is accumulated in double: 2^-20 of slack keeps rounding from calling for cancellation
    // when kappa is already met, e.g. kappa = 1 with every product of one sign.)
    if (kcur * (1 + 0x1p-20) >= kappa) {
      random_pair(i, e);  // no cancellation wanted (small kappa): another random pair
    } else {
      const auto u = uniform01_pair(sxy, static_cast<std::uint64_t>(i));
      // x_i = +-[0.5, 1) 2^e (the paper's (2 rand - 1) 2^e, kept away from 0 so y_i stays bounded)
      x[i] = rn(std::ldexp((u[0] < 0.5 ? -1.0 : 1.0) * (0.5 + std::fabs(u[0] - 0.5)), e));
      const double target = std::ldexp(2.0 * u[1] - 1.0, e);  // (2 rand - 1) 2^e
      y[i] = rn((target - S.hi()) / x[i]);
    }
    S = add_product(S, x[i], y[i]);
    A += std::fabs(x[i] * y[i]);
  }

  // Last entry: the product that makes kappa exact (rounded once into the source format).
  {
    const std::int64_t i = n - 1;
    const double q = closing_product(S.hi(), A, kappa, A / static_cast<double>(n - 1));
    const auto u = uniform01_pair(st, static_cast<std::uint64_t>(i));
    if (q == 0) {
      x[i] = rn(std::ldexp(0.5 + u[0] / 2, 0));
      y[i] = 0.0;
    } else {
      const int ex = std::ilogb(q) / 2;
      x[i] = rn(std::ldexp((u[1] < 0.5 ? -1.0 : 1.0) * (0.5 + u[0] / 2), ex + 1));
      y[i] = rn(q / x[i]);
    }
  }

  // A random permutation (GenDot's last line): Fisher-Yates, j uniform in [0, i].
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(uniform_below(sperm, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i + 1)));
    std::swap(x[i], x[j]);
    std::swap(y[i], y[j]);
  }

  // Measure what was achieved with the exact oracle.
  const DotRef d = exact_dot(x.data(), y.data(), static_cast<std::size_t>(n));
  const double k_got = d.value.hi == 0 ? INFINITY : d.abs_sum / std::fabs(d.value.hi);
  p.achieved["requested_kappa"] = kappa;
  if (std::isfinite(k_got)) {
    p.achieved["kappa"] = k_got;
    p.achieved["kappa_min"] = p.achieved["kappa_median"] = p.achieved["kappa_max"] = k_got;
    p.achieved["kappa_ratio"] = k_got / kappa;
  }
  p.achieved["dot_exact_hi"] = d.value.hi;
  p.achieved["abs_sum"] = d.abs_sum;
}

/// Correction blocks needed: nred reductions, each shrinking the running sum by the source's
/// unit roundoff u = 2^-p, take |C1| <= kappa T down to T / (16 u) (docs/generators.md).
int cancel_gemm_blocks(double kappa, int p) {
  const double nred = std::ceil((det_log2(kappa) + 4 - p) / p);
  return 1 + static_cast<int>(std::max(0.0, nred));
}

void make_cancel_gemm(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const double kappa = ps.real("kappa");
  const int prec = src.precision();
  const std::int64_t m = ps.integer("m"), n = ps.integer("n"), k = ps.integer("k");
  const bool ident_in_a = m <= n;  // the identity blocks sit on the side of the smaller dimension
  const std::int64_t r = std::min(m, n);
  const int nblk = cancel_gemm_blocks(kappa, prec);
  const std::int64_t k1 = k - nblk * r;
  if (k1 < 1)
    ps.fail("field 'k' = " + ps.text("k") + " is too small for kappa = " + ps.text("kappa") + " with min(m, n) = " +
            std::to_string(r) + " and source " + std::string(src.tag) + ": need k >= " + std::to_string(nblk * r + 1) +
            " (" + std::to_string(nblk) + " correction blocks of min(m, n) columns)");
  if (det_log2(kappa) > -src.emin() - 4)
    ps.fail("kappa = " + ps.text("kappa") + " would need corrections below source " + std::string(src.tag) +
            "'s normal range: kappa must be <= 2^" + std::to_string(-src.emin() - 4));
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > 0x1p32)
    ps.fail("m * n * k above 2^32: the exact oracle would take too long to measure every kappa_ij");
  set_gemm_shape(ps, p);

  // Random part P (m x k1), R (k1 x n): |2u - 1| with signs + with probability (1 + kappa^-1/2) / 2,
  // so that E[sign(P_il R_lj)] = 1 / kappa.
  const double pplus = (1.0 + 1.0 / std::sqrt(kappa)) / 2;
  Matrix P(m, k1), R(k1, n);
  for (auto [mat, op] : {std::pair{&P, kOpA}, std::pair{&R, kOpB}}) {
    const Stream sv = stream_for(p.seed, kCancelGemmId, op), ss = stream_for(p.seed, kCancelGemmId, op + 1);
    fill_source(*mat, src, ctx, [&](std::uint64_t i) {
      const double v = std::fabs(2.0 * uniform01(sv, i) - 1.0);
      return bernoulli(ss, i, pplus) ? v : -v;
    });
  }
  // Corrections: per element (i, j), nblk values s_b(i, j) added to C_ij through the blocks; the
  // running sum starts from the exact expansion of (P R)_ij.
  std::vector<double> corr(static_cast<std::size_t>(nblk * m * n));
  auto cidx = [&](int blk, std::int64_t i, std::int64_t j) { return static_cast<std::size_t>((blk * m + i) * n + j); };
  const Stream st = stream_for(p.seed, kCancelGemmId, kShared);
  // (P R)_ij from the oracle's GEMM path; where hi + lo is not the whole exact value (tail != 0)
  // the element's expansion is peeled with exact_dot instead. Either way the expansion is the
  // same doubles: {hi, lo} is exactly what exact_expansion returns when the tail is 0.
  GemmRefOptions go;
  go.threads = ctx.threads;
  const GemmRef c1 = gemm_reference(P.view(), R.view(), go);
  parallel_for(static_cast<std::uint64_t>(m * n), 16, [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
    std::vector<double> row(static_cast<std::size_t>(k1)), col(static_cast<std::size_t>(k1));
    for (std::uint64_t e = b0; e < b1; ++e) {
      const auto i = static_cast<std::int64_t>(e) / n, j = static_cast<std::int64_t>(e) % n;
      for (std::int64_t l = 0; l < k1; ++l) {
        row[static_cast<std::size_t>(l)] = P(i, l);
        col[static_cast<std::size_t>(l)] = R(l, j);
      }
      double A = 0;  // sum_l |P_il R_lj| in double, in order l = 0, 1, ... (a guide, as in make_cancel)
      for (std::int64_t l = 0; l < k1; ++l) A += std::fabs(row[static_cast<std::size_t>(l)] * col[static_cast<std::size_t>(l)]);
      Expansion S;
      const RefValue& rv = c1.c[e];
      if (rv.tail == 0) {
        for (double v : {rv.hi, rv.lo})
          if (v != 0) S.parts.push_back(v);
      } else {
        S = exact_expansion(row, col);
      }
      for (int blk = 0; blk < nblk; ++blk) {
        double s;
        if (blk + 1 < nblk) {
          // Reduction: aim the running sum at +-T (1 + u), T = A / kappa; it lands within u |S|.
          const double T = A / kappa * (1.0 + uniform01(st, e * 64 + static_cast<std::uint64_t>(blk)));
          s = to_source(src, std::copysign(T, S.hi()) - S.hi());
        } else {
          s = to_source(src, closing_product(S.hi(), A, kappa, A / static_cast<double>(k1)));
        }
        corr[cidx(blk, i, j)] = s;
        S = add_product(S, s, 1.0);
        A += std::fabs(s);
      }
    }
  }, ctx.threads);

  // Assemble [P | blocks] and [R ; blocks], then permute k (the same permutation for A's
  // columns and B's rows leaves every C_ij's set of products unchanged).
  Matrix A0(m, k), B0(k, n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k1; ++l) A0(i, l) = P(i, l);
  for (std::int64_t l = 0; l < k1; ++l)
    for (std::int64_t j = 0; j < n; ++j) B0(l, j) = R(l, j);
  for (int blk = 0; blk < nblk; ++blk) {
    const std::int64_t off = k1 + blk * r;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        if (ident_in_a) {  // A: identity I_m; B: the m x n corrections
          if (j == 0) A0(i, off + i) = 1.0;
          B0(off + i, j) = corr[cidx(blk, i, j)];
        } else {  // B: identity I_n; A: the m x n corrections
          A0(i, off + j) = corr[cidx(blk, i, j)];
          if (i == 0) B0(off + j, j) = 1.0;
        }
      }
  }
  std::vector<std::int64_t> perm(static_cast<std::size_t>(k));
  for (std::int64_t l = 0; l < k; ++l) perm[l] = l;
  const Stream sp = stream_for(p.seed, kCancelGemmId, kShared + 1);
  for (std::int64_t l = k - 1; l > 0; --l)
    std::swap(perm[l], perm[uniform_below(sp, static_cast<std::uint64_t>(l), static_cast<std::uint64_t>(l + 1))]);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l) p.a(i, l) = A0(i, perm[l]);
  for (std::int64_t l = 0; l < k; ++l)
    for (std::int64_t j = 0; j < n; ++j) p.b(l, j) = B0(perm[l], j);

  // Measure every kappa_ij with the exact oracle.
  const GemmRef c = gemm_reference(p.a.view(), p.b.view(), go);
  std::vector<double> kap;
  std::int64_t zeros = 0;  // an exact zero C_ij has infinite kappa (never expected: counted, not hidden)
  for (std::size_t e = 0; e < c.c.size(); ++e) {
    if (c.c[e].hi == 0) ++zeros;
    else kap.push_back(c.abs_sum[e] / std::fabs(c.c[e].hi));
  }
  p.achieved["requested_kappa"] = kappa;
  p.achieved["correction_blocks"] = nblk;
  p.achieved["random_k"] = static_cast<double>(k1);
  p.achieved["c_exact_zero_count"] = static_cast<double>(zeros);
  if (kap.empty()) return;
  std::sort(kap.begin(), kap.end());
  p.achieved["kappa_min"] = kap.front();
  p.achieved["kappa_median"] = kap[(kap.size() - 1) / 2];
  p.achieved["kappa_max"] = kap.back();
  p.achieved["kappa_ratio_min"] = kap.front() / kappa;
  p.achieved["kappa_ratio_max"] = kap.back() / kappa;
}

}  // namespace

std::vector<Family> cancel_families() {
  std::vector<Family> v;
  {
    GeneratorInfo g;
    g.name = "cancel";
    g.dot = true;
    g.summary = "a dot product x^T y of length n with condition number kappa = sum|x_i y_i| / |x^T y| as requested";
    g.details = "GenDot: half the entries random with exponents up to log2(kappa)/2, the other half chosen so that the "
                "running sum (exact, from the oracle) cancels step by step; the last entry is solved in closed form so "
                "kappa is met up to one rounding; then a random permutation. kappa is measured with the exact oracle.";
    g.reference = "T. Ogita, S. M. Rump, S. Oishi, Accurate sum and dot product, SIAM J. Sci. Comput. 26(6), 2005, "
                  "Algorithm 6.1 (GenDot)";
    g.params.push_back(p_int("n", 100, 6, 1 << 20, "length of the dot product"));
    g.params.push_back(p_real("kappa", 1e8, 1, 1e300, "requested condition number (>= 1)"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_cancel});
  }
  {
    GeneratorInfo g;
    g.name = "cancel_gemm";
    g.summary = "C = A B in which every element C_ij has condition number kappa_ij = sum_l |a_il b_lj| / |c_ij| as requested";
    g.details = "A = [P | I | I ...], B = [R ; S_1 ; S_2 ...] (or the transpose arrangement when m > n), columns of A and "
                "rows of B then permuted together: P, R random, each correction block S_b pulls every running sum "
                "toward sum|.|/kappa (exact sums from the oracle), the last one solves kappa in closed form. Needs "
                "k >= blocks * min(m, n) + 1, blocks = 1 + max(0, ceil((log2 kappa + 4 - p) / p)).";
    g.reference = "this project's construction (docs/generators.md), after GenDot's step-wise cancellation";
    g.params = p_shape(16, 16, 256);
    g.params.push_back(p_real("kappa", 1e8, 1, 1e300, "requested condition number of every C_ij (>= 1)"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_cancel_gemm});
  }
  return v;
}

}  // namespace fpcert::detail
