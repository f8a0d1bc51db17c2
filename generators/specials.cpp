// generators/specials.cpp — the `specials` family: ordinary A and B with special values planted at chosen
// positions (+-Inf, NaN, +-largest finite of a target format) and dot products whose partial sums overflow an
// accumulator although their exact sum is finite (docs/generators.md, "Special values").
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kSpecialsId = 16;

/// What one planted position holds. InfPair plants +Inf and -Inf in the same row of A (column of B).
enum class Kind { PosInf, NegInf, NaN, PosMax, NegMax, InfPair };

bool is_inf_kind(Kind k) { return k == Kind::PosInf || k == Kind::NegInf || k == Kind::InfPair; }

/// `count` distinct integers of [0, n), in draw order: a partial Fisher-Yates shuffle (draw t swaps position
/// t with t + uniform_below(n - t)), its swaps kept in a map so that n may be large.
std::vector<std::int64_t> pick_distinct(const Stream& s, std::int64_t n, std::int64_t count) {
  std::map<std::int64_t, std::int64_t> moved;
  auto at = [&](std::int64_t i) {
    const auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  std::vector<std::int64_t> r;
  for (std::int64_t t = 0; t < count; ++t) {
    const auto j = t + static_cast<std::int64_t>(uniform_below(s, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(n - t)));
    const std::int64_t vt = at(t), vj = at(j);
    moved[t] = vj;
    moved[j] = vt;
    r.push_back(vj);
  }
  return r;
}

void make_specials(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& tgt = ps.format("target");
  const Format& src = *p.source;
  set_gemm_shape(ps, p);
  // Ordinary values: uniform [-1, 1) in the source format, as the `uniform` family draws them.
  for (auto [mat, op] : {std::pair{&p.a, kOpA}, std::pair{&p.b, kOpB}}) {
    const Stream s = stream_for(p.seed, kSpecialsId, op);
    fill_source(*mat, src, ctx, [&](std::uint64_t i) { return -1.0 + 2.0 * uniform01(s, i); });
  }

  // The kinds both the target (the kernel's storage) and the source can hold, in this order.
  std::vector<Kind> kinds;
  const bool inf = tgt.has_inf() && src.has_inf(), nan = tgt.has_nan() && src.has_nan();
  const double mx = tgt.max_finite();
  const bool max_ok = exactly_representable(src, mx);
  if (inf) kinds.insert(kinds.end(), {Kind::PosInf, Kind::NegInf});
  if (nan) kinds.push_back(Kind::NaN);
  if (max_ok) kinds.insert(kinds.end(), {Kind::PosMax, Kind::NegMax});
  if (inf && p.k >= 2) kinds.push_back(Kind::InfPair);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  auto value = [&](Kind k) {
    switch (k) {
      case Kind::PosInf:
      case Kind::InfPair: return kInf;
      case Kind::NegInf: return -kInf;
      case Kind::NaN: return kNaN;
      case Kind::PosMax: return mx;
      case Kind::NegMax: return -mx;
    }
    return 0.0;
  };

  // Overflowing partial sums: P = a b = 1.5 2^(emax - 1) of the accumulator, a = 1.5 2^ea, b = 2^eb. Products
  // k0, k0+1, k0+2 are +P and k0+3, k0+4 are -P: 2P = 1.5 2^emax is below the largest finite value (2 - 2^-f) 2^emax,
  // 3P = 1.125 2^(emax+1) beyond it, so a sequential sum overflows to +Inf at k0+2 while the exact sum, P plus
  // K - 5 ordinary products, is finite.
  std::int64_t ov = 0;
  double oa = 0, ob = 0;
  if (const std::string& acc_tag = ps.choice("acc"); acc_tag != "none" && p.k >= 5) {
    const Format& acc = *find_format(acc_tag);
    const int ea = (acc.emax() - 1) / 2, eb = acc.emax() - 1 - ea;
    oa = std::ldexp(1.5, ea);
    ob = std::ldexp(1.0, eb);
    for (const Format* f : {&tgt, &src})
      if (!exactly_representable(*f, oa) || !exactly_representable(*f, ob)) oa = 0;  // the operands cannot reach the range
    if (oa > 0) ov = std::min({ps.integer("overflow"), p.m, p.n});
  }
  const std::int64_t nrows = kinds.empty() ? 0 : std::min(ps.integer("rows"), p.m - ov);
  const std::int64_t ncols = kinds.empty() ? 0 : std::min(ps.integer("cols"), p.n - ov);
  const std::vector<std::int64_t> rows = pick_distinct(stream_for(p.seed, kSpecialsId, kOpA + 1), p.m, ov + nrows);
  const std::vector<std::int64_t> cols = pick_distinct(stream_for(p.seed, kSpecialsId, kOpB + 1), p.n, ov + ncols);
  const std::set<std::int64_t> ov_rows(rows.begin(), rows.begin() + ov), ov_cols(cols.begin(), cols.begin() + ov);

  // Overflow elements first: row rows[e] of A and column cols[e] of B, products k0 .. k0 + 4.
  const Stream so = stream_for(p.seed, kSpecialsId, kShared);
  for (std::int64_t e = 0; e < ov; ++e) {
    const auto k0 = static_cast<std::int64_t>(uniform_below(so, static_cast<std::uint64_t>(e), static_cast<std::uint64_t>(p.k - 4)));
    for (std::int64_t q = 0; q < 5; ++q) {
      p.a(rows[static_cast<std::size_t>(e)], k0 + q) = oa;
      p.b(k0 + q, cols[static_cast<std::size_t>(e)]) = q < 3 ? ob : -ob;
    }
  }
  // Special rows of A and columns of B: one kind each, cycling through the kinds (B starts one kind later, so
  // that a row's and a column's specials differ where they meet), at a random position along K. Beside an
  // infinity, a zero in the other operand at the same k (in a random row or column that is not an overflow
  // one) makes one Inf * 0 = NaN element.
  const auto nk = static_cast<std::int64_t>(kinds.size());
  const Stream sk = stream_for(p.seed, kSpecialsId, kShared + 1), sz = stream_for(p.seed, kSpecialsId, kShared + 2);
  auto plant = [&](bool in_a, std::int64_t s, std::int64_t line) {
    const Kind kind = kinds[static_cast<std::size_t>((s + (in_a ? 0 : 1)) % nk)];
    const std::uint64_t draw = static_cast<std::uint64_t>(2 * s + (in_a ? 0 : 1));
    const auto kp = static_cast<std::int64_t>(uniform_below(sk, draw, static_cast<std::uint64_t>(p.k)));
    auto put = [&](std::int64_t kk, double v) { (in_a ? p.a(line, kk) : p.b(kk, line)) = v; };
    put(kp, value(kind));
    if (kind == Kind::InfPair) put((kp + 1 + static_cast<std::int64_t>(uniform_below(sk, draw + (1ULL << 40), static_cast<std::uint64_t>(p.k - 1)))) % p.k, -kInf);
    if (is_inf_kind(kind)) {
      const std::int64_t other = in_a ? p.n : p.m;
      const auto z = static_cast<std::int64_t>(uniform_below(sz, draw, static_cast<std::uint64_t>(other)));
      if (!(in_a ? ov_cols : ov_rows).count(z)) (in_a ? p.b(kp, z) : p.a(z, kp)) = 0.0;
    }
  };
  for (std::int64_t s = 0; s < nrows; ++s) plant(true, s, rows[static_cast<std::size_t>(ov + s)]);
  for (std::int64_t s = 0; s < ncols; ++s) plant(false, s, cols[static_cast<std::size_t>(ov + s)]);

  std::int64_t n_inf = 0, n_nan = 0, n_max = 0;
  for (const Matrix* x : {&p.a, &p.b})
    for (double v : x->data) {
      n_inf += std::isinf(v);
      n_nan += std::isnan(v);
      n_max += std::fabs(v) == mx;
    }
  p.achieved["special_inf_inputs"] = static_cast<double>(n_inf);
  p.achieved["special_nan_inputs"] = static_cast<double>(n_nan);
  p.achieved["special_max_inputs"] = static_cast<double>(n_max);
  p.achieved["overflow_elements"] = static_cast<double>(ov);
}

}  // namespace

