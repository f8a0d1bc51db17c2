// suites/run/row_case.cpp — the runs, tallies, metrics and checks the row operations' case runners share
// (suites/run/row_case.hpp).
#include "suites/run/row_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "oracle/ulp.hpp"

namespace fpcert {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

RowRuns row_runs(const DeviceApi& api, const RunOptions& opt) {
  RowRuns runs;
  const bool device = api.is_device();
  runs.warmups = opt.warmups >= 0 ? opt.warmups : (device ? 3 : 0);
  runs.timed = opt.timed >= 0 ? opt.timed : (device ? 10 : 1);
  return runs;
}

void run_rows(RowRuns& runs, DeviceApi& api, const RunOptions& opt, GuardedBuffer& dout, const Format& out, std::int64_t rows,
              std::int64_t cols, std::initializer_list<GuardedInput*> inputs, const std::function<void()>& launch,
              const std::function<void()>& after_each) {
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  auto check = [&](std::vector<std::uint64_t>& into) {
    const GuardReport g = dout.download_and_check();
    runs.out_guard += g.changed;
    if (runs.first_out_guard.empty() && g.changed)
      runs.first_out_guard = g.where == GuardReport::Where::Padding ? fmt::format("into the output's padding at row {}, column {}", g.row, g.col)
                             : g.where == GuardReport::Where::Before ? fmt::format("byte -{} before the output", g.offset)
                                                                     : fmt::format("byte {} after the output", g.offset);
    into.assign(total, 0);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) into[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = from_container(out, dout.code(i, j));
    for (GuardedInput* in : inputs) {
      if (!in) continue;
      const InputReport q = in->check();
      InputReport& rep = runs.inputs;
      if (!rep.modified && q.modified) rep.first_modified = q.first_modified;
      if (!rep.guard_changed && q.guard_changed) rep.first_guard = q.first_guard;
      rep.modified = std::max(rep.modified, q.modified);
      rep.guard_changed = std::max(rep.guard_changed, q.guard_changed);
    }
  };
  launch();
  api.synchronize(opt.timeout_ms);
  check(runs.codes);
  if (after_each) after_each();
  std::vector<std::uint64_t> again;
  for (int q = 0; q < runs.warmups + runs.timed; ++q) {
    if (q >= runs.warmups) api.timer_start();
    launch();
    if (q >= runs.warmups) runs.times.push_back(api.timer_stop_ms());
    api.synchronize(opt.timeout_ms);
    check(again);
    if (after_each) after_each();
    if (again != runs.codes) {
      ++runs.runs_differ;
      if (runs.first_differ_run < 0) {
        runs.first_differ_run = q + 1;
        for (std::size_t e = 0; e < again.size(); ++e)
          if (again[e] != runs.codes[e]) {
            runs.first_differ_index = static_cast<std::int64_t>(e);
            break;
          }
      }
    }
  }
}

void RowGrades::unwritten(std::int64_t e) {
  if (first_unwritten_ < 0) first_unwritten_ = e;
  ++unwritten_;
}

void RowGrades::special_wrong(std::int64_t e, std::string detail) {
  if (first_special_ < 0) {
    first_special_ = e;
    special_detail_ = std::move(detail);
  }
  ++special_bad_;
}

void RowGrades::graded(std::int64_t e, const Format& out, std::uint64_t code, std::uint64_t ref_code, double got, double want,
                       double bound) {
  if (!std::isfinite(got)) {
    if (first_nonfinite_ < 0) first_nonfinite_ = e;
    ++nonfinite_;
    return;
  }
  const double err = std::fabs(got - want);
  max_abs_ = std::max(max_abs_, err);
  err2_ += err * err;
  ref2_ += want * want;
  ref_max_ = std::max(ref_max_, std::fabs(want));
  ulps_.push_back(std::fabs(static_cast<double>(code_ordinal(out, code) - code_ordinal(out, ref_code))));
  if (!std::isfinite(bound)) {
    ++unjudged_;
    return;
  }
  const double frac = bound > 0 ? err / bound : (err > 0 ? kInf : 0.0);
  ++judged_;
  above_ += frac > 1;
  if (bound >= std::fabs(want)) ++vacuous_;
  fracs_.push_back(frac);
  if (worst_ < 0 || frac > frac_max_) frac_max_ = frac, worst_ = e;
}

void RowGrades::heuristics(double got, double want) {
  const bool close = got == want || std::fabs(got - want) <= 1e-2 + 1e-2 * std::fabs(want);  // NaN: false
  allclose_refused_ += !close;
  const double d = std::fabs(got - want);
  if (std::isnan(d)) heur_nan_ = true;
  else heur_max_ = std::max(heur_max_, d);
}

void RowGrades::record_metrics(CaseResult& r, const RowRuns& runs) const {
  // Read by the mutation campaign (suites/mutation/row_mutation.hpp: HeuristicVerdicts). Infinity is kept as a flag:
  // the results' JSON holds finite numbers only.
  r.achieved["heuristic_allclose_refused_elements"] = static_cast<double>(allclose_refused_);
  r.achieved["heuristic_maxabs"] = std::isinf(heur_max_) ? 0.0 : heur_max_;
  r.achieved["heuristic_maxabs_inf"] = std::isinf(heur_max_) ? 1.0 : 0.0;
  r.achieved["heuristic_maxabs_nan"] = heur_nan_ ? 1.0 : 0.0;
  // Elements beyond the envelope (the bound, special values, Inf/NaN where the exact value is finite): fpcert diagnose's
  // envelope column of the declared arithmetic.
  r.achieved["envelope_exceed_elements"] = static_cast<double>(above_ + special_bad_ + nonfinite_);
  if (!runs.times.empty()) {
    r.time_ms_median = quantile(runs.times, 0.5);
    r.time_ms_mean = std::accumulate(runs.times.begin(), runs.times.end(), 0.0) / static_cast<double>(runs.times.size());
    r.timed_runs = static_cast<int>(runs.times.size());
  }
  Metrics& m = r.metrics;
  m.max_abs = max_abs_;
  m.frobenius_rel = ref2_ > 0 ? std::sqrt(err2_ / ref2_) : 0;
  m.max_rel = ref_max_ > 0 ? max_abs_ / ref_max_ : 0;
  m.ref_max_abs = ref_max_;
  m.err_frac_max = frac_max_;
  m.err_frac_median = quantile(fracs_, 0.5);
  m.err_frac_p99 = quantile(fracs_, 0.99);
  m.ulp_max = ulps_.empty() ? 0 : *std::max_element(ulps_.begin(), ulps_.end());
  m.ulp_median = quantile(ulps_, 0.5);
  m.ulp_p99 = quantile(ulps_, 0.99);
  m.nonfinite = nonfinite_;
  m.first_nonfinite = first_nonfinite_;
  m.ref_overflow = ref_overflow_;
  m.unwritten = unwritten_;
  m.first_unwritten = first_unwritten_;
  m.guard_violations = runs.out_guard;
  m.first_guard_violation = runs.first_out_guard;
  m.deterministic = runs.runs_differ == 0;
  r.tier = Tier::Envelope;
  r.vacuous = judged_ == 0 || vacuous_ == judged_;
  r.worst_index = worst_;
}

void add_buffer_checks(CaseResult& r, std::int64_t out_guard, const std::string& first_out_guard, const InputReport& in) {
  r.checks.push_back({CheckKind::GuardOutput, out_guard == 0,
                      out_guard ? fmt::format("{} guard byte(s) around the output changed: {}", out_guard, first_out_guard)
                                : "output guards unchanged",
                      -1, 0, 0});
  r.checks.push_back({CheckKind::GuardInputs, in.guard_changed == 0,
                      in.guard_changed ? fmt::format("{} guard/padding byte(s) of the inputs changed (first: {})", in.guard_changed, in.first_guard)
                                       : "input guards and padding unchanged",
                      -1, 0, 0});
  r.checks.push_back({CheckKind::InputsModified, in.modified == 0,
                      in.modified ? fmt::format("inputs modified by the call: {} element(s), first {}", in.modified, in.first_modified)
                                  : "inputs unchanged after every run",
                      in.first_modified, 0, 0});
}

void RowGrades::record_checks(CaseResult& r, const RowRuns& runs, const Format& out, std::int64_t cols, const std::string& special_ok) const {
  auto add = [&](CheckKind kind, bool passed, std::string detail, std::int64_t index, double measured = 0, double limit = 0) {
    r.checks.push_back({kind, passed, std::move(detail), index, measured, limit});
  };
  const InputReport& in = runs.inputs;
  const std::size_t later = runs.times.size() + static_cast<std::size_t>(runs.warmups);
  add(CheckKind::Envelope, frac_max_ <= 1,
      judged_ == 0 ? fmt::format("no element judged by the bound ({} beyond what it covers)", unjudged_)
                   : fmt::format("max error / bound {:.3g} over {} element(s) (row {}, column {}){}{}", frac_max_, judged_,
                                 worst_ >= 0 ? worst_ / cols : -1, worst_ >= 0 ? worst_ % cols : -1,
                                 vacuous_ ? fmt::format("; {} vacuous (bound >= |exact|)", vacuous_) : "",
                                 unjudged_ ? fmt::format("; {} not covered by the bound", unjudged_) : ""),
      frac_max_ > 1 ? worst_ : -1, frac_max_, 1);
  add(CheckKind::SpecialValues, special_bad_ == 0,
      special_bad_ ? fmt::format("{} element(s) with wrong special values; first: {}", special_bad_, special_detail_) : special_ok,
      first_special_);
  add(CheckKind::Nonfinite, nonfinite_ == 0,
      nonfinite_ ? fmt::format("{} result(s) Inf/NaN where the exact value is finite in {}, first element {} (row {})", nonfinite_, out.tag,
                               first_nonfinite_, first_nonfinite_ / cols)
                 : "no Inf/NaN where the exact value is finite",
      first_nonfinite_);
  add(CheckKind::Unwritten, unwritten_ == 0,
      unwritten_ ? fmt::format("{} result(s) never written (still the pre-fill pattern), first element {}", unwritten_, first_unwritten_)
                 : "every result written",
      first_unwritten_);
  add_buffer_checks(r, runs.out_guard, runs.first_out_guard, in);
  add(CheckKind::Nondeterministic, runs.runs_differ == 0,
      runs.runs_differ ? fmt::format("{} of {} later run(s) differ from the first, the first at run {} (element {})", runs.runs_differ, later,
                                     runs.first_differ_run, runs.first_differ_index)
                       : fmt::format("{} later run(s) bitwise equal to the first", later),
      runs.first_differ_index);
}

}  // namespace fpcert
