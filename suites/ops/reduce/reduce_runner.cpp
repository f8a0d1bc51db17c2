// suites/ops/reduce/reduce_runner.cpp — buffers, guards, runs and per-vector grading of one reduction case.
#include "suites/ops/reduce/reduce_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "base/codes.hpp"
#include "base/fpenv.hpp"
#include "generators/reduce.hpp"
#include "oracle/reduce/nrm2_scaled.hpp"
#include "oracle/reduce/reduce_bound.hpp"
#include "oracle/ulp.hpp"
#include "suites/run/guarded_buffer.hpp"
#include "suites/run/guarded_input.hpp"
#include "suites/run/row_case.hpp"

namespace fpcert {

namespace {

std::string hex(std::uint64_t code) { return fmt::format("0x{:x}", code); }

/// The quantile q of v (sorted in place); 0 for an empty v.
double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

/// What grading one run's results found.
struct Graded {
  std::int64_t mismatches = 0, first_mismatch = -1;
  std::string mismatch_detail;
  std::int64_t special_bad = 0, first_special = -1;
  std::string special_detail;
  std::int64_t nonfinite = 0, first_nonfinite = -1, ref_overflow = 0, unwritten = 0, first_unwritten = -1;
  std::int64_t judged = 0, vacuous = 0, unjudged = 0, above = 0;  ///< above: vectors beyond their bound
  double frac_max = 0, max_abs = 0, err2 = 0, ref2 = 0, ref_max = 0;
  std::int64_t worst = -1;
  std::vector<double> fracs, ulps;
  std::int64_t ulp_cancelled = 0;
};

}  // namespace

CaseResult reduce_skeleton(const ReduceKernel& k, const ReduceCaseSetup& s) {
  const ReduceTraits& t = k.reduce_traits();
  CaseResult r = case_skeleton(k, describe_reduce_traits(t), s.suite, s.case_id, s.family, *s.problem, s.repro, *t.out);
  r.determinism = std::string(to_string(t.determinism));
  const MatrixView x = reduce_vectors(*s.problem);
  r.m = x.rows;
  r.n = 1;
  r.k = x.cols;
  ReductionResult rr;
  rr.kind = std::string(to_string(t.kind));
  const auto ax = s.problem->achieved.find("reduce_axis");
  rr.axis = std::string(to_string(ax != s.problem->achieved.end() && ax->second == 1 ? ReduceAxis::Cols : ReduceAxis::Rows));
  rr.order = describe(t.order);
  rr.accumulator = std::string(t.arith.acc->tag);
  rr.vectors = x.rows;
  rr.length = x.cols;
  r.reduction = rr;
  return r;
}

CaseResult run_reduce_case(ReduceKernel& kernel, const ReduceCaseSetup& s, DeviceApi& api, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Problem& p = *s.problem;
  const ReduceTraits& t = kernel.reduce_traits();
  CaseResult r = reduce_skeleton(kernel, s);
  auto finish = [&]() -> CaseResult {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  };
  if (std::string why = memory_mismatch(kernel, api); !why.empty()) {
    r.status = CaseStatus::NotSupported;
    r.reason = std::move(why);
    return finish();
  }
  if (const std::string why = reduce_traits_problem(t); !why.empty()) {
    r.checks.push_back({CheckKind::Declaration, false, "the kernel's declarations contradict each other: " + why});
    decide(r);
    return finish();
  }
  const MatrixView X = reduce_vectors(p);
  const std::int64_t count = X.rows, n = X.cols;
  const auto nz = static_cast<std::size_t>(n);
  const ReduceAxis axis = r.reduction->axis == "cols" ? ReduceAxis::Cols : ReduceAxis::Rows;
  if (const Support sup = kernel.can_implement(count, n, axis); !sup.ok) {
    r.status = CaseStatus::NotSupported;
    r.reason = sup.reason;
    return finish();
  }
  const bool dot = t.kind == ReduceKind::Dot;
  // The exact source values, vector by vector; a dot's second operand is the next vector (the last takes the first).
  std::vector<double> xs(static_cast<std::size_t>(count) * nz), ys;
  for (std::int64_t v = 0; v < count; ++v)
    for (std::int64_t i = 0; i < n; ++i) xs[static_cast<std::size_t>(v * n + i)] = X.at(v, i);
  if (dot) {
    ys.resize(xs.size());
    for (std::int64_t v = 0; v < count; ++v)
      for (std::int64_t i = 0; i < n; ++i) ys[static_cast<std::size_t>(v * n + i)] = X.at((v + 1) % count, i);
  }
  if (s.specials)
    for (std::int64_t v = 0; v < count; ++v) {
      double* x = xs.data() + v * n;
      if (v % 4 == 0) x[0] = NAN;
      if (v % 4 == 1) x[0] = INFINITY;
      if (v % 4 == 2) {
        x[0] = -INFINITY;
        if (n > 1) x[1] = t.kind == ReduceKind::Nrm2 ? NAN : INFINITY;
      }
    }
  // Stored: rounded once into the kernel's input formats (what it receives).
  auto store = [&](const std::vector<double>& src, const Format& f, std::vector<std::uint64_t>& codes, std::vector<double>& vals,
                   double& beyond) {
    const Rounder rr{t.input_rounding, default_saturation(f), NanPayload::Preserve};
    codes.resize(src.size());
    vals.resize(src.size());
    bool exact = true;
    for (std::size_t i = 0; i < src.size(); ++i) {
      const Rounded q = round_double(f, src[i], rr);
      if ((q.flags & kOverflow) && std::isfinite(src[i])) beyond = std::max(beyond, std::fabs(src[i]));
      codes[i] = q.code;
      vals[i] = to_double(f, q.code);
      exact = exact && (vals[i] == src[i] || (std::isnan(vals[i]) && std::isnan(src[i])));
    }
    return exact;
  };
  std::vector<std::uint64_t> xcodes, ycodes;
  std::vector<double> xst, yst;
  double beyond = 0;
  bool exact_inputs = store(xs, *t.x_input, xcodes, xst, beyond);
  if (dot) exact_inputs = store(ys, *t.y_input, ycodes, yst, beyond) && exact_inputs;
  if (beyond > 0) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("the case's inputs reach {:.4g}, beyond {}'s largest finite value: they cannot be stored in this "
                           "kernel's input format", beyond, t.x_input->tag);
    return finish();
  }
  if (exact_inputs)
    r.flags.push_back(fmt::format("inputs-exact-in-storage: every input is a value of {}: the storage step is not exercised",
                                  t.x_input->tag));

