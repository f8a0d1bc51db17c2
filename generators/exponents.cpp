// generators/exponents.cpp — exponent sweeps, exponent-span tiles and outliers.
#include <algorithm>
#include <cmath>

#include "base/parallel.hpp"
#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kExpUniformId = 5, kExpGaussId = 6, kExpSweepId = 7, kSpanId = 8, kOutlierId = 9;

/// A value sign * m * 2^e with m in [1, 2) carrying p - 1 random fraction bits (p = the source
/// precision): words 0-1 give the fraction, bit 0 of word 2 the sign.
double random_binade_value(const Stream& s, std::uint64_t i, int p, int e) {
  const auto w = draw_words(s, i);
  const std::uint64_t bits = ((static_cast<std::uint64_t>(w[1]) << 32) | w[0]) >> (64 - (p - 1));
  const double m = 1.0 + std::ldexp(static_cast<double>(bits), -(p - 1));  // exact
  return ((w[2] & 1u) ? -1.0 : 1.0) * std::ldexp(m, e);                  // exact in double
}

/// Lowest exponent of a nonzero value of f (its smallest subnormal).
int lowest_exponent(const Format& f) { return f.emin() - f.frac_bits; }

void check_exponent_range(const ParsedSpec& ps, const Format& src, int lo, int hi) {
  if (lo > hi) ps.fail("field 'emin' (" + std::to_string(lo) + ") must not exceed field 'emax' (" + std::to_string(hi) + ")");
  if (hi > src.emax())
    ps.fail("exponent " + std::to_string(hi) + " overflows source " + std::string(src.tag) + " (largest exponent " +
            std::to_string(src.emax()) + ")");
  if (lo < lowest_exponent(src))
    ps.fail("exponent " + std::to_string(lo) + " underflows source " + std::string(src.tag) + " (smallest subnormal 2^" +
            std::to_string(lowest_exponent(src)) + ")");
}

void make_exp_uniform(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const auto lo = static_cast<int>(ps.integer("emin")), hi = static_cast<int>(ps.integer("emax"));
  check_exponent_range(ps, src, lo, hi);
  set_gemm_shape(ps, p);
  const int prec = src.precision();
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream se = stream_for(p.seed, kExpUniformId, op), sm = stream_for(p.seed, kExpUniformId, op + 1);
    fill_source(*mat, src, ctx, [&](std::uint64_t i) {
      const int e = lo + static_cast<int>(uniform_below(se, i, static_cast<std::uint64_t>(hi - lo + 1)));
      return random_binade_value(sm, i, prec, e);
    });
  }
}

void make_exp_gauss(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const double mean = ps.real("mean"), sd = ps.real("std");
  set_gemm_shape(ps, p);
  const int prec = src.precision(), lo = lowest_exponent(src), hi = src.emax();
  if (mean < lo || mean > hi)
    ps.fail("field 'mean' = " + ps.text("mean") + " is outside source " + std::string(src.tag) + "'s exponents [" +
            std::to_string(lo) + ", " + std::to_string(hi) + "]");
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream se = stream_for(p.seed, kExpGaussId, op), sm = stream_for(p.seed, kExpGaussId, op + 1);
    fill_source(*mat, src, ctx, [&](std::uint64_t i) {
      const double x = std::nearbyint(mean + sd * normal(se, i));  // round half to even, exact
      const int e = static_cast<int>(std::clamp(x, static_cast<double>(lo), static_cast<double>(hi)));
      return random_binade_value(sm, i, prec, e);
    });
  }
}

void make_exp_sweep(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const Format& tgt = ps.format("target");
  const double mant = ps.real("mantissa");
  const int lo = lowest_exponent(tgt), hi = tgt.emax();
  if (std::ldexp(mant, hi) > src.max_finite())
    ps.fail("target " + std::string(tgt.tag) + "'s range (mantissa * 2^" + std::to_string(hi) + ") exceeds source " +
            std::string(src.tag) + "'s largest finite value");
  set_gemm_shape(ps, p);
  const auto count = static_cast<std::uint64_t>(hi - lo + 1);
  const Stream sa = stream_for(p.seed, kExpSweepId, kOpA), sb = stream_for(p.seed, kExpSweepId, kOpB);
  auto sweep = [&](const Stream& s) {
    return [&, s](std::uint64_t i) { return random_sign(s, i) * std::ldexp(mant, lo + static_cast<int>(i % count)); };
  };
  fill_source(p.a, src, ctx, sweep(sa));
  const std::string& b = ps.choice("b");
  if (b == "sweep") {
    fill_source(p.b, src, ctx, sweep(sb));
  } else {
    const auto n = static_cast<std::uint64_t>(p.n);
    fill(p.b, ctx, [&](std::uint64_t i) { return b == "ones" || i / n == i % n ? 1.0 : 0.0; });
  }
  p.achieved["sweep_exp_lo"] = lo;
  p.achieved["sweep_exp_hi"] = hi;
}

