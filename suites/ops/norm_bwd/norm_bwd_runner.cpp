// suites/ops/norm_bwd/norm_bwd_runner.cpp — buffers, guards, runs and per-element grading of one LayerNorm / RMSNorm
// backward case (suites/ops/norm_bwd/norm_bwd_runner.hpp).
#include "suites/ops/norm_bwd/norm_bwd_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/norm/norm_bwd.hpp"
#include "oracle/norm/norm_bwd_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"

namespace fpcert {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<std::uint8_t> pack(const std::vector<std::uint64_t>& c, const Format& f) {
  const int b = container_bytes(f);
  std::vector<std::uint8_t> v(c.size() * static_cast<std::size_t>(b));
  for (std::size_t e = 0; e < c.size(); ++e) store_code(v.data(), static_cast<std::int64_t>(e), b, to_container(f, c[e]));
  return v;
}

/// Grades one output's elements (dx, or dgamma/dbeta) against the reference codes and values and the bounds.
void grade(RowGrades& g, const Format& out, const std::vector<std::uint64_t>& codes, const std::vector<std::uint64_t>& ref_code,
           const std::vector<double>& ref_value, const std::vector<double>& bound, std::int64_t cols, const char* what) {
  const std::uint64_t pre = prefill_code(out);
  for (std::size_t e = 0; e < codes.size(); ++e) {
    const std::uint64_t code = codes[e];
    const double got = to_double(out, code), want = ref_value[e];
    g.heuristics(got, want);
    if (out.has_nan() && code == pre) {
      g.unwritten(static_cast<std::int64_t>(e));
      continue;
    }
    if (std::isnan(want)) {  // a NaN input reaches it (oracle/norm/norm_bwd_ref.hpp, special values)
      if (!std::isnan(got))
        g.special_wrong(static_cast<std::int64_t>(e), fmt::format("{} row {}, column {}: got {:.6g} where a NaN input gives NaN", what,
                                                                  e / static_cast<std::size_t>(cols), e % static_cast<std::size_t>(cols), got));
      continue;
    }
    if (!std::isfinite(to_double(out, ref_code[e]))) {
      g.ref_overflow();
      continue;
    }
    g.graded(static_cast<std::int64_t>(e), out, code, ref_code[e], got, want, bound[e]);
  }
}

}  // namespace

NormBwdArith norm_bwd_arith(const NormBwdTraits& t, double eps) {
  NormBwdArith a;
  a.kind = t.kind;
  a.compute = t.compute;
  a.acc = t.acc;
  a.dx_out = t.dx_out;
  a.param_acc = t.param_acc;
  a.param_out = t.param_out;
  a.reads_saved = t.reads_saved;
  a.eps = eps;
  return a;
}

CaseResult norm_bwd_skeleton(const NormBwdKernel& k, const NormBwdCaseSetup& s) {
  const NormBwdTraits& t = k.norm_bwd_traits();
  CaseResult r = case_skeleton(k, describe_norm_bwd_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.dx_out);
  r.m = norm_bwd_rows(*s.problem);
  r.n = norm_bwd_cols(*s.problem);
  r.k = norm_bwd_cols(*s.problem);
  return r;
}

