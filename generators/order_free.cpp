// generators/order_free.cpp — the `order_free` family: GEMM inputs whose every element has one value under
// every summation order (docs/generators.md, "Order-free values"; docs/bound_model.md, "Order-free elements").
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "generators/family.hpp"

namespace fpcert::detail {
namespace {

constexpr std::uint32_t kOrderFreeId = 17;

int ceil_log2(std::int64_t v) { return v <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(v - 1))); }

/// A random odd integer of exactly `bits` significant bits (1 for bits = 1).
double odd_of_bits(const Stream& s, std::uint64_t index, int bits) {
  if (bits <= 1) return 1;
  const std::uint64_t half = std::uint64_t{1} << (bits - 1);
  return static_cast<double>(half + 2 * uniform_below(s, index, half / 2 == 0 ? 1 : half / 2) + 1);
}

/// Splits the exponent sum `total` into (x, c): x in [xlo, xhi], c in [clo, chi], x as close to c as allowed.
std::optional<std::pair<int, int>> split_exponent(int total, int xlo, int xhi, int clo, int chi) {
  std::optional<std::pair<int, int>> best;
  for (int x = xlo; x <= xhi; ++x) {
    const int c = total - x;
    if (c < clo || c > chi) continue;
    if (!best || std::abs(x - c) < std::abs(best->first - best->second)) best = std::pair{x, c};
  }
  return best;
}

/// Exponents of the pair rows: A[i][0] = +-m1 2^(e1 - bits + 1) (top exponent e1), A[i][K-1] = +-m2 2^x2 (lowest
/// bit x2), B[0][j] = +-{1,2} 2^(c0 + d_j), B[K-1][j] = +-{1,2} 2^(cK + d_j), d_j in {0, 1}, with
/// (e1 + c0) - (x2 + cK) = p_acc + 2: the larger product's accumulator ulp is 2^2..2^4 times the smaller product's
/// lowest bit, so their sum (even one binade below the larger product, after cancellation) has a bit below its
/// ulp: every order rounds it, once.
struct PairPlan {
  int e1 = 0, c0 = 0, x2 = 0, cK = 0, bits2 = 1;
};
std::optional<PairPlan> plan_pairs(const Format& t, const Format& acc) {
  const int lo = t.emin(), hi = t.emax() - 1, bhi = t.emax() - 2;  // top exponents of A's values; B's scale (b <= 2^(c + 2))
  PairPlan p;
  p.bits2 = std::min(3, t.precision());
  const int d = acc.precision() + 2;
  // H = e1 + c0 and L = x2 + cK = H - d: both products inside the accumulator's normal range, p1 <= 2^(H + 3).
  const int hmin = std::max(2 * lo - p.bits2 + 1 + d, acc.emin() + d), hmax = std::min(hi + bhi, acc.emax() - 3);
  if (hmin > hmax) return std::nullopt;
  const int h = std::clamp((d + 1) / 2, hmin, hmax);
  const auto top = split_exponent(h, lo, hi, lo, bhi);
  const auto low = split_exponent(h - d, lo - p.bits2 + 1, hi - p.bits2 + 1, lo, bhi);
  if (!top || !low) return std::nullopt;
  std::tie(p.e1, p.c0) = *top;
  std::tie(p.x2, p.cK) = *low;
  return p;
}