std::vector<Family> special_families() {
  GeneratorInfo g;
  g.name = "specials";
  g.summary = "uniform [-1, 1) A and B with special values planted: +-Inf, NaN, +-largest finite of a target format, Inf "
              "beside a zero (Inf * 0), +Inf and -Inf in one line, and dot products whose partial sums overflow an "
              "accumulator while their exact sum is finite";
  g.details = "`rows` rows of A and `cols` columns of B hold one special each (kinds cycled: +Inf, -Inf, NaN, +max, -max, "
              "+Inf with -Inf; only those the target and the source hold), at a random k; beside each infinity a zero in the "
              "other operand at the same k. `overflow` elements C_ij get products +P, +P, +P, -P, -P (P = 1.5 2^(emax-1) of "
              "`acc`) at five consecutive k: 2P fits the accumulator, 3P does not. The reference gives each element the "
              "IEEE result (docs/suites.md, \"values.special\").";
  g.reference = "IEEE 754-2019 sections 6.1 (infinity arithmetic), 6.2 (NaN propagation), 7.2 (invalid: Inf - Inf, 0 * Inf), "
                "7.4 (overflow)";
  g.params = p_shape(32, 32, 64);
  g.params.push_back(p_format("target", "f32", {"f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "f64"},
                              "the storage format whose specials (Inf, NaN where it has them) and largest finite value are planted"));
  g.params.push_back(p_choice("acc", "f32", {"f32", "f16", "bf16", "f64", "none"},
                              "the accumulator whose range the overflow elements exceed in their partial sums (none: no overflow "
                              "elements; left out where the target or source cannot hold the operands)"));
  g.params.push_back(p_int("rows", 4, 0, kMaxDim, "rows of A with a special value"));
  g.params.push_back(p_int("cols", 4, 0, kMaxDim, "columns of B with a special value"));
  g.params.push_back(p_int("overflow", 2, 0, 64, "elements of C whose partial sums overflow acc"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_specials, true}};
}

}  // namespace fpcert::detail