/// Exponent span of a tile: max floor(log2|x|) - min over its nonzero entries.
struct SpanRange {
  int lo = 1 << 20, hi = -(1 << 20);
  void add(double x) {
    if (x == 0) return;
    const int e = exponent_of(x);
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  int span() const { return hi - lo; }
};

void make_span(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const auto s = static_cast<int>(ps.integer("s"));
  const std::int64_t k = ps.integer("k");
  const std::int64_t len = ps.integer("block") == 0 ? k : ps.integer("block");
  if (k % len != 0) ps.fail("field 'block' = " + ps.text("block") + " does not divide field 'k' = " + ps.text("k"));
  if (s > 0 && len < 2) ps.fail("a tile needs at least 2 entries to span " + std::to_string(s) + " bits (field 'block')");
  const auto center = static_cast<int>(ps.integer("center")), shift = static_cast<int>(ps.integer("shift"));
  const int base = center - s / 2;
  if (base - shift < src.emin() || base + s + shift > src.emax())
    ps.fail("exponents [" + std::to_string(base - shift) + ", " + std::to_string(base + s + shift) +
            "] leave source " + std::string(src.tag) + "'s normal range [" + std::to_string(src.emin()) + ", " +
            std::to_string(src.emax()) + "] (fields s, center, shift)");
  set_gemm_shape(ps, p);
  const int prec = src.precision();
  const std::int64_t tiles_per_line = k / len;
  // A: tile (i, t) = A[i][t len .. t len + len - 1]; B: tile (j, t) = B[t len ..][j]. Entry number r
  // of a tile lies at index(line, t, r) in the row-major data.
  struct Op {
    Matrix* mat;
    std::uint32_t op;
    std::int64_t lines;
    bool by_row;
  };
  int tile_span_min = 1 << 20, tile_span_max = -(1 << 20);
  for (const Op& o : {Op{&p.a, kOpA, p.m, true}, Op{&p.b, kOpB, p.n, false}}) {
    const Stream sv = stream_for(p.seed, kSpanId, o.op), se = stream_for(p.seed, kSpanId, o.op + 1);
    const Stream st = stream_for(p.seed, kSpanId, o.op + 2);
    const std::int64_t cols = o.mat->cols;
    auto index = [&](std::int64_t line, std::int64_t t, std::int64_t r) {
      const std::int64_t kk = t * len + r;
      return static_cast<std::uint64_t>(o.by_row ? line * cols + kk : kk * cols + line);
    };
    const auto ntiles = static_cast<std::uint64_t>(o.lines * tiles_per_line);
    std::vector<int> spans(ntiles);
    parallel_for(ntiles, 64, [&](std::uint64_t b, std::uint64_t e, unsigned) {
      for (std::uint64_t tau = b; tau < e; ++tau) {
        const auto line = static_cast<std::int64_t>(tau) / tiles_per_line, t = static_cast<std::int64_t>(tau) % tiles_per_line;
        // Per tile: the shift of its base exponent and the two entries pinned to the ends.
        const auto w = draw_words(st, tau);
        const int e0 = base + (shift ? static_cast<int>((static_cast<std::uint64_t>(w[0]) * (2 * shift + 1)) >> 32) - shift : 0);
        const auto pos_lo = static_cast<std::int64_t>((static_cast<std::uint64_t>(w[1]) * static_cast<std::uint64_t>(len)) >> 32);
        auto pos_hi = static_cast<std::int64_t>((static_cast<std::uint64_t>(w[2]) * static_cast<std::uint64_t>(len - 1)) >> 32);
        if (pos_hi >= pos_lo) ++pos_hi;
        SpanRange sr;
        for (std::int64_t r = 0; r < len; ++r) {
          const std::uint64_t idx = index(line, t, r);
          int ex;
          if (r == pos_lo) ex = e0;
          else if (r == pos_hi && len > 1) ex = e0 + s;
          else ex = e0 + static_cast<int>(uniform_below(se, idx, static_cast<std::uint64_t>(s + 1)));
          const double v = random_binade_value(sv, idx, prec, ex);  // exact in src: normal, p bits
          o.mat->data[idx] = v;
          sr.add(v);
        }
        spans[tau] = sr.span();
      }
    }, ctx.threads);
    for (int sp : spans) {
      tile_span_min = std::min(tile_span_min, sp);
      tile_span_max = std::max(tile_span_max, sp);
    }
  }
  p.achieved["requested_span"] = s;
  p.achieved["tile_len"] = static_cast<double>(len);
  p.achieved["tile_span_min"] = tile_span_min;
  p.achieved["tile_span_max"] = tile_span_max;
}

void make_outlier(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& src = *p.source;
  const double frac = ps.real("p");
  const auto e = static_cast<int>(ps.integer("e"));
  if (e > src.emax() - 3)
    ps.fail("field 'e' = " + ps.text("e") + ": outliers 2^e * (values up to ~6) overflow source " + std::string(src.tag) +
            " (need e <= " + std::to_string(src.emax() - 3) + ")");
  const bool uniform = ps.choice("base") == "uniform";
  const std::string& ops = ps.choice("operands");
  set_gemm_shape(ps, p);
  for (auto [mat, op, name] : {std::tuple{&p.a, kOpA, "a"}, std::tuple{&p.b, kOpB, "b"}}) {
    const Stream sv = stream_for(p.seed, kOutlierId, op), so = stream_for(p.seed, kOutlierId, op + 1);
    const bool on = ops == "both" || ops == name;
    fill_source(*mat, src, ctx, [&](std::uint64_t i) {
      const double v = uniform ? 2.0 * uniform01(sv, i) - 1.0 : normal(sv, i);
      return on && bernoulli(so, i, frac) ? std::ldexp(v, e) : v;
    });
    if (on) {
      std::int64_t count = 0;
      for (std::uint64_t i = 0; i < mat->data.size(); ++i) count += bernoulli(so, i, frac);
      p.achieved[std::string("outlier_fraction_") + name] = static_cast<double>(count) / static_cast<double>(mat->data.size());
    }
  }
  p.achieved["requested_outlier_fraction"] = frac;
}

}  // namespace

