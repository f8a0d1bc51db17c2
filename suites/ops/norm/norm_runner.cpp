// suites/ops/norm/norm_runner.cpp — buffers, guards, runs and per-element grading of one LayerNorm / RMSNorm case.
#include "suites/ops/norm/norm_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/norm/norm.hpp"
#include "oracle/norm/norm_bound.hpp"
#include "oracle/norm/norm_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

CaseResult norm_skeleton(const NormKernel& k, const NormCaseSetup& s) {
  const NormTraits& t = k.norm_traits();
  CaseResult r = case_skeleton(k, describe_norm_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.arith.out);
  r.m = norm_rows(*s.problem);
  r.n = norm_cols(*s.problem);
  r.k = norm_cols(*s.problem);
  return r;
}

CaseResult run_norm_case(NormKernel& kernel, const NormCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const NormTraits& t = kernel.norm_traits();
  const NormArith& a = t.arith;
  const Format& out = *a.out;
  CaseResult r = norm_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  const std::int64_t rows = norm_rows(p), cols = norm_cols(p);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  const bool has_g = norm_has_gamma(p), has_b = norm_has_beta(p);
  const double eps = norm_eps(p);
  if (const Support sup = kernel.can_implement(rows, cols); !sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  // x, gamma, beta as the source gives them (specials planted), stored (rounded once into the kernel's input format).
  std::vector<double> xs(total), xst(total), pert(total, 0.0), gs(n, 1.0), bs(n, 0.0), gst(n, 1.0), bst(n, 0.0);
  std::vector<std::uint64_t> xcodes(total), gcodes(n), bcodes(n);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) xs[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = norm_x(p, i, j);
  for (std::size_t j = 0; j < n; ++j) {
    if (has_g) gs[j] = norm_gamma(p, static_cast<std::int64_t>(j));
    if (has_b) bs[j] = norm_beta(p, static_cast<std::int64_t>(j));
  }
  if (s.specials)
    for (std::int64_t i = 0; i < rows; ++i) {
      double* x = xs.data() + static_cast<std::size_t>(i) * n;
      const std::size_t at = static_cast<std::size_t>(i) % n;
      if (i % 3 == 0) x[at] = std::numeric_limits<double>::quiet_NaN();
      if (i % 3 == 1) x[at] = kInf;
    }
  const Rounder in_r{Rounding::NearestEven, default_saturation(*t.x_input), NanPayload::Preserve};
  bool exact_inputs = true;
  double beyond = 0;
  auto store = [&](double v, std::uint64_t& code, double& st, double& pe) {
    const Rounded q = round_double(*t.x_input, v, in_r);
    if ((q.flags & kOverflow) && std::isfinite(v)) beyond = std::max(beyond, std::fabs(v));
    code = q.code;
    st = to_double(*t.x_input, q.code);
    exact_inputs = exact_inputs && (st == v || (std::isnan(st) && std::isnan(v)));
    pe = std::isfinite(st) && std::isfinite(v) ? std::fabs(st - v) : 0.0;
  };
  for (std::size_t e = 0; e < total; ++e) store(xs[e], xcodes[e], xst[e], pert[e]);
  bool affine_exact = true;
  for (std::size_t j = 0; j < n; ++j) {
    double pg = 0, pb = 0;
    store(gs[j], gcodes[j], gst[j], pg);
    store(bs[j], bcodes[j], bst[j], pb);
    affine_exact = affine_exact && pg == 0 && pb == 0;
  }
  if (beyond > 0) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("the case's inputs reach {:.4g}, beyond {}'s largest finite value", beyond, t.x_input->tag);
    return finish();
  }
  if (!affine_exact) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("gamma or beta are not values of {} (the bound takes them as given): generate them with source={}",
                           t.x_input->tag, t.x_input->tag);
    return finish();
  }
  if (exact_inputs)
    r.flags.push_back(fmt::format("inputs-exact-in-storage: every input is a value of {}: the storage step is not exercised "
                                  "(the arithmetic is: every row's mean, variance and rsqrt round)",
                                  t.x_input->tag));

  // The reference and the bound of every element.
  pin_fp_env();
  const NormRef ref = norm_reference(a.kind, xs.data(), rows, cols, has_g ? gs.data() : nullptr, has_b ? bs.data() : nullptr, eps, out);
  std::vector<double> bound(total);
  std::vector<NormRowBound> rbs(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    rbs[static_cast<std::size_t>(i)] = norm_row_bound(a, xs.data() + at, pert.data() + at, n, eps, ref.rows[static_cast<std::size_t>(i)]);
    for (std::size_t j = 0; j < n; ++j)
      bound[at + j] = norm_element_bound(a, rbs[static_cast<std::size_t>(i)], xs.data() + at, pert.data() + at, n,
                                         ref.rows[static_cast<std::size_t>(i)], j, gs[j], bs[j], has_b, ref.value[at + j]);
  }
  // The one-pass variance's domain: a kernel declaring E[x^2] - E[x]^2 is not meant for rows where its own bound on the
  // variance's error reaches var + eps (the computed variance may be negative, its rsqrt NaN), as an unshifted softmax is
  // not meant for logits beyond exp's range (docs/normalization.md, "Declared weaker").
  if (a.kind == NormKind::LayerNorm && a.variance == NormVariance::OnePass) {
    std::int64_t outside = 0;
    for (std::size_t i = 0; i < rbs.size(); ++i) outside += ref.rows[i].finite && !rbs[i].covered;
    if (outside > 0) {
      r.status = CaseStatus::NotSupported;
      r.reason = fmt::format("{} row(s) where the declared one-pass variance's error bound reaches var + eps (mean^2 >> var): "
                             "the kernel declares E[x^2] - E[x]^2, which is not meant for them",
                             outside);
      return finish();
    }
  }

  RowRuns runs = row_runs(api, opt);
  const int ob = container_bytes(out), xb = container_bytes(*t.x_input);
  const std::int64_t ldo = cols + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(out);
  auto pack = [&](const std::vector<std::uint64_t>& c, const Format& f, int b) {
    std::vector<std::uint8_t> v(c.size() * static_cast<std::size_t>(b));
    for (std::size_t e = 0; e < c.size(); ++e) store_code(v.data(), static_cast<std::int64_t>(e), b, to_container(f, c[e]));
    return v;
  };
  const bool ran = run_kernel_guarded(r, [&] {
    GuardedInput dx(api, pack(xcodes, *t.x_input, xb), rows, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    std::unique_ptr<GuardedInput> dg, db;
    if (has_g) dg = std::make_unique<GuardedInput>(api, pack(gcodes, *t.x_input, xb), 1, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    if (has_b) db = std::make_unique<GuardedInput>(api, pack(bcodes, *t.x_input, xb), 1, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    GuardedBuffer dout(api, static_cast<std::size_t>(rows * ldo * ob), opt.guard_bytes);
    dout.prefill(rows, cols, ldo, ob, to_container(out, pre));
    NormOperands ops;
    ops.rows = rows;
    ops.cols = cols;
    ops.x = dx.elements();
    ops.ldx = dx.ld();
    if (dg) ops.gamma = dg->elements();
    if (db) ops.beta = db->elements();
    ops.eps = static_cast<float>(eps);
    ops.out = dout.elements();
    ops.ldo = ldo;
    ops.stream = api.stream();
    run_rows(runs, api, opt, dout, out, rows, cols, {&dx, dg.get(), db.get()}, [&] { kernel.run(ops); });
  });
  if (!ran) return finish();
  pin_fp_env();
  if (opt.output) {  // the checked run's output (fpcert audit reads it)
    opt.output->resize(runs.codes.size());
    for (std::size_t e = 0; e < runs.codes.size(); ++e) (*opt.output)[e] = to_double(out, runs.codes[e]);
  }

  // Grade every element.
  RowGrades g;
  const std::vector<std::uint64_t>& codes = runs.codes;
  for (std::size_t e = 0; e < total; ++e) {
    const std::uint64_t code = codes[e];
    const double got = to_double(out, code), want = ref.value[e];
    g.heuristics(got, want);
    if (out.has_nan() && code == pre) {
      g.unwritten(static_cast<std::int64_t>(e));
      continue;
    }
    const double want_out = to_double(out, ref.code[e]);
    if (std::isnan(want) || !ref.rows[e / n].finite) {
      // Special values (oracle/norm/norm_ref.hpp): a row with a NaN (LayerNorm: or an Inf; or var + eps = 0) is NaN
      // everywhere; an RMSNorm row with an Inf is beta (or 0) where x is finite, NaN where it is not.
      const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok)
        g.special_wrong(static_cast<std::int64_t>(e), fmt::format("row {}, column {}: got {:.6g} where IEEE gives {}", e / n, e % n, got,
                                                                  want));
      continue;
    }
    if (!std::isfinite(want_out)) {
      g.ref_overflow();
      continue;
    }
    g.graded(static_cast<std::int64_t>(e), out, code, ref.code[e], got, want, bound[e]);
  }

  g.record_metrics(r, runs);
  const std::int64_t worst = g.worst();
  r.achieved["norm_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["norm_vacuous_elements"] = static_cast<double>(g.vacuous());
  if (worst >= 0) {
    const auto w = static_cast<std::size_t>(worst);
    const std::size_t row = w / n, at = row * n;
    const auto terms = norm_bound_terms(a, rbs[row], xs.data() + at, pert.data() + at, n, ref.rows[row], w - at, gs[w - at], bs[w - at],
                                        has_b, ref.value[w]);
    r.envelope.terms.clear();
    for (const NormBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/norm/norm_bound.hpp), per element";
    r.envelope.arithmetic = fmt::format("row {}, column {}: exact {:.9g}, got {:.9g}\n{}", row, w - at, ref.value[w],
                                        to_double(out, codes[w]), to_text(terms));
  }
  if (!r.vacuous) r.evidence.push_back("norm");

  g.record_checks(r, runs, out, cols, "special values (NaN rows) as IEEE gives them");
  decide(r);
  return finish();
}

}  // namespace fpcert
