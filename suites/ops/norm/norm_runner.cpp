// suites/ops/norm/norm_runner.cpp — buffers, guards, runs and per-element grading of one LayerNorm / RMSNorm case.
#include "suites/ops/norm/norm_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/norm/norm.hpp"
#include "oracle/norm/norm_bound.hpp"
#include "oracle/norm/norm_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

CaseResult norm_skeleton(const NormKernel& k, const NormCaseSetup& s) {
  const NormTraits& t = k.norm_traits();
  CaseResult r;
  r.suite = s.suite;
  r.case_id = s.case_id;
  r.family = s.family;
  r.kernel = k.name();
  r.kernel_traits = describe_norm_traits(t);
  r.backend = std::string(to_string(k.backend()));
  r.spec = s.problem->spec;
  r.repro = s.repro;
  r.achieved = s.problem->achieved;
  r.source_format = std::string(s.problem->source->tag);
  r.out_format = std::string(t.arith.out->tag);
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
  if ((kernel.memory() == MemorySpace::Device) != api.is_device()) {
    r.status = CaseStatus::NotSupported;
    r.reason = kernel.memory() == MemorySpace::Device ? "this kernel needs a CUDA device" : "host kernel given a device API";
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

  const bool device = api.is_device();
  const int warmups = opt.warmups >= 0 ? opt.warmups : (device ? 3 : 0);
  const int timed = opt.timed >= 0 ? opt.timed : (device ? 10 : 1);
  const int ob = container_bytes(out), xb = container_bytes(*t.x_input);
  const std::int64_t ldo = cols + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(out);
  std::vector<std::uint64_t> codes;
  std::vector<double> times;
  InputReport in_rep;
  std::int64_t runs_differ = 0, first_differ_run = -1, first_differ_index = -1, out_guard = 0;
  std::string first_out_guard;
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
    auto check = [&](std::vector<std::uint64_t>& into) {
      const GuardReport g = dout.download_and_check();
      out_guard += g.changed;
      if (first_out_guard.empty() && g.changed)
        first_out_guard = g.where == GuardReport::Where::Padding ? fmt::format("into the output's padding at row {}, column {}", g.row, g.col)
                          : g.where == GuardReport::Where::Before ? fmt::format("byte -{} before the output", g.offset)
                                                                  : fmt::format("byte {} after the output", g.offset);
      into.assign(total, 0);
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) into[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = from_container(out, dout.code(i, j));
      for (GuardedInput* in : {&dx, dg.get(), db.get()}) {
        if (!in) continue;
        const InputReport q = in->check();
        if (!in_rep.modified && q.modified) in_rep.first_modified = q.first_modified;
        if (!in_rep.guard_changed && q.guard_changed) in_rep.first_guard = q.first_guard;
        in_rep.modified = std::max(in_rep.modified, q.modified);
        in_rep.guard_changed = std::max(in_rep.guard_changed, q.guard_changed);
      }
    };
    kernel.run(ops);
    api.synchronize(opt.timeout_ms);
    check(codes);
    std::vector<std::uint64_t> again;
    for (int q = 0; q < warmups + timed; ++q) {
      if (q >= warmups) api.timer_start();
      kernel.run(ops);
      if (q >= warmups) times.push_back(api.timer_stop_ms());
      api.synchronize(opt.timeout_ms);
      check(again);
      if (again != codes) {
        ++runs_differ;
        if (first_differ_run < 0) {
          first_differ_run = q + 1;
          for (std::size_t e = 0; e < again.size(); ++e)
            if (again[e] != codes[e]) {
              first_differ_index = static_cast<std::int64_t>(e);
              break;
            }
        }
      }
    }
  });
  if (!ran) return finish();
  if (!times.empty()) {
    std::vector<double> ts = times;
    r.time_ms_median = quantile(ts, 0.5);
    r.time_ms_mean = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    r.timed_runs = static_cast<int>(times.size());
  }
  pin_fp_env();

  // Grade every element.
  std::int64_t unwritten = 0, first_unwritten = -1, special_bad = 0, first_special = -1, nonfinite = 0, first_nonfinite = -1;
  std::int64_t judged = 0, vacuous = 0, unjudged = 0, worst = -1, ref_overflow = 0;
  std::string special_detail;
  double frac_max = 0, max_abs = 0, err2 = 0, ref2 = 0, ref_max = 0;
  std::vector<double> fracs, ulps;
  for (std::size_t e = 0; e < total; ++e) {
    const std::uint64_t code = codes[e];
    if (out.has_nan() && code == pre) {
      if (first_unwritten < 0) first_unwritten = static_cast<std::int64_t>(e);
      ++unwritten;
      continue;
    }
    const double got = to_double(out, code), want = ref.value[e];
    const double want_out = to_double(out, ref.code[e]);
    if (std::isnan(want) || !ref.rows[e / n].finite) {
      // Special values (oracle/norm/norm_ref.hpp): a row with a NaN (LayerNorm: or an Inf; or var + eps = 0) is NaN
      // everywhere; an RMSNorm row with an Inf is beta (or 0) where x is finite, NaN where it is not.
      const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok) {
        if (first_special < 0) {
          first_special = static_cast<std::int64_t>(e);
          special_detail = fmt::format("row {}, column {}: got {:.6g} where IEEE gives {}", e / n, e % n, got, want);
        }
        ++special_bad;
      }
      continue;
    }
    if (!std::isfinite(want_out)) {
      ++ref_overflow;
      continue;
    }
    if (!std::isfinite(got)) {
      if (first_nonfinite < 0) first_nonfinite = static_cast<std::int64_t>(e);
      ++nonfinite;
      continue;
    }
    const double err = std::fabs(got - want);
    max_abs = std::max(max_abs, err);
    err2 += err * err;
    ref2 += want * want;
    ref_max = std::max(ref_max, std::fabs(want));
    ulps.push_back(std::fabs(static_cast<double>(code_ordinal(out, code) - code_ordinal(out, ref.code[e]))));
    if (!std::isfinite(bound[e])) {
      ++unjudged;
      continue;
    }
    const double frac = bound[e] > 0 ? err / bound[e] : (err > 0 ? kInf : 0.0);
    ++judged;
    if (bound[e] >= std::fabs(want)) ++vacuous;
    fracs.push_back(frac);
    if (worst < 0 || frac > frac_max) frac_max = frac, worst = static_cast<std::int64_t>(e);
  }

  Metrics& m = r.metrics;
  m.max_abs = max_abs;
  m.frobenius_rel = ref2 > 0 ? std::sqrt(err2 / ref2) : 0;
  m.max_rel = ref_max > 0 ? max_abs / ref_max : 0;
  m.ref_max_abs = ref_max;
  m.err_frac_max = frac_max;
  m.err_frac_median = quantile(fracs, 0.5);
  m.err_frac_p99 = quantile(fracs, 0.99);
  m.ulp_max = ulps.empty() ? 0 : *std::max_element(ulps.begin(), ulps.end());
  m.ulp_median = quantile(ulps, 0.5);
  m.ulp_p99 = quantile(ulps, 0.99);
  m.nonfinite = nonfinite;
  m.first_nonfinite = first_nonfinite;
  m.ref_overflow = ref_overflow;
  m.unwritten = unwritten;
  m.first_unwritten = first_unwritten;
  m.guard_violations = out_guard;
  m.first_guard_violation = first_out_guard;
  m.deterministic = runs_differ == 0;
  r.tier = Tier::Envelope;
  r.vacuous = judged == 0 || vacuous == judged;
  r.worst_index = worst;
  r.achieved["norm_reference_mpfr_elements"] = static_cast<double>(ref.stats.mpfr);
  r.achieved["norm_vacuous_elements"] = static_cast<double>(vacuous);
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

  auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured = 0, double limit = 0) {
    r.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
  };
  add(CheckKind::Envelope, frac_max <= 1,
      judged == 0 ? fmt::format("no element judged by the bound ({} beyond what it covers)", unjudged)
                  : fmt::format("max error / bound {:.3g} over {} element(s) (row {}, column {}){}{}", frac_max, judged,
                                worst >= 0 ? worst / cols : -1, worst >= 0 ? worst % cols : -1,
                                vacuous ? fmt::format("; {} vacuous (bound >= |exact|)", vacuous) : "",
                                unjudged ? fmt::format("; {} not covered by the bound", unjudged) : ""),
      frac_max > 1 ? worst : -1, frac_max, 1);
  add(CheckKind::SpecialValues, special_bad == 0,
      special_bad ? fmt::format("{} element(s) with wrong special values; first: {}", special_bad, special_detail)
                  : std::string("special values (NaN rows) as IEEE gives them"),
      first_special);
  add(CheckKind::Nonfinite, nonfinite == 0,
      nonfinite ? fmt::format("{} result(s) Inf/NaN where the exact value is finite in {}, first element {} (row {})", nonfinite, out.tag,
                              first_nonfinite, first_nonfinite / cols)
                : "no Inf/NaN where the exact value is finite",
      first_nonfinite);
  add(CheckKind::Unwritten, unwritten == 0,
      unwritten ? fmt::format("{} result(s) never written (still the pre-fill pattern), first element {}", unwritten, first_unwritten)
                : "every result written",
      first_unwritten);
  add(CheckKind::GuardOutput, out_guard == 0,
      out_guard ? fmt::format("{} guard byte(s) around the output changed: {}", out_guard, first_out_guard) : "output guards unchanged", -1);
  add(CheckKind::GuardInputs, in_rep.guard_changed == 0,
      in_rep.guard_changed ? fmt::format("{} guard/padding byte(s) of the inputs changed (first: {})", in_rep.guard_changed, in_rep.first_guard)
                           : "input guards and padding unchanged",
      -1);
  add(CheckKind::InputsModified, in_rep.modified == 0,
      in_rep.modified ? fmt::format("inputs modified by the call: {} element(s), first {}", in_rep.modified, in_rep.first_modified)
                      : "inputs unchanged after every run",
      in_rep.first_modified);
  add(CheckKind::Nondeterministic, runs_differ == 0,
      runs_differ ? fmt::format("{} of {} later run(s) differ from the first, the first at run {} (element {})", runs_differ,
                                times.size() + static_cast<std::size_t>(warmups), first_differ_run, first_differ_index)
                  : fmt::format("{} later run(s) bitwise equal to the first", times.size() + static_cast<std::size_t>(warmups)),
      first_differ_index);
  decide(r);
  return finish();
}

}  // namespace fpcert