  // References (from the source values and from the stored ones), the bounds, and the emulation of a declared order.
  pin_fp_env();
  const bool run_to_run = t.determinism == Determinism::RunToRun;
  const ReduceOrder bound_order = run_to_run ? ReduceOrder::unknown() : t.order;
  const bool scaled = t.kind == ReduceKind::Nrm2 && t.scaling == Nrm2Scaling::Lapack;
  const Rounder out_rounder{t.arith.rounder.rounding, default_saturation(*t.out), NanPayload::Preserve};
  const bool bitwise = opt.strongest == Tier::Bitwise && !run_to_run && (t.order.kind != ReduceOrderKind::Unknown || scaled);
  std::vector<ReduceRef> ref(static_cast<std::size_t>(count));
  std::vector<ReduceBound> bound(static_cast<std::size_t>(count));
  std::vector<double> storage(static_cast<std::size_t>(count), 0.0);
  std::vector<std::uint64_t> expected;
  std::int64_t overflow_vectors = 0;
  for (std::int64_t v = 0; v < count; ++v) {
    const auto vi = static_cast<std::size_t>(v);
    const double* x = xst.data() + vi * nz;
    const double* y = dot ? yst.data() + vi * nz : nullptr;
    ref[vi] = reduce_reference(t.kind, xs.data() + vi * nz, dot ? ys.data() + vi * nz : nullptr, nz, 1, 1, t.nrm2_specials);
    const ReduceRef stored = exact_inputs ? ref[vi] : reduce_reference(t.kind, x, y, nz, 1, 1, t.nrm2_specials);
    // The storage step's exact effect on the result: |exact(stored) - exact(source)|, both as hi + lo (each within
    // 2^-106 relative of its exact value), plus 2^-100 of their magnitude for that residue.
    if (!exact_inputs && std::isfinite(stored.value.hi) && std::isfinite(ref[vi].value.hi))
      storage[vi] = std::fabs((stored.value.hi - ref[vi].value.hi) + (stored.value.lo - ref[vi].value.lo)) +
                    std::ldexp(std::fabs(stored.value.hi) + std::fabs(ref[vi].value.hi), -100);
    bound[vi] = scaled && t.order.kind != ReduceOrderKind::Unknown && !run_to_run
                    ? nrm2_scaled_bound(x, nz, t.arith, *t.out, out_rounder, stored)
                    : reduce_bound(t.kind, nz, bound_order, t.arith, *t.out, out_rounder, stored);
    if (!bound[vi].overflow_free) ++overflow_vectors;
    if (bitwise) {
      const double e = scaled ? emulate_nrm2_scaled(x, nz, t.arith) : emulate_reduce(t.kind, x, y, nz, t.order, t.arith);
      expected.push_back(round_double(*t.out, e, out_rounder).code);
    }
  }
  if (t.kind == ReduceKind::Nrm2 && !scaled && overflow_vectors > 0) {
    r.status = CaseStatus::NotSupported;
    r.reason = fmt::format("{} vector(s) whose squares pass the accumulator's range ({}): the kernel declares an unscaled nrm2, "
                           "which is not meant for them (the trap a scaled nrm2 avoids)", overflow_vectors, t.arith.acc->tag);
    return finish();
  }