CaseResult run_norm_bwd_case(NormBwdKernel& kernel, const NormBwdCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const NormBwdTraits& t = kernel.norm_bwd_traits();
  const Format &in = *t.input, &dxo = *t.dx_out, &po = *t.param_out;
  const bool ln = t.kind == NormKind::LayerNorm, params = t.writes_param_grads;
  CaseResult r = norm_bwd_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  auto not_supported = [&](std::string why) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) return not_supported(std::move(why));
  const std::int64_t rows = norm_bwd_rows(p), cols = norm_bwd_cols(p);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  const bool has_g = norm_bwd_has_gamma(p);
  const double eps = norm_bwd_eps(p);
  if (const Support sup = kernel.can_implement(rows, cols); !sup.ok) return not_supported(sup.reason);

  // x, dy, gamma stored in the kernel's input format: the reference is computed from these codes (what the kernel gets).
  const Rounder in_r{Rounding::NearestEven, default_saturation(in), NanPayload::Preserve};
  double beyond = 0;
  auto store = [&](double v, std::uint64_t& code, double& st) {
    const Rounded q = round_double(in, v, in_r);
    if ((q.flags & kOverflow) && std::isfinite(v)) beyond = std::max(beyond, std::fabs(v));
    code = q.code;
    st = to_double(in, q.code);
  };
  std::vector<std::uint64_t> xc(total), dyc(total), gc(n);
  std::vector<double> x(total), dy(total), gam(n, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t e = static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j);
      store(norm_bwd_x(p, i, j), xc[e], x[e]);
      const bool nan = s.specials && i % 3 == 0 && static_cast<std::size_t>(j) == static_cast<std::size_t>(i) % n;
      store(nan ? kNan : norm_bwd_dy(p, i, j), dyc[e], dy[e]);
    }
  for (std::size_t j = 0; j < n; ++j) store(has_g ? norm_bwd_gamma(p, static_cast<std::int64_t>(j)) : 1.0, gc[j], gam[j]);
  if (beyond > 0) return not_supported(fmt::format("the case's inputs reach {:.4g}, beyond {}'s largest finite value", beyond, in.tag));
  // The statistics a forward saves: the correctly rounded fp32 mean and rstd of each stored row.
  std::vector<double> mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows));
  std::vector<std::uint64_t> meanc(mean.size()), rstdc(rstd.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    norm_saved_stats(t.kind, x.data() + iu * n, n, eps, &mean[iu], &rstd[iu]);
    meanc[iu] = round_double(f32, mean[iu], Rounder::nearest(f32)).code;
    rstdc[iu] = round_double(f32, rstd[iu], Rounder::nearest(f32)).code;
  }

  // The reference and the bounds.
  pin_fp_env();
  NormBwdInputs ri;
  ri.kind = t.kind, ri.rows = rows, ri.cols = cols, ri.x = x.data(), ri.dy = dy.data(), ri.gamma = has_g ? gam.data() : nullptr;
  ri.mean = mean.data(), ri.rstd = rstd.data(), ri.reads_saved = t.reads_saved, ri.eps = eps;
  const NormBwdRef ref = norm_bwd_reference(ri, dxo, po);
  const NormBwdArith arith = norm_bwd_arith(t, eps);
  std::vector<double> dx_bound(total), par_bound(static_cast<std::size_t>(ln ? 2 : 1) * n);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * n;
    norm_bwd_dx_bounds(arith, x.data() + at, dy.data() + at, ri.gamma, n, ref.rows[static_cast<std::size_t>(i)], dx_bound.data() + at);
  }
  norm_bwd_param_bounds(arith, x.data(), dy.data(), rows, cols, ref.rows, par_bound.data(), ln ? par_bound.data() + n : nullptr);
  std::vector<std::uint64_t> par_code = ref.dgamma_code;
  std::vector<double> par_value = ref.dgamma_value;
  if (ln) {
    par_code.insert(par_code.end(), ref.dbeta_code.begin(), ref.dbeta_code.end());
    par_value.insert(par_value.end(), ref.dbeta_value.begin(), ref.dbeta_value.end());
  }

  // The runs: dx through the row operations' runs; dgamma/dbeta downloaded and checked after each run.
  RowRuns runs = row_runs(api, opt);
  const int ob = container_bytes(dxo), pb = container_bytes(po), xb = container_bytes(in);
  const std::int64_t lddx = cols + opt.ldc_pad, ldp = cols + opt.ldc_pad, prow = ln ? 2 : 1;
  std::vector<std::vector<std::uint64_t>> par_runs;
  std::int64_t par_guard = 0;
  std::string first_par_guard;
  const bool ran = run_kernel_guarded(r, [&] {
    GuardedInput gx(api, pack(xc, in), rows, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    GuardedInput gdy(api, pack(dyc, in), rows, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    GuardedInput grs(api, pack(rstdc, f32), 1, rows, padded_ld(rows, 4), 4, opt.guard_bytes, false);
    std::unique_ptr<GuardedInput> gg, gm;
    if (has_g) gg = std::make_unique<GuardedInput>(api, pack(gc, in), 1, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    if (ln) gm = std::make_unique<GuardedInput>(api, pack(meanc, f32), 1, rows, padded_ld(rows, 4), 4, opt.guard_bytes, false);
    GuardedBuffer ddx(api, static_cast<std::size_t>(rows * lddx * ob), opt.guard_bytes);
    ddx.prefill(rows, cols, lddx, ob, to_container(dxo, prefill_code(dxo)));
    GuardedBuffer dpar(api, static_cast<std::size_t>(prow * ldp * pb), opt.guard_bytes);
    dpar.prefill(prow, cols, ldp, pb, to_container(po, prefill_code(po)));
    NormBwdOperands ops;
    ops.rows = rows, ops.cols = cols;
    ops.x = gx.elements(), ops.ldx = gx.ld(), ops.dy = gdy.elements(), ops.lddy = gdy.ld();
    if (gg) ops.gamma = gg->elements();
    if (gm) ops.mean = gm->elements();
    ops.rstd = grs.elements();
    ops.dx = ddx.elements(), ops.lddx = lddx;
    if (params) {
      ops.dgamma = dpar.elements();
      if (ln) ops.dbeta = static_cast<std::uint8_t*>(dpar.elements()) + ldp * pb;
    }
    ops.stream = api.stream();
    auto collect = [&] {
      if (!params) return;
      const GuardReport g = dpar.download_and_check();
      par_guard += g.changed;
      if (first_par_guard.empty() && g.changed) first_par_guard = fmt::format("around dgamma/dbeta (byte offset {})", g.offset);
      std::vector<std::uint64_t> c(static_cast<std::size_t>(prow) * n);
      for (std::int64_t i = 0; i < prow; ++i)
        for (std::int64_t j = 0; j < cols; ++j) c[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = from_container(po, dpar.code(i, j));
      par_runs.push_back(std::move(c));
    };
    run_rows(runs, api, opt, ddx, dxo, rows, cols, {&gx, &gdy, gg.get(), gm.get(), &grs}, [&] { kernel.run(ops); }, collect);
  });
  if (!ran) return finish();
  pin_fp_env();

  // dx: every element.
  RowGrades g;
  grade(g, dxo, runs.codes, ref.dx_code, ref.dx_value, dx_bound, cols, "dx");
  g.record_metrics(r, runs);
  g.record_checks(r, runs, dxo, cols, "special values (a NaN in dy: its row's dx NaN) as IEEE gives them");
  r.achieved["norm_bwd_vacuous_dx"] = static_cast<double>(g.vacuous());
  std::string arithmetic;
  if (const std::int64_t w = g.worst(); w >= 0) {
    const auto wu = static_cast<std::size_t>(w), row = wu / n, at = row * n;
    const auto terms = norm_bwd_dx_terms(arith, x.data() + at, dy.data() + at, ri.gamma, n, ref.rows[row], wu - at);
    r.envelope.terms.clear();
    for (const NormBoundTerm& term : terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    r.envelope.allowed = "|got - exact| <= the element's bound (oracle/norm/norm_bwd_bound.hpp), per element of dx, dgamma, dbeta";
    arithmetic = fmt::format("dx row {}, column {}: exact {:.9g}, got {:.9g}\n{}", row, wu - at, ref.dx_value[wu],
                             to_double(dxo, runs.codes[wu]), to_text(terms));
  }

  // dgamma / dbeta: the first run graded in full, every later run against the bound (run_to_run) or bit for bit.
  if (params && !par_runs.empty()) {
    RowGrades gp;
    grade(gp, po, par_runs.front(), par_code, par_value, par_bound, cols, ln ? "dgamma/dbeta" : "dgamma");
    const bool run_to_run = t.param_determinism == Determinism::RunToRun;
    RowRuns pr;
    pr.codes = par_runs.front();
    pr.out_guard = par_guard;
    pr.first_out_guard = first_par_guard;
    std::int64_t later_over = 0, distinct = 0;
    double later_frac = 0, spread_ulps = 0;
    for (std::size_t k = 1; k < par_runs.size(); ++k) {
      const auto& c = par_runs[k];
      if (c == par_runs.front()) continue;
      ++distinct;
      if (!run_to_run && pr.first_differ_run < 0) {
        pr.first_differ_run = static_cast<std::int64_t>(k);
        for (std::size_t e = 0; e < c.size(); ++e)
          if (c[e] != pr.codes[e]) {
            pr.first_differ_index = static_cast<std::int64_t>(e);
            break;
          }
      }
      bool over = false;
      for (std::size_t e = 0; e < c.size(); ++e) {
        const double got = to_double(po, c[e]), want = par_value[e];
        if (std::isnan(want) || c[e] == pr.codes[e]) continue;
        const double frac = std::fabs(got - want) / par_bound[e];
        later_frac = std::max(later_frac, std::isnan(frac) ? std::numeric_limits<double>::infinity() : frac);
        over = over || !(frac <= 1);
        spread_ulps = std::max(spread_ulps, std::fabs(static_cast<double>(code_ordinal(po, c[e]) - code_ordinal(po, pr.codes[e]))));
      }
      later_over += over;
    }
    pr.runs_differ = run_to_run ? 0 : distinct;
    CaseResult rp;
    gp.record_metrics(rp, pr);
    gp.record_checks(rp, pr, po, cols, "special values (a NaN in dy: its column's dgamma and dbeta NaN) as IEEE gives them");
    for (CheckResult& c : rp.checks) {
      if (c.kind == CheckKind::GuardInputs || c.kind == CheckKind::InputsModified) continue;  // the dx checks hold them
      c.detail = (ln ? "dgamma/dbeta: " : "dgamma: ") + c.detail;
      r.checks.push_back(std::move(c));
    }
    if (run_to_run)
      r.checks.push_back({CheckKind::Spread, later_over == 0,
                          fmt::format("{}declared run-to-run: {} later run(s) differ from the first (spread {} ulp of {}), {} beyond the bound "
                                      "(max error / bound {:.3g})",
                                      ln ? "dgamma/dbeta: " : "dgamma: ", distinct, spread_ulps, po.tag, later_over, later_frac),
                          -1, later_frac, 1});
    r.achieved["norm_bwd_param_spread_ulps"] = spread_ulps;
    r.achieved["norm_bwd_param_runs_differ"] = static_cast<double>(distinct);
    r.achieved["norm_bwd_vacuous_params"] = static_cast<double>(gp.vacuous());
    r.vacuous = r.vacuous && rp.vacuous;
    if (const std::int64_t w = gp.worst(); w >= 0) {
      const auto wu = static_cast<std::size_t>(w);
      const bool beta = wu >= n;
      const auto terms = norm_bwd_param_terms(arith, beta, x.data(), dy.data(), rows, cols, ref.rows, static_cast<std::int64_t>(wu % n));
      arithmetic += fmt::format("\n{} column {}: exact {:.9g}, got {:.9g}\n{}", beta ? "dbeta" : "dgamma", wu % n, par_value[wu],
                                to_double(po, pr.codes[wu]), to_text(terms));
    }
  }
  r.envelope.arithmetic = arithmetic;
  r.achieved["norm_bwd_reference_unsettled"] = static_cast<double>(ref.stats.unsettled);
  if (!r.vacuous) r.evidence.push_back("norm_backward");
  decide(r);
  return finish();
}

}  // namespace fpcert
