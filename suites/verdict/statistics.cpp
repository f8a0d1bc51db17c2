// suites/verdict/statistics.cpp — the round-to-nearest bias test (constants derived in docs/bound_model.md).
#include "suites/verdict/statistics.hpp"

#include <algorithm>
#include <cmath>

#include "base/parallel.hpp"

namespace fpcert {

namespace {

bool nearest(Rounding r) { return r == Rounding::NearestEven || r == Rounding::NearestAway; }
bool unbiased(Rounding r) { return nearest(r) || r == Rounding::Stochastic; }
/// The largest relative error of one unbiased rounding into f: u to nearest, 2u stochastic.
double unit(const Format& f, Rounding r) { return nearest(r) ? f.unit_roundoff() : 2 * f.unit_roundoff(); }
double eta(const Format& f, Rounding r) { return nearest(r) ? f.min_subnormal() / 2 : f.min_subnormal(); }

/// Roundings into the accumulator (and the promotion format) one element's error is the sum of, in the
/// declared order; the worst valid order when it is unknown (a tree with rounded leaves: 2K).
double roundings(const KernelTraits& t, std::int64_t k) {
  const SummationOrder& o = t.sum_order;
  const double K = static_cast<double>(std::max<std::int64_t>(k, 1));
  const double nprom = t.promote_every > 0 ? std::ceil(K / t.promote_every) : 0;
  const bool leaves_exact = t.exact_products && t.a_operand->precision() + t.b_operand->precision() <= t.acc->precision();
  switch (o.kind) {
    case OrderKind::Sequential: return (o.step == StepKind::Fma ? K : 2 * K) + nprom;
    case OrderKind::BlockedK:
      if (o.inner == Combine::Exact) return 2 * std::ceil(K / o.block) + nprom;
      return (o.inner == Combine::Sequential && o.step == StepKind::Fma ? K : 2 * K) + std::ceil(K / o.block);
    case OrderKind::SplitK: return (o.step == StepKind::Fma ? K : 2 * K) + o.splits;
    case OrderKind::Pairwise: return 2 * K;
    case OrderKind::TensorCoreBlock: {
      const int f = o.block_model.fused_length > 0 ? o.block_model.fused_length : std::max(1, o.block);
      return std::ceil(K / f) + nprom;
    }
    case OrderKind::SplitProducts: return 8 * K + 8;  // at most 9 terms of K fma steps and their merge
    case OrderKind::Pow2Scaled:
    case OrderKind::Ozaki2:
    case OrderKind::Unknown: break;
  }
  return (leaves_exact ? K : 2 * K) + nprom;
}

}  // namespace

std::string bias_test_unavailable(const KernelTraits& t, const EnvelopeModel& e) {
  if (!unbiased(t.acc_rounding))
    return "the accumulator rounds " + std::string(to_string(t.acc_rounding)) + ": the kernel claims a bias, nothing to test";
  if (t.sum_order.kind == OrderKind::TensorCoreBlock && !unbiased(t.sum_order.block_model.block_rounding))
    return "tensor-core blocks round " + std::string(to_string(t.sum_order.block_model.block_rounding));
  const bool narrowed = e.u_oa > 0 || e.u_ob > 0;
  if (narrowed && !unbiased(t.input_rounding))
    return "the operands are narrowed with " + std::string(to_string(t.input_rounding)) + ": a declared bias";
  if (!e.exists) return "the envelope does not exist at this K";
  return {};
}

BiasTest rn_bias_test(const KernelTraits& t, const EnvelopeModel& e, std::int64_t m, std::int64_t n, std::int64_t k,
                      const std::vector<double>& a_op, const std::vector<double>& b_op, std::span<const RefValue> ref_op,
                      std::span<const double> abs_op, const std::vector<double>& got) {
  BiasTest r;
  r.threshold = std::sqrt(2 * std::log(1 / kStatisticalAlpha));
  const double R = roundings(t, k);
  double u = unit(*t.acc, t.acc_rounding), et = eta(*t.acc, t.acc_rounding);
  if (t.promote_every > 0 && t.promote_format) {
    u = std::max(u, unit(*t.promote_format, Rounding::NearestEven));
    et = std::max(et, eta(*t.promote_format, Rounding::NearestEven));
  }
  const double up = t.exact_products ? 0.0 : unit(*t.product_format, t.acc_rounding);
  const double K = static_cast<double>(std::max<std::int64_t>(k, 1));
  const auto mn = static_cast<std::size_t>(m * n);
  // Per element: the bound c on one rounding's error, sigma, and d / sigma.
  std::vector<double> c(mn, 0.0), sigma(mn, 0.0), d(mn, 0.0);
  std::vector<std::uint8_t> use(mn, 0);
  for (std::size_t x = 0; x < mn; ++x) {
    const RefValue& rv = ref_op[x];
    if (!std::isfinite(got[x]) || !std::isfinite(rv.hi) || rv.hi == 0 || !std::isfinite(abs_op[x])) continue;
    c[x] = u * (1 + e.coef) * abs_op[x] + et;
    const double E = e.coef * abs_op[x] + e.eta_arith;
    const double cout = e.out_unit * (std::fabs(rv.hi) + E) + e.eta_out;
    const double cp = up * abs_op[x];
    // Operand narrowing: 2K more roundings, one per operand use, each within u_A |a_k b_k| (sum of squares
    // at most (u_A abs')^2).
    const double cop2 = (e.u_oa * e.u_oa + e.u_ob * e.u_ob) * abs_op[x] * abs_op[x];
    sigma[x] = std::sqrt(R * c[x] * c[x] + cout * cout + K * cp * cp + cop2);
    if (!(sigma[x] > 0)) continue;
    const double err = (got[x] - rv.hi) - rv.lo;
    d[x] = rv.hi > 0 ? -err : err;
    use[x] = 1;
  }
  double sum = 0, worst = -INFINITY;
  std::int64_t toward = 0;
  for (std::size_t x = 0; x < mn; ++x) {
    if (!use[x]) continue;
    ++r.elements;
    const double y = d[x] / sigma[x];
    sum += y;
    toward += d[x] > 0;
    if (y > worst) {
      worst = y;
      r.worst_index = static_cast<std::int64_t>(x);
    }
  }
  if (r.elements == 0) return r;
  r.toward_zero = static_cast<double>(toward) / static_cast<double>(r.elements);
  r.mean_relative = sum / static_cast<double>(r.elements);
  r.statistic = r.mean_relative;
  if (r.statistic <= r.threshold) return r;  // the allowance only lowers it: no need to compute it
  // Absorption allowance b_ij = sum over products with |p| < 8 c of min(|p|, c).
  r.allowance_used = true;
  std::vector<double> y(mn, 0.0);
  parallel_for(static_cast<std::uint64_t>(m), 1, [&](std::uint64_t i0, std::uint64_t i1, unsigned) {
    for (std::uint64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const auto x = static_cast<std::size_t>(static_cast<std::int64_t>(i) * n + j);
        if (!use[x]) continue;
        double b = 0, row = 0, col = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          const double av = std::fabs(a_op[static_cast<std::size_t>(static_cast<std::int64_t>(i) * k + q)]);
          const double bv = std::fabs(b_op[static_cast<std::size_t>(q * n + j)]);
          const double p = av * bv;
          if (p < 8 * c[x]) b += std::min(p, c[x]);
          row += av;
          col += bv;
        }
        // Operands narrowed below their format's normal range err by up to eta, deterministically.
        b += e.eta_a * col + e.eta_b * row;
        y[x] = (d[x] - b * (1 + 0x1p-50)) / sigma[x];
      }
  });
  sum = 0;
  worst = -INFINITY;
  for (std::size_t x = 0; x < mn; ++x) {
    if (!use[x]) continue;
    sum += y[x];
    if (y[x] > worst) {
      worst = y[x];
      r.worst_index = static_cast<std::int64_t>(x);
    }
  }
  r.statistic = sum / static_cast<double>(r.elements);
  return r;
}

}  // namespace fpcert
