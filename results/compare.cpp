// results/compare.cpp — run-to-run comparison (compare.hpp).
#include "results/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace fpcert {

int RunComparison::count_flipped() const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [](const CaseChange& c) { return c.flipped; }));
}

namespace {
bool graded_case(const CaseResult& c) { return c.status == CaseStatus::Pass || c.status == CaseStatus::Fail; }
}  // namespace

RunComparison compare_runs(const RunResult& old_run, const RunResult& new_run, double growth_factor, double speed_factor) {
  RunComparison d;
  d.growth_factor = growth_factor;
  d.speed_factor = speed_factor;
  std::map<std::pair<std::string, std::string>, std::size_t> old_at;
  for (std::size_t i = 0; i < old_run.cases.size(); ++i) old_at.emplace(std::make_pair(old_run.cases[i].kernel, old_run.cases[i].case_id), i);
  std::vector<bool> old_seen(old_run.cases.size(), false);
  for (std::size_t ni = 0; ni < new_run.cases.size(); ++ni) {
    const CaseResult& n = new_run.cases[ni];
    const auto it = old_at.find({n.kernel, n.case_id});
    if (it == old_at.end() || old_seen[it->second]) {
      d.only_new.push_back(ni);
      continue;
    }
    old_seen[it->second] = true;
    const CaseResult& o = old_run.cases[it->second];
    ++d.matched;
    CaseChange c;
    c.kernel = n.kernel;
    c.case_id = n.case_id;
    c.old_index = it->second;
    c.new_index = ni;
    c.flipped = o.status != n.status;
    if (graded_case(o) && graded_case(n)) {
      const double of = std::max(o.metrics.err_frac_max, kCompareFracFloor), nf = std::max(n.metrics.err_frac_max, kCompareFracFloor);
      c.frac_ratio = std::isinf(nf) && std::isinf(of) ? 1 : nf / of;
      c.grew = nf > growth_factor * of || (std::isinf(nf) && !std::isinf(of));
      c.shrank = of > growth_factor * nf || (std::isinf(of) && !std::isinf(nf));
    }
    if (o.time_ms_median > 0 && n.time_ms_median > 0 && o.timed_runs >= kCompareMinTimedRuns && n.timed_runs >= kCompareMinTimedRuns) {
      c.time_ratio = n.time_ms_median / o.time_ms_median;
      c.slower = c.time_ratio > speed_factor;
      c.faster = c.time_ratio < 1 / speed_factor;
    }
    if (c.flipped || c.grew || c.shrank || c.slower || c.faster) d.changes.push_back(std::move(c));
  }
  for (std::size_t oi = 0; oi < old_run.cases.size(); ++oi)
    if (!old_seen[oi]) d.only_old.push_back(oi);
  // What a reviewer reads first: flipped verdicts, then grown error fractions, then the rest.
  std::stable_sort(d.changes.begin(), d.changes.end(), [](const CaseChange& a, const CaseChange& b) {
    auto rank = [](const CaseChange& c) { return c.flipped ? 0 : c.grew ? 1 : 2; };
    return rank(a) < rank(b);
  });
  return d;
}

std::vector<std::pair<std::size_t, std::size_t>> comparable_runs(const std::vector<RunResult>& runs) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t j = i; j-- > 0;) {
      const RunResult &o = runs[j], &n = runs[i];
      if (o.suite != n.suite || o.kind == RunKind::Conversion || n.kind == RunKind::Conversion) continue;
      if (compare_runs(o, n).matched == 0) continue;
      pairs.emplace_back(j, i);
      break;
    }
  return pairs;
}

int RunComparison::count_regressions() const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [](const CaseChange& c) { return c.grew; }));
}

namespace {
/// printf "%.3g" / "%.4g" without a format library (results/ uses none).
std::string g(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}
}  // namespace

std::string comparison_text(const RunComparison& d, const RunResult& old_run, const RunResult& new_run) {
  const auto slower = std::count_if(d.changes.begin(), d.changes.end(), [](const CaseChange& c) { return c.slower; });
  const auto faster = std::count_if(d.changes.begin(), d.changes.end(), [](const CaseChange& c) { return c.faster; });
  std::string s = "compared with " + (old_run.env.timestamp.empty() ? std::string("the old run") : "the run of " + old_run.env.timestamp) + " (" +
                  old_run.suite + "): " + std::to_string(d.matched) + " case(s) matched, " + std::to_string(d.count_flipped()) +
                  " verdict(s) flipped, " + std::to_string(d.count_regressions()) + " error fraction(s) grew more than " + g(d.growth_factor, 4) +
                  "x, " + std::to_string(slower) + " slower / " + std::to_string(faster) + " faster beyond " + g(d.speed_factor, 4) + "x; " +
                  std::to_string(d.only_old.size()) + " case(s) only in the old run, " + std::to_string(d.only_new.size()) + " only in the new\n";
  for (const CaseChange& c : d.changes) {
    const CaseResult& o = old_run.cases[c.old_index];
    const CaseResult& n = new_run.cases[c.new_index];
    std::string what;
    if (c.flipped) what += " verdict " + std::string(to_string(o.status)) + " -> " + std::string(to_string(n.status)) + ";";
    if (c.grew || c.shrank) what += " error fraction " + g(o.metrics.err_frac_max, 3) + " -> " + g(n.metrics.err_frac_max, 3) + ";";
    if (c.slower || c.faster) what += " median time " + g(o.time_ms_median, 4) + " -> " + g(n.time_ms_median, 4) + " ms;";
    what.pop_back();
    s += "  " + c.case_id + " on " + c.kernel + ":" + what + "\n";
  }
  return s;
}

}  // namespace fpcert
