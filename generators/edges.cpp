// generators/edges.cpp — the edge table of a target format, and the `edges` family built on it.
#include "generators/edges.hpp"

#include <algorithm>
#include <cmath>

#include "generators/family.hpp"

namespace fpcert {
namespace {

/// Exactly representable and finite in f.
bool exact_in(const Format& f, double x) {
  if (!std::isfinite(x)) return false;
  const Rounded r = round_double(f, x, Rounder::nearest(f));
  return (r.flags & (kInexact | kOverflow)) == 0;
}

/// Magnitude code of a positive value exactly representable in f.
std::uint64_t code_of(const Format& f, double x) { return round_double(f, x, Rounder::nearest(f)).code; }

}  // namespace

std::vector<EdgeValue> edge_table(const Format& t, const Format& src) {
  // Entries in priority order (anchors, neighbours, midpoints, midpoint neighbours; within each,
  // the anchor order), so that where two coincide (e2m1's smallest normal is 1) the stable sort
  // and de-duplication below keep the most telling label.
  std::vector<EdgeValue> tiers[4];
  const double top_ulp = std::ldexp(1.0, t.emax() - t.frac_bits);  // spacing of the largest binade
  const struct {
    const char* name;
    double value;
  } anchors[] = {{"min_subnormal", t.min_subnormal()}, {"min_normal", t.min_normal()}, {"one", 1.0}, {"max_finite", t.max_finite()}};
  for (const auto& a : anchors) {
    const std::string n = a.name;
    const std::uint64_t c = code_of(t, a.value);
    const double prev = c > 0 ? to_double(t, c - 1) : 0.0;
    const double next = c < t.max_finite_code() ? to_double(t, c + 1) : a.value + top_ulp;
    tiers[0].push_back({n, a.value});
    if (prev > 0) tiers[1].push_back({n + "_prev", prev});
    tiers[1].push_back({n + "_next", next});
    // midpoints: exact (halving an exact sum of two neighbours), and their source neighbours
    // when the midpoint itself is a source value
    for (const auto& [label, mid] : {std::pair{n + "_mid_below", (prev + a.value) / 2}, std::pair{n + "_mid_above", (a.value + next) / 2}}) {
      tiers[2].push_back({label, mid});
      if (!exact_in(src, mid)) continue;
      const std::uint64_t mc = code_of(src, mid);
      tiers[3].push_back({label + "-", to_double(src, mc - 1)});
      if (mc + 1 <= src.max_finite_code()) tiers[3].push_back({label + "+", to_double(src, mc + 1)});
    }
  }
  std::vector<EdgeValue> r;
  for (const auto& tier : tiers)
    for (const auto& e : tier)
      if (e.value > 0 && exact_in(src, e.value)) r.push_back(e);
  std::stable_sort(r.begin(), r.end(), [](const EdgeValue& x, const EdgeValue& y) { return x.value < y.value; });
  r.erase(std::unique(r.begin(), r.end(), [](const EdgeValue& x, const EdgeValue& y) { return x.value == y.value; }), r.end());
  return r;
}

namespace detail {
namespace {

constexpr std::uint32_t kEdgesId = 10;

void make_edges(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& tgt = ps.format("target");
  std::vector<EdgeValue> table = edge_table(tgt, *p.source);
  if (ps.choice("overflow") == "exclude")  // only values the target holds after rounding (GEMM inputs for a kernel storing in it)
    std::erase_if(table, [&](const EdgeValue& e) { return (round_double(tgt, e.value, Rounder::nearest(tgt)).flags & kOverflow) != 0; });
  if (table.empty()) ps.fail("no edge value of target " + std::string(tgt.tag) + " is representable in source " + std::string(p.source->tag));
  set_gemm_shape(ps, p);
  auto edge = [&](const Stream& s) {
    return [&, s](std::uint64_t i) {
      return random_sign(s, i) * table[uniform_below(s, i, table.size())].value;  // words 0-1: index, word 3: sign
    };
  };
  fill(p.a, ctx, edge(stream_for(p.seed, kEdgesId, kOpA)));
  const std::string& b = ps.choice("b");
  if (b == "edges") {
    fill(p.b, ctx, edge(stream_for(p.seed, kEdgesId, kOpB)));
  } else {
    const auto n = static_cast<std::uint64_t>(p.n);
    fill(p.b, ctx, [&](std::uint64_t i) { return b == "ones" || i / n == i % n ? 1.0 : 0.0; });
  }
  p.achieved["edge_table_size"] = static_cast<double>(table.size());
}

}  // namespace

std::vector<Family> edge_families() {
  GeneratorInfo g;
  g.name = "edges";
  g.summary = "values at and around a target format's smallest subnormal, smallest normal, 1 and largest finite value, "
              "with the rounding midpoints between them and one source ulp either side";
  g.details = "Each entry is +-(an entry of edge_table(target, source)), table index and sign random; the table is in "
              "docs/generators.md. B holds edge values too, or all ones, or the identity (C = A).";
  g.reference = "IEEE 754-2019 section 4.3 (rounding) and 7.4 (overflow); OCP 8-bit FP specification for e4m3/e5m2";
  g.params = p_shape(64, 64, 64);
  g.params.push_back(p_format("target", "f16", {"f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "f64"},
                              "format whose edges the values probe"));
  g.params.push_back(p_choice("b", "edges", {"edges", "ones", "identity"}, "what B holds"));
  g.params.push_back(p_choice("overflow", "include", {"include", "exclude"},
                              "exclude: drop the entries that overflow the target under round-to-nearest (inputs a kernel "
                              "storing in the target can hold)"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_edges}};
}

}  // namespace detail
}  // namespace fpcert