  const bool device = api.is_device();
  const int warmups = opt.warmups >= 0 ? opt.warmups : (device ? 3 : 0);
  const int timed = opt.timed >= 0 ? opt.timed : (device ? 10 : 1);
  const int cb = container_bytes(*t.out);
  const std::int64_t ldo = count + opt.ldc_pad;
  const std::uint64_t pre = prefill_code(*t.out);
  std::vector<std::uint64_t> codes;
  std::vector<std::vector<std::uint64_t>> later;
  std::vector<double> times;
  InputReport in_rep;
  std::int64_t runs_differ = 0, first_differ_run = -1, first_differ_index = -1, out_guard = 0;
  std::string first_out_guard;
  auto pack = [&](const std::vector<std::uint64_t>& c, const Format& f) {
    const int b = container_bytes(f);
    std::vector<std::uint8_t> out(c.size() * static_cast<std::size_t>(b));
    for (std::int64_t v = 0; v < count; ++v)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t at = axis == ReduceAxis::Rows ? v * n + i : i * count + v;
        store_code(out.data(), at, b, to_container(f, c[static_cast<std::size_t>(v * n + i)]));
      }
    return out;
  };
  const ReduceKernel* kp = &kernel;
  (void)kp;
  const bool ran = run_kernel_guarded(r, [&] {
    const int xb = container_bytes(*t.x_input), yb = container_bytes(*t.y_input);
    const std::int64_t rows = axis == ReduceAxis::Rows ? count : n, cols = axis == ReduceAxis::Rows ? n : count;
    GuardedInput dx(api, pack(xcodes, *t.x_input), rows, cols, padded_ld(cols, xb), xb, opt.guard_bytes, false);
    std::unique_ptr<GuardedInput> dy;
    if (dot) dy = std::make_unique<GuardedInput>(api, pack(ycodes, *t.y_input), rows, cols, padded_ld(cols, yb), yb, opt.guard_bytes, false);
    GuardedBuffer dout(api, static_cast<std::size_t>(ldo * cb), opt.guard_bytes);
    dout.prefill(1, count, ldo, cb, to_container(*t.out, pre));
    ReduceOperands ops;
    ops.count = count;
    ops.length = n;
    ops.axis = axis;
    ops.x = dx.elements();
    ops.ldx = dx.ld();
    if (dy) {
      ops.y = dy->elements();
      ops.ldy = dy->ld();
    }
    ops.out = dout.elements();
    ops.stream = api.stream();
    auto check = [&](std::vector<std::uint64_t>& into) {
      const GuardReport g = dout.download_and_check();
      out_guard += g.changed;
      if (first_out_guard.empty() && g.changed)
        first_out_guard = g.where == GuardReport::Where::Padding ? fmt::format("into the output's padding at element {}", g.col)
                          : g.where == GuardReport::Where::Before ? fmt::format("byte -{} before the output", g.offset)
                                                                  : fmt::format("byte {} after the output", g.offset);
      into.assign(static_cast<std::size_t>(count), 0);
      for (std::int64_t v = 0; v < count; ++v) into[static_cast<std::size_t>(v)] = from_container(*t.out, dout.code(0, v));
      for (GuardedInput* in : {&dx, dy.get()}) {
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
    const int runs = std::max(timed, s.min_runs);
    std::vector<std::uint64_t> again;
    for (int q = 0; q < warmups + runs; ++q) {
      if (q >= warmups) api.timer_start();
      kernel.run(ops);
      if (q >= warmups) times.push_back(api.timer_stop_ms());
      api.synchronize(opt.timeout_ms);
      check(again);
      if (again != codes) {
        ++runs_differ;
        if (first_differ_run < 0) {
          first_differ_run = q + 1;
          for (std::size_t v = 0; v < again.size(); ++v)
            if (again[v] != codes[v]) {
              first_differ_index = static_cast<std::int64_t>(v);
              break;
            }
        }
        if (run_to_run && later.size() < 16 && std::find(later.begin(), later.end(), again) == later.end()) later.push_back(again);
      }
    }
  });
  if (!ran) return finish();
  if (opt.output) {  // the checked run's results (fpcert diagnose reads them), count values
    opt.output->resize(codes.size());
    for (std::size_t v = 0; v < codes.size(); ++v) (*opt.output)[v] = to_double(*t.out, codes[v]);
  }
  if (!times.empty()) {
    std::vector<double> ts = times;
    r.time_ms_median = quantile(ts, 0.5);
    r.time_ms_mean = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    r.timed_runs = static_cast<int>(times.size());
  }
  pin_fp_env();  // grade in round to nearest without FTZ/DAZ, whatever the kernel left

  // Grade one run's results, vector by vector.
  auto grade_run = [&](const std::vector<std::uint64_t>& got_codes, bool with_bitwise) {
    Graded g;
    for (std::int64_t v = 0; v < count; ++v) {
      const auto vi = static_cast<std::size_t>(v);
      const std::uint64_t code = got_codes[vi];
      if (t.out->has_nan() && code == pre) {
        if (g.first_unwritten < 0) g.first_unwritten = v;
        ++g.unwritten;
        continue;
      }
      const double got = to_double(*t.out, code);
      if (with_bitwise) {
        const std::uint64_t e = expected[vi];
        const bool same = e == code || (std::isnan(got) && std::isnan(to_double(*t.out, e)));
        if (!same && g.first_mismatch < 0) {
          g.first_mismatch = v;
          g.mismatch_detail = fmt::format("vector {}: got {} ({:.9g}), the declared arithmetic gives {} ({:.9g})", v, hex(code), got,
                                          hex(e), to_double(*t.out, e));
        }
        g.mismatches += !same;
      }
      const ReduceRef& rf = ref[vi];
      if (rf.status & kRefNonFinite) {  // special values: IEEE's answer (and either, for nrm2 with Inf and NaN)
        const double want = rf.value.hi;
        const bool ok = (rf.status & kRefInfAndNaN) ? (std::isnan(got) || got == INFINITY)
                        : std::isnan(want)         ? std::isnan(got)
                                                   : got == want;
        if (!ok) {
          if (g.first_special < 0) {
            g.first_special = v;
            g.special_detail = fmt::format("vector {}: got {:.6g} where the inputs' special values give {}", v, got,
                                           (rf.status & kRefInfAndNaN) ? "+Inf or NaN" : fmt::format("{}", want));
          }
          ++g.special_bad;
        }
        continue;
      }
      const Rounded ro = round_ref(*t.out, rf.value, out_rounder);
      const double ref_out = to_double(*t.out, ro.code);
      if (!std::isfinite(ref_out)) {
        ++g.ref_overflow;
        continue;
      }
      if (!std::isfinite(got)) {
        if (g.first_nonfinite < 0) g.first_nonfinite = v;
        ++g.nonfinite;
        continue;
      }
      const double err = std::fabs((got - rf.value.hi) - rf.value.lo);
      g.max_abs = std::max(g.max_abs, err);
      g.err2 += err * err;
      g.ref2 += rf.value.hi * rf.value.hi;
      g.ref_max = std::max(g.ref_max, std::fabs(rf.value.hi));
      if (cancellation_dominated(rf.value.hi, rf.abs_sum)) ++g.ulp_cancelled;
      else g.ulps.push_back(ulp_distance(*t.out, code, rf.value));
      const ReduceBound& b = bound[vi];
      if (!b.applicable || !b.overflow_free) {
        ++g.unjudged;
        continue;
      }
      const double allowed = b.total + storage[vi];
      const double frac = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
      ++g.judged;
      g.above += frac > 1;
      if (allowed >= std::fabs(rf.value.hi)) ++g.vacuous;
      g.fracs.push_back(frac);
      if (g.worst < 0 || frac > g.frac_max) g.frac_max = frac, g.worst = v;
    }
    return g;
  };
  Graded g = grade_run(codes, bitwise);
  int graded_runs = 1;
  std::int64_t later_over = 0;
  double later_frac = 0;
  for (const auto& l : later) {  // a run-to-run kernel: every distinct later result graded by the envelope as well
    const Graded gl = grade_run(l, false);
    ++graded_runs;
    later_frac = std::max(later_frac, gl.frac_max);
    later_over += gl.frac_max > 1 || gl.nonfinite || gl.special_bad;
  }

  Metrics& m = r.metrics;
  m.max_abs = g.max_abs;
  m.frobenius_rel = g.ref2 > 0 ? std::sqrt(g.err2 / g.ref2) : 0;  // over the results as one vector
  m.max_rel = g.ref_max > 0 ? g.max_abs / g.ref_max : 0;
  m.ref_max_abs = g.ref_max;
  m.err_frac_max = g.frac_max;
  m.err_frac_median = quantile(g.fracs, 0.5);
  m.err_frac_p99 = quantile(g.fracs, 0.99);
  m.ulp_max = g.ulps.empty() ? 0 : *std::max_element(g.ulps.begin(), g.ulps.end());
  m.ulp_median = quantile(g.ulps, 0.5);
  m.ulp_p99 = quantile(g.ulps, 0.99);
  m.ulp_cancelled = g.ulp_cancelled;
  m.nonfinite = g.nonfinite;
  m.first_nonfinite = g.first_nonfinite;
  m.ref_overflow = g.ref_overflow;
  m.unwritten = g.unwritten;
  m.first_unwritten = g.first_unwritten;
  m.guard_violations = out_guard;
  m.first_guard_violation = first_out_guard;
  m.deterministic = runs_differ == 0;
  r.tier = bitwise ? Tier::Bitwise : Tier::Envelope;
  r.vacuous = g.judged == 0 || g.vacuous == g.judged;
  r.worst_index = g.worst;
  ReductionResult& rr = *r.reduction;
  rr.bitwise_mismatches = g.mismatches;
  rr.vacuous_vectors = g.vacuous;
  rr.unjudged_vectors = g.unjudged;
  rr.worst_vector = g.worst;
  rr.runs = graded_runs;
  // Results beyond the envelope (the bound, special values, Inf/NaN where the exact value is finite): fpcert diagnose's
  // envelope column of the declared arithmetic.
  r.achieved["envelope_exceed_elements"] = static_cast<double>(g.above + g.special_bad + g.nonfinite);
  if (g.worst >= 0) {
    const ReduceBound& b = bound[static_cast<std::size_t>(g.worst)];
    rr.worst_bound = b.total + storage[static_cast<std::size_t>(g.worst)];
    r.envelope.terms.clear();
    for (const ReduceBoundTerm& term : b.terms) r.envelope.terms.push_back({term.name, term.value, term.law});
    if (storage[static_cast<std::size_t>(g.worst)] > 0)
      r.envelope.terms.push_back({fmt::format("storage ({} inputs)", t.x_input->tag), storage[static_cast<std::size_t>(g.worst)],
                                  "|exact(stored inputs) - exact(source inputs)|, computed"});
    r.envelope.allowed = "|got - exact| <= the vector's bound (oracle/reduce/reduce_bound.hpp), per vector";
    r.envelope.arithmetic = to_text(b);
  }
  if (!r.vacuous) r.evidence.push_back("accumulation");

  auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured = 0, double limit = 0) {
    r.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
  };
  if (bitwise)
    add(CheckKind::Bitwise, g.mismatches == 0,
        g.mismatches ? fmt::format("{} of {} vector(s) differ from the emulation of the declared order ({}); first: {}", g.mismatches,
                                   count, describe(t.order), g.mismatch_detail)
                     : fmt::format("all {} vector(s) equal to the emulation of the declared order ({}) bit for bit", count - g.unwritten,
                                   scaled ? "LAPACK 3.10 scaled nrm2" : describe(t.order)),
        g.first_mismatch, static_cast<double>(g.mismatches), 0);
  add(CheckKind::Envelope, g.frac_max <= 1,
      g.judged == 0 ? fmt::format("no vector judged by the bound ({} beyond what it covers)", g.unjudged)
                    : fmt::format("max error / bound {:.3g} over {} vector(s) (vector {}){}{}", g.frac_max, g.judged, g.worst,
                                  g.vacuous ? fmt::format("; {} vacuous (bound >= |exact|)", g.vacuous) : "",
                                  g.unjudged ? fmt::format("; {} not covered by the bound", g.unjudged) : ""),
      g.frac_max > 1 ? g.worst : -1, g.frac_max, 1);
  add(CheckKind::SpecialValues, g.special_bad == 0,
      g.special_bad ? fmt::format("{} vector(s) with wrong special values; first: {}", g.special_bad, g.special_detail)
                    : "special values (Inf/NaN inputs) as IEEE 754 gives them",
      g.first_special);
  add(CheckKind::Nonfinite, g.nonfinite == 0,
      g.nonfinite ? fmt::format("{} result(s) Inf/NaN where the exact value is finite in {}, first vector {}", g.nonfinite, t.out->tag,
                                g.first_nonfinite)
                  : "no Inf/NaN where the exact value is finite",
      g.first_nonfinite);
  add(CheckKind::Unwritten, g.unwritten == 0,
      g.unwritten ? fmt::format("{} result(s) never written (still the pre-fill pattern), first vector {}", g.unwritten, g.first_unwritten)
                  : "every result written",
      g.first_unwritten);
  add_buffer_checks(r, out_guard, first_out_guard, in_rep);
  if (run_to_run)
    add(CheckKind::Spread, later_over == 0,
        later_over ? fmt::format("{} later run(s) beyond the bound (max error / bound {:.3g})", later_over, later_frac)
                   : fmt::format("declared run-to-run: {} distinct later result(s), each within the bound (max error / bound {:.3g})",
                                 later.size(), later_frac),
        -1, later_frac, 1);
  else
    add(CheckKind::Nondeterministic, runs_differ == 0,
        runs_differ ? fmt::format("{} of {} later run(s) differ from the first, the first at run {} (vector {})", runs_differ, times.size() + static_cast<std::size_t>(warmups),
                                  first_differ_run, first_differ_index)
                    : fmt::format("{} later run(s) bitwise equal to the first", times.size() + static_cast<std::size_t>(warmups)),
        first_differ_index);
  decide(r);
  return finish();
}

}  // namespace fpcert
