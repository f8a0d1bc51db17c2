// generators/distributions.cpp — value distributions: uniform, normal, Ozaki's phi family, scaled integers.
#include <algorithm>
#include <cmath>

#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kUniformId = 1, kNormalId = 2, kOzakiId = 3, kScaledIntId = 4, kSignedZerosId = 15;

/// Values whose magnitudes all lie in [least, most] must be representable in the source: refused when
/// every one would saturate (least beyond the largest finite value) or round to zero (most below half
/// the smallest positive value): a problem of Inf or 0, not of what the spec asked (`what` names it).
void check_magnitudes(const ParsedSpec& ps, const Format& src, double least, double most, const std::string& what) {
  if (least > src.max_finite())
    ps.fail(what + " lies beyond source " + std::string(src.tag) + "'s largest finite value " + canonical_real(src.max_finite()) +
            ": every value would saturate; narrow it or widen the source");
  if (most < src.min_subnormal() / 2)
    ps.fail(what + " lies below half of source " + std::string(src.tag) + "'s smallest value " + canonical_real(src.min_subnormal()) +
            ": every value would round to zero");
}

void make_uniform(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const double lo = ps.real("lo"), hi = ps.real("hi");
  if (!(lo < hi)) ps.fail("field 'lo' (" + ps.text("lo") + ") must be below field 'hi' (" + ps.text("hi") + ")");
  const double w = hi - lo;
  if (!std::isfinite(w)) ps.fail("hi - lo overflows");
  // Bounds the source cannot hold would make every value saturate (beyond its largest finite value) or
  // round to zero (below half its smallest positive value): a problem of Inf or 0, not of [lo, hi].
  const Format& src = *p.source;
  const double top = std::max(std::fabs(lo), std::fabs(hi));
  if (top > src.max_finite())
    ps.fail("[" + ps.text("lo") + ", " + ps.text("hi") + "] reaches beyond source " + std::string(src.tag) +
            "'s largest finite value " + canonical_real(src.max_finite()) + ": its values would saturate; narrow the bounds or widen the source");
  if (top < src.min_subnormal() / 2)
    ps.fail("[" + ps.text("lo") + ", " + ps.text("hi") + "] lies below half of source " + std::string(src.tag) + "'s smallest value " +
            canonical_real(src.min_subnormal()) + ": every value would round to zero");
  set_gemm_shape(ps, p);
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream s = stream_for(p.seed, kUniformId, op);
    fill_source(*mat, *p.source, ctx, [&](std::uint64_t i) { return lo + w * uniform01(s, i); });
  }
}

void make_normal(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const double mean = ps.real("mean"), sd = ps.real("std");
  // No draw lies beyond 40 standard deviations: the polar method returns u sqrt(-2 ln q / q) with |u| <=
  // sqrt(q) and q >= 2^-104 (u, v have 53-bit grids), so |N| <= sqrt(2 * 104 * ln 2) < 12.1 (rng.hpp).
  const double far = std::fabs(mean) + 40 * sd, near = std::max(0.0, std::fabs(mean) - 40 * sd);
  if (std::isfinite(far)) check_magnitudes(ps, *p.source, near, far, "N(" + ps.text("mean") + ", " + ps.text("std") + "^2)");
  set_gemm_shape(ps, p);
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream s = stream_for(p.seed, kNormalId, op);
    fill_source(*mat, *p.source, ctx, [&](std::uint64_t i) { return mean + sd * normal(s, i); });
  }
}

void make_ozaki(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const double phi = ps.real("phi");
  set_gemm_shape(ps, p);
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream su = stream_for(p.seed, kOzakiId, op), sn = stream_for(p.seed, kOzakiId, op + 1);
    fill_source(*mat, *p.source, ctx, [&](std::uint64_t i) {
      return (uniform01(su, i) - 0.5) * det_exp(phi * normal(sn, i));
    });
  }
  p.achieved["requested_phi"] = phi;
}

void make_scaled_int(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const std::int64_t imax = ps.integer("imax");
  for (const char* key : {"a_scale", "b_scale"})
    check_magnitudes(ps, *p.source, ps.real(key), static_cast<double>(imax) * ps.real(key),
                     std::string(key) + " x [1, imax] = [" + ps.text(key) + ", " + canonical_real(static_cast<double>(imax) * ps.real(key)) + "]");
  set_gemm_shape(ps, p);
  for (auto [mat, op, key] : {std::tuple{&p.a, kOpA, "a_scale"}, std::tuple{&p.b, kOpB, "b_scale"}}) {
    const double c = ps.real(key);
    const Stream s = stream_for(p.seed, kScaledIntId, op);
    const auto span = static_cast<std::uint64_t>(2 * imax);
    fill_source(*mat, *p.source, ctx, [&](std::uint64_t i) {
      const auto d = static_cast<std::int64_t>(uniform_below(s, i, span));  // 0 .. 2 imax - 1
      const std::int64_t j = d < imax ? -(d + 1) : d - imax + 1;           // -imax..-1, 1..imax
      return static_cast<double>(j) * c;                                   // one double rounding, then RN into source
    });
  }
}

