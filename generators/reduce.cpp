// generators/reduce.cpp — inputs of reductions (sums, dots, nrm2): sums with a prescribed condition number,
// values over a format's whole exponent range or in its subnormal tail, and the unscaled nrm2 trap
// (docs/generators.md, "Reductions"; the problem's shape is generators/reduce.hpp's).
#include "generators/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/parallel.hpp"
#include "generators/family.hpp"
#include "oracle/exact_sum.hpp"
#include "oracle/reduce/reduce_ref.hpp"

namespace fpcert {
namespace detail {
namespace {

constexpr std::uint32_t kSumCancelId = 18, kSumRangeId = 19, kNrm2TrapId = 20;

ParamInfo p_reduce_source() {
  return p_format("source", "f32", {"f32", "f16", "bf16", "e4m3", "e5m2"}, "format every input value is exactly representable in");
}
std::vector<ParamInfo> p_reduce_shape() {
  return {p_int("vectors", 16, 1, kMaxDim, "how many vectors (rows of A, or columns of B with axis=col)"),
          p_int("n", 1024, 1, kMaxDim, "length of each vector"),
          p_choice("axis", "row", {"row", "col"},
                   "row: A = vectors x n and B = ones (C = row sums); col: B = n x vectors and A = ones (C = column sums)")};
}

/// Allocates the problem: the vectors in A (row) or B (col), the other operand all ones.
void set_reduce_shape(const ParsedSpec& ps, Problem& p) {
  const std::int64_t v = ps.integer("vectors"), n = ps.integer("n");
  if (v * n > kMaxElements)
    ps.fail("vectors x n = " + std::to_string(v * n) + " exceeds the limit of " + std::to_string(kMaxElements) + " entries");
  const bool col = ps.choice("axis") == "col";
  p.k = n;
  p.m = col ? 1 : v;
  p.n = col ? v : 1;
  p.a = Matrix(p.m, n);
  p.b = Matrix(n, p.n);
  std::fill((col ? p.a : p.b).data.begin(), (col ? p.a : p.b).data.end(), 1.0);
  p.dot = false;
  p.achieved["reduce_axis"] = col ? 1 : 0;
  p.achieved["reduce_vectors"] = static_cast<double>(v);
  p.achieved["reduce_length"] = static_cast<double>(n);
}

/// Entry i of vector v.
double& entry(Problem& p, std::int64_t v, std::int64_t i) { return p.achieved.at("reduce_axis") == 0 ? p.a(v, i) : p.b(i, v); }

/// kappa = sum |x_i| / |sum x_i| of every vector, exactly (oracle/reduce: ExactSum): min, median, max, and
/// the count of vectors whose exact sum is 0 (kappa infinite) or beyond the source's largest finite value.
void measure_sums(Problem& p, const std::string& prefix = "") {
  const MatrixView vecs = reduce_vectors(p);
  const auto refs = reduce_rows(ReduceKind::Sum, vecs);
  std::vector<double> kap;
  std::int64_t zeros = 0, beyond = 0;
  for (const ReduceRef& r : refs) {
    if (r.value.hi == 0) {
      ++zeros;
      continue;
    }
    if (std::fabs(r.value.hi) > p.source->max_finite()) ++beyond;
    kap.push_back(r.abs_sum / std::fabs(r.value.hi));
  }
  p.achieved[prefix + "sum_zero_count"] = static_cast<double>(zeros);
  p.achieved[prefix + "sum_beyond_source_count"] = static_cast<double>(beyond);
  if (kap.empty()) return;
  std::sort(kap.begin(), kap.end());
  p.achieved["kappa_min"] = kap.front();
  p.achieved["kappa_median"] = kap[(kap.size() - 1) / 2];
  p.achieved["kappa_max"] = kap.back();
}

/// floor(a / 2) for any sign (C++ division truncates toward zero).
int floor_div2(int a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

int ceil_log2(std::int64_t n) {
  int k = 0;
  while ((std::int64_t{1} << k) < n) ++k;
  return k;
}

// ---- sum_cancel ----

/// The last value q that makes (A + |q|) / |S + q| = kappa (cancel.cpp's closing_product, for a sum): grow
/// |S| when it is too small for kappa, shrink it when too large; kappa = 1 adds a like-signed value.
double closing_value(double S, double A, double kappa, double like_sign_magnitude) {
  const double sg = S < 0 ? -1.0 : 1.0;
  if (kappa == 1.0) return sg * like_sign_magnitude;
  const double aS = std::fabs(S);
  if (aS == 0 || A > kappa * aS) return sg * ((A - kappa * aS) / (kappa - 1.0));
  return -sg * ((kappa * aS - A) / (kappa + 1.0));
}

/// One vector of length n (entries entry(v, 0..n-1)) whose sum has condition number about kappa: GenDot's
/// steps (Ogita, Rump, Oishi 2005, Algorithm 6.1) for a sum. The first ceil(n/2) values random with exponents
/// in [T - b, T] (b = log2 kappa; the first at T, the last at T - b), signs positive with probability
/// (1 + 1/kappa)/2 (so that E[sign] = 1/kappa); then values that pull the exact running sum (ExactSum) down to
/// about +-2^e, e falling linearly from T to T - b; the last value solves kappa in closed form; then a random
/// permutation. Each value is rounded into the source as it is made.
void cancel_vector(Problem& p, std::int64_t v, double kappa, int T, double b) {
  const Format& src = *p.source;
  const std::int64_t n = p.k;
  const std::uint64_t base = static_cast<std::uint64_t>(v * n);
  const Stream sv = stream_for(p.seed, kSumCancelId, kShared), se = stream_for(p.seed, kSumCancelId, kShared + 1);
  const Stream ss = stream_for(p.seed, kSumCancelId, kShared + 2), sp = stream_for(p.seed, kSumCancelId, kShared + 3);
  const double ppos = (1.0 + 1.0 / kappa) / 2;
  std::vector<double> x(static_cast<std::size_t>(n));
  auto random_value = [&](std::int64_t i, int e) {
    const double mag = std::ldexp(0.5 + uniform01(sv, base + static_cast<std::uint64_t>(i)) / 2, e + 1);  // [2^e, 2^(e+1))
    return to_source(src, bernoulli(ss, base + static_cast<std::uint64_t>(i), ppos) ? mag : -mag);
  };
  ExactSum S;
  double A = 0;  // sum |x_i| in double: a guide for the construction (what is achieved is measured exactly)
  auto hi = [&S] {
    ExactSum c = S;  // reading rounds in place: read a copy
    return c.round_nearest();
  };
  const std::int64_t n2 = (n + 1) / 2;
  for (std::int64_t i = 0; i < n2; ++i) {
    int e = T - static_cast<int>(std::floor(uniform01(se, base + static_cast<std::uint64_t>(i)) * b + 0.5));
    if (i == 0) e = T;
    if (i == n2 - 1 && i > 0) e = T - static_cast<int>(std::floor(b + 0.5));
    x[static_cast<std::size_t>(i)] = random_value(i, e);
  }
  for (std::int64_t i = 0; i < n2; ++i) {
    S.add(x[static_cast<std::size_t>(i)]);
    A += std::fabs(x[static_cast<std::size_t>(i)]);
  }
  const std::int64_t N = n - n2;  // >= 1 for n >= 2
  for (std::int64_t j = 0; j + 1 < N; ++j) {
    const std::int64_t i = n2 + j;
    const double frac = N > 1 ? static_cast<double>(j) / static_cast<double>(N - 1) : 1.0;
    const int e = T - static_cast<int>(std::floor(b * frac + 0.5));
    const double h = hi();
    const double kcur = h == 0 ? INFINITY : A / std::fabs(h);
    double xi;
    if (kcur * (1 + 0x1p-20) >= kappa) {
      xi = random_value(i, e);  // kappa already met: no cancellation wanted
    } else {
      const double u = uniform01(sv, base + static_cast<std::uint64_t>(i));
      xi = to_source(src, std::ldexp(2.0 * u - 1.0, e) - h);  // lands the running sum near (2u - 1) 2^e
    }
    x[static_cast<std::size_t>(i)] = xi;
    S.add(xi);
    A += std::fabs(xi);
  }
  if (n >= 2) {
    const double q = closing_value(hi(), A, kappa, A / static_cast<double>(n - 1));
    x[static_cast<std::size_t>(n - 1)] = to_source(src, q);
  }
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(uniform_below(sp, base + static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i + 1)));
    std::swap(x[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(j)]);
  }
  for (std::int64_t i = 0; i < n; ++i) entry(p, v, i) = x[static_cast<std::size_t>(i)];
}

void make_sum_cancel(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const double kappa = ps.real("kappa");
  const std::int64_t n = ps.integer("n");
  const double b = det_log2(kappa);
  // Exponents: values up to 2^(T+1), cancelling values up to the running sum (<= n 2^(T+1)): T <= emax - 1 -
  // ceil(log2 n) keeps them in range; the smallest exponent T - b must stay in the normal range (>= emin).
  const int tmax = src.emax() - 1 - ceil_log2(n);
  const int T = std::min(tmax, std::max(static_cast<int>(std::ceil(b / 2)), src.emin() + static_cast<int>(std::ceil(b))));
  if (T - static_cast<int>(std::ceil(b)) < src.emin())
    ps.fail("kappa = " + ps.text("kappa") + " needs " + std::to_string(static_cast<int>(std::ceil(b))) +
            " binades below the largest values, but source " + std::string(src.tag) + " with n = " + ps.text("n") +
            " has " + std::to_string(std::max(0, tmax - src.emin())) + " (log2 kappa <= emax - 1 - ceil(log2 n) - emin)");
  // Each cancelling step removes at most p - 1 leading bits of the running sum (its value is rounded to p
  // bits): n - ceil(n/2) - 1 steps must cover log2 kappa + log2 n bits.
  const std::int64_t steps = n - (n + 1) / 2 - 1;
  const double need = std::ceil((b + ceil_log2(n)) / (src.precision() - 1));
  if (kappa > 1 && static_cast<double>(steps) < need)
    ps.fail("field 'n' = " + ps.text("n") + " is too short to reach kappa = " + ps.text("kappa") + " with source " +
            std::string(src.tag) + ": need n >= " + std::to_string(2 * static_cast<std::int64_t>(need) + 3));
  set_reduce_shape(ps, p);
  const std::int64_t V = ps.integer("vectors");
  parallel_for(static_cast<std::uint64_t>(V), 1, [&](std::uint64_t b0, std::uint64_t b1, unsigned) {
    for (std::uint64_t v = b0; v < b1; ++v) cancel_vector(p, static_cast<std::int64_t>(v), kappa, T, b);
  }, ctx.threads);
  p.achieved["requested_kappa"] = kappa;
  measure_sums(p);
  if (p.achieved.count("kappa_min")) {
    p.achieved["kappa_ratio_min"] = p.achieved["kappa_min"] / kappa;
    p.achieved["kappa_ratio_max"] = p.achieved["kappa_max"] / kappa;
  }
}

// ---- sum_range ----

void make_sum_range(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const std::string& mode = ps.choice("mode");
  const int headroom = static_cast<int>(ps.integer("headroom"));
  const double normal_fraction = ps.real("normal_fraction");
  const bool positive = ps.choice("signs") == "positive";
  const int sub_lo = src.emin() - src.frac_bits;  // the smallest subnormal is 2^sub_lo
  const int top = src.emax() - headroom;
  if (top < src.emin() + 1) ps.fail("headroom = " + ps.text("headroom") + " leaves no normal binade of source " + std::string(src.tag));
  set_reduce_shape(ps, p);
  const Stream se = stream_for(p.seed, kSumRangeId, kShared), sm = stream_for(p.seed, kSumRangeId, kShared + 1);
  const Stream sk = stream_for(p.seed, kSumRangeId, kShared + 2);
  const std::int64_t n = p.k;
  Matrix& M = ps.choice("axis") == "row" ? p.a : p.b;
  const bool row = ps.choice("axis") == "row";
  fill_source(M, src, ctx, [&](std::uint64_t idx) {
    // idx is the storage index; the draw index is the (vector, entry) pair's, so both axes hold the same vectors.
    const std::uint64_t v = row ? idx / static_cast<std::uint64_t>(n) : idx % static_cast<std::uint64_t>(M.cols);
    const std::uint64_t i = row ? idx % static_cast<std::uint64_t>(n) : idx / static_cast<std::uint64_t>(M.cols);
    const std::uint64_t d = v * static_cast<std::uint64_t>(n) + i;
    int lo = sub_lo, hi = top;
    if (mode == "normal") lo = src.emin();
    if (mode == "subnormal_tail") {
      if (bernoulli(sk, d, normal_fraction)) {
        lo = src.emin();
        hi = std::min(top, src.emin() + src.precision());
      } else {
        hi = src.emin() - 1;
      }
    }
    const int e = lo + static_cast<int>(uniform_below(se, d, static_cast<std::uint64_t>(hi - lo + 1)));
    const auto w = draw_words(sm, d);
    const double mag = std::ldexp(1.0 + u53(w[0], w[1]), e);  // [2^e, 2^(e+1)), rounded into the source once
    return (positive || (w[3] & 1) == 0) ? mag : -mag;
  });
  measure_sums(p);
}

// ---- nrm2_trap ----

void make_nrm2_trap(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const Format& acc = ps.format("acc");
  const std::string& trap = ps.choice("trap");
  const double fraction = ps.real("fraction");
  const std::int64_t n = ps.integer("n");
  // Overflow: x^2 >= 2^(2 e) >= 2^(acc.emax + 1) exceeds acc's largest finite value (rounds to Inf, or
  // saturates), while ||x|| < sqrt(n) 2^(e_hi + 1) <= 2^min(emax) stays finite in the source and acc.
  const int ov_lo = (acc.emax() + 2) / 2;  // ceil((emax + 1) / 2)
  const int ov_hi = std::min(src.emax(), acc.emax()) - 1 - (ceil_log2(n) + 1) / 2;
  // Underflow: x^2 < 2^(2 e + 2) <= 2^(s_a - 1), half acc's smallest subnormal 2^s_a: rounds to 0 to nearest.
  const int sa = acc.emin() - acc.frac_bits;
  const int un_hi = floor_div2(sa - 1) - 1;  // 2 (un_hi + 1) <= s_a - 1
  const int un_lo = src.emin() - src.frac_bits;
  // fraction = 0 draws no trap value (uniform data in (-1, 1)): nothing to check, any source works.
  const bool want_over = fraction > 0 && trap != "underflow", want_under = fraction > 0 && trap != "overflow";
  if (want_over && ov_lo > ov_hi)
    ps.fail("source " + std::string(src.tag) + " with n = " + ps.text("n") + " cannot hold values whose squares overflow " +
            std::string(acc.tag) + " (need |x| >= 2^" + std::to_string(ov_lo) + ") while the norm stays below 2^" +
            std::to_string(std::min(src.emax(), acc.emax())) + " (largest exponent allowed: " + std::to_string(ov_hi) + ")");
  if (want_under && un_lo > un_hi)
    ps.fail("source " + std::string(src.tag) + " has no value whose square underflows " + std::string(acc.tag) +
            " (need |x| < 2^" + std::to_string(un_hi + 1) + ")");
  set_reduce_shape(ps, p);
  const Stream sk = stream_for(p.seed, kNrm2TrapId, kShared), se = stream_for(p.seed, kNrm2TrapId, kShared + 1);
  const Stream sm = stream_for(p.seed, kNrm2TrapId, kShared + 2);
  const bool row = ps.choice("axis") == "row";
  Matrix& M = row ? p.a : p.b;
  fill_source(M, src, ctx, [&](std::uint64_t idx) {
    const std::uint64_t v = row ? idx / static_cast<std::uint64_t>(n) : idx % static_cast<std::uint64_t>(M.cols);
    const std::uint64_t i = row ? idx % static_cast<std::uint64_t>(n) : idx / static_cast<std::uint64_t>(M.cols);
    const std::uint64_t d = v * static_cast<std::uint64_t>(n) + i;
    const auto w = draw_words(sm, d);
    const double sign = (w[3] & 1) ? -1.0 : 1.0;
    const double f = u53(w[0], w[1]);
    if (!bernoulli(sk, d, fraction)) return sign * (2.0 * f - 1.0);  // an ordinary value in (-1, 1)
    // mixed: a third each over the overflow range, ordinary binades [-1, 1], the underflow range.
    int lo = ov_lo, hi = ov_hi;
    const std::uint64_t pick = trap == "mixed" ? (w[2] % 3) : (trap == "overflow" ? 0 : 2);
    if (pick == 1) {
      lo = -1;
      hi = 1;
    } else if (pick == 2) {
      lo = un_lo;
      hi = un_hi;
    }
    const int e = lo + static_cast<int>(uniform_below(se, d, static_cast<std::uint64_t>(hi - lo + 1)));
    return sign * std::ldexp(1.0 + f, e);
  });
  // What the data do to an unscaled nrm2 in acc: vectors whose sum of squares exceeds acc's largest
  // finite value, entries whose square underflows to 0 there, and the largest norm (exact).
  const MatrixView vecs = reduce_vectors(p);
  const auto norms = reduce_rows(ReduceKind::Nrm2, vecs, nullptr, Nrm2Specials::InfWins, ctx.threads);
  std::int64_t over = 0, under = 0;
  double max_norm = 0, max_sumsq = 0;
  for (const ReduceRef& r : norms) {
    over += r.abs_sum > acc.max_finite();
    max_norm = std::max(max_norm, r.value.hi);
    max_sumsq = std::max(max_sumsq, r.abs_sum);
  }
  for (double x : M.data) under += x != 0 && x * x < acc.min_subnormal() / 2;  // x^2 exact in double
  p.achieved["acc_max_finite"] = acc.max_finite();
  p.achieved["sumsq_overflow_vectors"] = static_cast<double>(over);
  p.achieved["square_underflow_entries"] = static_cast<double>(under);
  p.achieved["nrm2_max"] = max_norm;
  p.achieved["sumsq_max"] = max_sumsq;
  measure_sums(p);
}

}  // namespace

std::vector<Family> reduce_families() {
  std::vector<Family> v;
  {
    GeneratorInfo g;
    g.name = "sum_cancel";
    g.summary = "vectors whose sums have condition number kappa = sum|x_i| / |sum x_i| as requested";
    g.details = "Per vector, GenDot's steps for a sum: half the values random with exponents spread over log2(kappa) binades "
                "and a sign bias, the other half pulling the exact running sum (ExactSum) down binade by binade, the last "
                "value solving kappa in closed form, then a random permutation. kappa of every vector measured exactly.";
    g.reference = "after T. Ogita, S. M. Rump, S. Oishi, Accurate sum and dot product, SIAM J. Sci. Comput. 26(6), 2005, "
                  "Algorithm 6.1 (GenDot), for sums (docs/generators.md, \"Reductions\")";
    g.params = p_reduce_shape();
    g.params.push_back(p_real("kappa", 1e6, 1, 1e300, "requested condition number of every vector's sum (>= 1)"));
    g.params.push_back(p_seed());
    g.params.push_back(p_reduce_source());
    v.push_back({g, make_sum_cancel});
  }
  {
    GeneratorInfo g;
    g.name = "sum_range";
    g.summary = "vectors with exponents over the source format's whole range, its normal range, or a subnormal tail";
    g.details = "Entry = +-(1 + u) 2^e rounded into the source, e uniform: full: from the smallest subnormal's exponent to "
                "emax - headroom; normal: from emin; subnormal_tail: subnormals, except a fraction normal_fraction of small "
                "normals (emin .. emin + p). Sums can pass the source's largest value (counted).";
    g.reference = "this project (docs/generators.md, \"Reductions\")";
    g.params = p_reduce_shape();
    g.params.push_back(p_choice("mode", "full", {"full", "normal", "subnormal_tail"}, "exponent range"));
    g.params.push_back(p_int("headroom", 0, 0, 64, "binades kept free below the largest finite value (log2 n keeps sums finite)"));
    g.params.push_back(p_real("normal_fraction", 0.01, 0, 1, "subnormal_tail: fraction of entries that are small normals"));
    g.params.push_back(p_choice("signs", "random", {"random", "positive"}, "signs of the entries"));
    g.params.push_back(p_seed());
    g.params.push_back(p_reduce_source());
    v.push_back({g, make_sum_range});
  }
  {
    GeneratorInfo g;
    g.name = "nrm2_trap";
    g.summary = "vectors whose sum of squares overflows (or underflows) the accumulator while the norm is an ordinary value";
    g.details = "A fraction of the entries has |x| >= 2^ceil((emax_acc + 1) / 2) (overflow: x^2 passes acc's range, the norm "
                "stays below 2^min(emax)) or |x| < 2^(floor((s_acc - 1) / 2)) (underflow: x^2 below half acc's smallest "
                "subnormal 2^s_acc), or a third each of big, ordinary and tiny (mixed, Blue's three accumulators); the rest "
                "uniform in (-1, 1). What an unscaled nrm2 in acc would meet is counted.";
    g.reference = "the unscaled nrm2 trap: J. L. Blue, A portable Fortran program to find the Euclidean norm of a vector, "
                  "ACM TOMS 4(1), 1978; E. Anderson, Algorithm 978: Safe scaling in the Level 1 BLAS, ACM TOMS 44(1), 2017";
    g.params = p_reduce_shape();
    g.params.push_back(p_choice("trap", "overflow", {"overflow", "underflow", "mixed"}, "which trap"));
    g.params.push_back(p_format("acc", "f32", {"f32", "f16", "bf16"}, "the accumulator whose range the squares leave"));
    g.params.push_back(p_real("fraction", 1, 0, 1, "fraction of entries in the trap's range"));
    g.params.push_back(p_seed());
    g.params.push_back(p_reduce_source());
    v.push_back({g, make_nrm2_trap});
  }
  return v;
}

}  // namespace detail

bool is_reduce_problem(const Problem& p) { return p.achieved.count("reduce_axis") != 0; }

MatrixView reduce_vectors(const Problem& p) {
  if (!is_reduce_problem(p)) throw std::invalid_argument("reduce_vectors: '" + p.spec + "' is not a reduction problem");
  return p.achieved.at("reduce_axis") == 0 ? p.a.view() : transposed(p.b.view());
}

}  // namespace fpcert