std::vector<Family> exponent_families() {
  std::vector<Family> v;
  {
    GeneratorInfo g;
    g.name = "exp_uniform";
    g.summary = "entries +-m 2^e: exponent e uniform in [emin, emax], m in [1, 2) with random source-precision bits";
    g.details = "Exponents below the source's normal range give subnormals (rounded once).";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_int("emin", -60, -1074, 1023, "smallest exponent"));
    g.params.push_back(p_int("emax", 60, -1074, 1023, "largest exponent"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_exp_uniform});
  }
  {
    GeneratorInfo g;
    g.name = "exp_gauss";
    g.summary = "entries +-m 2^e with Gaussian exponents: e = round(mean + std N(0,1)), clamped to the source's exponents";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_real("mean", 0, -1074, 1023, "mean exponent"));
    g.params.push_back(p_real("std", 8, 0, 1000, "standard deviation of the exponent"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_exp_gauss});
  }
  {
    GeneratorInfo g;
    g.name = "exp_sweep";
    g.summary = "entries +-mantissa 2^e, e swept over a target format's whole range (smallest subnormal to largest binade)";
    g.details = "Entry i of A (row-major) has exponent lo + (i mod (hi - lo + 1)), lo = emin - frac_bits and hi = emax "
                "of the target; signs random. B repeats the sweep, or is all ones, or the identity.";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_format("target", "f16", {"f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "f64"},
                                "format whose exponent range is swept"));
    g.params.push_back(p_real("mantissa", 1.5, 1, 1.9999999999999998, "fixed significand in [1, 2)"));
    g.params.push_back(p_choice("b", "sweep", {"sweep", "ones", "identity"}, "what B holds"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_exp_sweep});
  }
  {
    GeneratorInfo g;
    g.name = "span";
    g.summary = "exponent-span tiles: every tile (a run of `block` consecutive k entries of a row of A or a column of B) "
                "spans exactly s binades";
    g.details = "In each tile one entry has exponent e0 and one e0 + s, the others uniform in between; e0 = center - "
                "floor(s/2) + a per-tile shift uniform in [-shift, shift]. block = 0: whole rows of A and columns of B. "
                "All entries are normal numbers of the source format with random significands.";
    g.reference = "the BF16-on-FP16 scaling experiments (DESIGN.md): spans 29, 30, 31, 40 around FP16's 30-binade range";
    g.params = p_shape(64, 64, 256);
    g.params.push_back(p_int("s", 30, 0, 250, "exponent span of every tile, in binades (bits)"));
    g.params.push_back(p_int("block", 0, 0, kMaxDim, "tile length along k (0: all of k); must divide k"));
    g.params.push_back(p_int("center", 0, -1000, 1000, "tiles start at exponent center - floor(s/2)"));
    g.params.push_back(p_int("shift", 0, 0, 1000, "per-tile random shift of the start exponent, in [-shift, shift]"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source("bf16"));
    v.push_back({g, make_span});
  }
  {
    GeneratorInfo g;
    g.name = "outlier";
    g.summary = "a base distribution with each entry independently made an outlier (scaled by 2^e) with probability p";
    g.params = p_shape(64, 64, 64);
    g.params.push_back(p_choice("base", "normal", {"normal", "uniform"}, "base values: N(0,1) or uniform [-1, 1)"));
    g.params.push_back(p_real("p", 0.01, 0, 1, "probability that an entry is an outlier"));
    g.params.push_back(p_int("e", 8, -1074, 1000, "outliers are base values times 2^e"));
    g.params.push_back(p_choice("operands", "both", {"both", "a", "b"}, "which operands get outliers"));
    g.params.push_back(p_seed());
    g.params.push_back(p_source());
    v.push_back({g, make_outlier});
  }
  return v;
}

}  // namespace fpcert::detail