/// Uniform [-1, 1) with a fraction p of the entries replaced by +0 or -0 (sign drawn), and every
/// `zero_row`-th row of A (from row 1) entirely +-0, so that C has exact zero results of either sign
/// of contributions: a kernel must neither turn 0 * x into something else nor mishandle a sum of zeros.
void make_signed_zeros(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const double pz = ps.real("p");
  const std::int64_t zr = ps.integer("zero_row");
  set_gemm_shape(ps, p);
  const std::int64_t kcols = p.k;
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream sv = stream_for(p.seed, kSignedZerosId, op), sz = stream_for(p.seed, kSignedZerosId, op + 1),
                 ss = stream_for(p.seed, kSignedZerosId, op + 2);
    const bool is_a = op == kOpA;
    fill_source(*mat, *p.source, ctx, [&](std::uint64_t i) {
      const bool zero_line = is_a && zr > 0 && (static_cast<std::int64_t>(i) / kcols) % zr == 1;
      if (zero_line || bernoulli(sz, i, pz)) return bernoulli(ss, i, 0.5) ? -0.0 : 0.0;
      return -1 + 2 * uniform01(sv, i);
    });
  }
}

}  // namespace

std::vector<Family> distribution_families() {
  std::vector<Family> v;
  {
    GeneratorInfo g;
    g.name = "uniform";
    g.summary = "entries uniform in [lo, hi]: lo + (hi - lo) u, u from 53 random bits, rounded to the source format";
    g.details = "Values lie in [lo, hi] (rounding may reach hi).";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_real("lo", -1, -1e300, 1e300, "lower end"));
    g.params.push_back(p_real("hi", 1, -1e300, 1e300, "upper end (above lo)"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_uniform});
  }
  {
    GeneratorInfo g;
    g.name = "normal";
    g.summary = "entries mean + std N(0,1): Marsaglia's polar method with detmath's log, rounded to the source format";
    g.reference = "G. Marsaglia, T. A. Bray, A convenient method for generating normal variables, SIAM Review 6(3), 1964";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_real("mean", 0, -1e300, 1e300, "mean"));
    g.params.push_back(p_real("std", 1, 0, 1e300, "standard deviation"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_normal});
  }
  {
    GeneratorInfo g;
    g.name = "ozaki";
    g.summary = "entries (U(0,1) - 0.5) exp(phi N(0,1)): phi sets how widely exponents spread (0: uniform [-0.5, 0.5))";
    g.details = "The test matrices of the Ozaki scheme's papers; phi in {0, 0.5, 1, 2, 4} is the usual sweep.";
    g.reference = "K. Ozaki, T. Ogita, S. Oishi, S. M. Rump, Error-free transformations of matrix multiplication by "
                  "using fast routines of matrix multiplication and its applications, Numer. Algorithms 59(1), 2012";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_real("phi", 1, 0, 16, "exponent spread"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_ozaki});
  }
  {
    GeneratorInfo g;
    g.name = "scaled_int";
    g.summary = "small nonzero integers in [-imax, imax] times a constant that is not a binary fraction: every conversion rounds";
    g.details = "A entries are RN(j * a_scale), B entries RN(j * b_scale) (j * scale rounded in double, then to the source "
                "format); with the default scales almost no entry is exactly representable in f16, bf16 or the fp8 formats.";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_int("imax", 16, 1, 1 << 20, "largest integer magnitude"));
    g.params.push_back(p_real("a_scale", 0.013, 1e-300, 1e300, "constant multiplying A's integers"));
    g.params.push_back(p_real("b_scale", 0.017, 1e-300, 1e300, "constant multiplying B's integers"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_scaled_int});
  }
  {
    GeneratorInfo g;
    g.name = "signed_zeros";
    g.summary = "uniform [-1, 1) with a fraction p of the entries +0 or -0 (sign drawn), and every zero_row-th row of A "
                "(rows 1, 1 + zero_row, ...) all +-0: exact zero results and zero products of both signs";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_real("p", 0.25, 0, 1, "fraction of entries replaced by +-0"));
    g.params.push_back(p_int("zero_row", 4, 0, 1 << 30, "every zero_row-th row of A is all +-0 (0: none)"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_signed_zeros});
  }
  return v;
}

}  // namespace fpcert::detail