void make_order_free(const ParsedSpec& ps, Problem& p, const GenContext& ctx) {
  const Format& t = ps.format("target");
  const Format& acc = ps.format("acc");
  const std::int64_t nnz_req = ps.integer("nnz");
  const bool exact_only = ps.choice("rows") == "exact";
  const Format& src = *p.source;
  if (t.precision() > src.precision() || t.emax() > src.emax() || t.emin() - t.frac_bits < src.emin() - src.frac_bits)
    ps.fail("target " + std::string(t.tag) + " holds values source " + std::string(src.tag) +
            " cannot (choose a source at least as wide as the target, e.g. f32)");
  set_gemm_shape(ps, p);
  const std::int64_t K = p.k, N = p.n;
  // Positions of the exact and tiny rows' nonzeros: [1, K-2] (columns 0 and K-1 belong to the pair rows).
  const bool pairs_fit = K >= 3;
  const std::int64_t dlo = pairs_fit ? 1 : 0, dhi = pairs_fit ? K - 2 : K - 1, dsize = dhi - dlo + 1;
  const std::int64_t nnz = std::min(nnz_req, dsize);
  // Sums of nnz products of b-bit values and B in {1, 2}: below 2^(b + 1 + ceil(log2 nnz)) times their lowest bit.
  const int slack = 1 + ceil_log2(nnz);
  const int bits = std::max(1, std::min(t.precision(), acc.precision() - slack));
  // Exact rows: top exponent in [elo, ehi], products and their sums in the accumulator's normal range.
  const int elo = std::max({t.emin(), acc.emin() + bits - 1, -6}), ehi = std::min({t.emax() - 1, acc.emax() - 2 - slack, 6});
  if (elo > ehi) ps.fail("no exponent of target " + std::string(t.tag) + " keeps sums of its values exact in " + std::string(acc.tag));
  const std::optional<PairPlan> pair = pairs_fit ? plan_pairs(t, acc) : std::nullopt;
  // Tiny rows: values at the larger of the two smallest-subnormal exponents, sums below the accumulator's
  // smallest normal (its subnormal range, where a flush to zero shows).
  const int xt = std::max(acc.emin() - acc.frac_bits, t.emin() - t.frac_bits);
  const int tiny_bits = std::min(t.precision(), acc.emin() - xt - slack);
  const bool tiny_fit = acc.subnormals && t.subnormals && tiny_bits >= 1;

  enum Kind { Exact, Pair, Tiny };
  auto kind_of = [&](std::int64_t i) {
    const int r = static_cast<int>(i % 3);
    if (r == 1 && pair && !exact_only) return Pair;
    if (r == 2 && tiny_fit && !exact_only) return Tiny;
    return Exact;
  };
  const Stream sa = stream_for(p.seed, kOrderFreeId, kOpA), spos = stream_for(p.seed, kOrderFreeId, kOpA + 1),
               sexp = stream_for(p.seed, kOrderFreeId, kOpA + 2), sb = stream_for(p.seed, kOrderFreeId, kOpB),
               sd = stream_for(p.seed, kOrderFreeId, kOpB + 1);
  std::int64_t counts[3] = {0, 0, 0};
  for (std::int64_t i = 0; i < p.m; ++i) {
    const Kind kd = kind_of(i);
    ++counts[kd];
    double* row = &p.a.data[static_cast<std::size_t>(i * K)];
    std::fill(row, row + K, 0.0);
    const auto base = static_cast<std::uint64_t>(i) * 256;
    if (kd == Pair) {
      row[0] = random_sign(sa, base) * std::ldexp(odd_of_bits(sa, base + 1, bits), pair->e1 - bits + 1);
      row[K - 1] = random_sign(sa, base + 2) * std::ldexp(odd_of_bits(sa, base + 3, pair->bits2), pair->x2);
      continue;
    }
    const int b = kd == Tiny ? tiny_bits : bits;
    const int low = kd == Tiny ? xt : elo + static_cast<int>(uniform_below(sexp, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(ehi - elo + 1))) - bits + 1;
    // nnz distinct positions, the first in the upper half of [dlo, dhi] (past any precision threshold a fault
    // keys on K), each next one drawn and moved to the next free position.
    for (std::int64_t s = 0; s < nnz; ++s) {
      const std::int64_t from = s == 0 ? std::max(dlo, (dlo + dhi + 1) / 2) : dlo;
      std::int64_t q = from + static_cast<std::int64_t>(uniform_below(spos, base + static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(dhi - from + 1)));
      while (row[q] != 0) q = q == dhi ? dlo : q + 1;
      row[q] = random_sign(sa, base + 8 + 2 * static_cast<std::uint64_t>(s)) * std::ldexp(odd_of_bits(sa, base + 9 + 2 * static_cast<std::uint64_t>(s), b), low);
    }
  }
  // B: +-1 or +-2 everywhere but the pair rows' rows 0 and K-1, which carry their column's scale.
  fill(p.b, ctx, [&](std::uint64_t x) {
    const auto q = static_cast<std::int64_t>(x) / N, j = static_cast<std::int64_t>(x) % N;
    const double v = random_sign(sb, x) * (uniform_below(sb, x + (std::uint64_t{1} << 40), 2) ? 2.0 : 1.0);
    if (!pair || (q != 0 && q != K - 1)) return v;
    const int d = static_cast<int>(uniform_below(sd, static_cast<std::uint64_t>(j), 2));
    return std::ldexp(v, (q == 0 ? pair->c0 : pair->cK) + d);
  });
  p.achieved["rows_exact"] = static_cast<double>(counts[Exact]);
  p.achieved["rows_pair"] = static_cast<double>(counts[Pair]);
  p.achieved["rows_tiny"] = static_cast<double>(counts[Tiny]);
  p.achieved["value_bits"] = bits;
}

}  // namespace

std::vector<Family> order_free_families() {
  GeneratorInfo g;
  g.name = "order_free";
  g.summary = "sparse rows of A whose every element of C has one value in every summation order: exact sums (rows i = 0 mod 3), "
              "one rounding of two products (i = 1 mod 3), exact sums in the accumulator's subnormal range (i = 2 mod 3)";
  g.details = "Values are exact in `target`; B holds +-1 and +-2. Exact rows: `nnz` nonzeros of b bits (b = min(p_target, "
              "p_acc - 1 - ceil(log2 nnz))) at a common exponent in columns 1..K-2, the first in the upper half: every partial "
              "sum in any order is exact in `acc`. Pair rows: A[i][0] and A[i][K-1] only, scaled so that the two products' sum "
              "has a bit below its accumulator ulp: every order rounds it once, the same sum. Tiny rows: as exact rows, at the "
              "larger of target's and acc's smallest-subnormal exponents, sums below acc's smallest normal. A row kind the "
              "formats cannot hold (pairs need K >= 3 and enough exponent range; tiny rows subnormals) becomes an exact row; "
              "achieved rows_exact, rows_pair, rows_tiny count them.";
  g.reference = "docs/bound_model.md, \"Order-free elements\"";
  g.params = p_shape(63, 64, 512);
  g.params.push_back(p_format("target", "f32", {"f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"},
                              "format every value is exact in (the kernel's storage format)"));
  g.params.push_back(p_format("acc", "f32", {"f32", "f16", "bf16"}, "the accumulator whose roundings the rows are built around"));
  g.params.push_back(p_int("nnz", 4, 1, 64, "nonzeros per exact or tiny row of A"));
  g.params.push_back(p_choice("rows", "all", {"all", "exact"},
                              "exact: every row an exact row (for kernels that keep only such values whole: split operands)"));
  g.params.push_back(p_seed());
  g.params.push_back(p_source());
  return {{g, make_order_free}};
}

}  // namespace fpcert::detail
