// suites/verdict/scheme_bound.cpp — a declared scheme's own per-element bound, checked against the exact reference.
#include "suites/verdict/scheme_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/parallel.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

bool claims_scheme_bound(const KernelTraits& t) { return t.sum_order.kind == OrderKind::Ozaki2; }

std::optional<CheckResult> scheme_bound_check(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k,
                                              const std::vector<double>& a_in, const std::vector<double>& b_in, const GemmRef& rop,
                                              const std::vector<double>& got, std::vector<double>* fracs) {
  if (!claims_scheme_bound(t)) return std::nullopt;
  const auto mn = static_cast<std::size_t>(m * n);
  if (fracs) fracs->assign(mn, NAN);
  CheckResult c{CheckKind::SchemeBound, true, {}, -1, 0, 1};
  const auto finite = [](const std::vector<double>& v) { return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }); };
  if (!finite(a_in) || !finite(b_in)) {
    c.detail = "Ozaki-II's bound not applied: a non-finite input has no residues (the special-value checks judge those elements)";
    return c;
  }
  const ozaki2::Plan pl = ozaki2::make_plan(t.sum_order.moduli);
  const ozaki2::Scaling sc = ozaki2::choose_scaling(pl, a_in.data(), b_in.data(), m, n, k);
  std::vector<double> exact_abs(mn);
  for (std::size_t x = 0; x < mn; ++x) exact_abs[x] = std::fabs(rop.c[x].hi) * (1 + 0x1p-52);  // |hi + lo| <= |hi| (1 + 2^-53)
  const std::vector<double> bound = ozaki2::bound(sc, a_in.data(), b_in.data(), exact_abs, m, n, k);
  struct Worst {
    std::int64_t graded = 0, exceed = 0, index = -1;
    double frac = -1;
  };
  const Worst w = parallel_reduce(mn, 4096, Worst{}, [&](std::uint64_t x0, std::uint64_t x1) {
    Worst W;
    for (std::uint64_t x = x0; x < x1; ++x) {
      const RefValue& r = rop.c[x];
      if (!std::isfinite(r.hi) || !std::isfinite(bound[x])) continue;  // the special-value checks
      if (!std::isfinite(got[x])) {  // a non-finite output of a finite exact value: the nonfinite check's, shown as such
        if (fracs) (*fracs)[x] = INFINITY;
        continue;
      }
      const double err = error_from_below(got[x], r);  // as the envelope measures it: never above the truth
      const double frac = err == 0 ? 0 : bound[x] > 0 ? err / bound[x] : INFINITY;
      if (fracs) (*fracs)[x] = frac;
      ++W.graded;
      W.exceed += frac > 1;
      if (frac > W.frac) W.frac = frac, W.index = static_cast<std::int64_t>(x);
    }
    return W;
  }, [](Worst& acc, const Worst& W) {
    acc.graded += W.graded;
    acc.exceed += W.exceed;
    if (W.frac > acc.frac) acc.frac = W.frac, acc.index = W.index;
  });
  c.passed = w.exceed == 0;
  c.measured = std::max(0.0, w.frac);
  c.first_index = c.passed ? -1 : w.index;
  if (w.index < 0) {
    c.detail = "Ozaki-II's bound: no element with a finite output and exact value to hold to it";
    return c;
  }
  const std::int64_t i = w.index / n, j = w.index % n;
  c.detail = fmt::format("{} Ozaki-II's bound ({} moduli): {}max |c - exact| / bound = {:.4g} at ({}, {}), |c - exact| {:.4g}, bound "
                         "{:.4g} ({})",
                         c.passed ? "within" : "beyond", t.sum_order.moduli,
                         c.passed ? fmt::format("{} element(s), ", w.graded) : fmt::format("{} of {} element(s) exceed it; ", w.exceed, w.graded),
                         w.frac, i, j, std::fabs((got[static_cast<std::size_t>(w.index)] - rop.c[static_cast<std::size_t>(w.index)].hi) -
                                                rop.c[static_cast<std::size_t>(w.index)].lo),
                         bound[static_cast<std::size_t>(w.index)], ozaki2::bound_terms(sc, a_in.data(), b_in.data(), m, n, k, i, j));
  return c;
}

}  // namespace fpcert
