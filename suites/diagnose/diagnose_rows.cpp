// suites/diagnose/diagnose_rows.cpp — see diagnose_rows.hpp.
#include "suites/diagnose/diagnose_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/round.hpp"
#include "oracle/ulp.hpp"
#include "suites/diagnose/diagnose.hpp"
#include "suites/run/operation.hpp"
#include "suites/run/suite.hpp"

namespace fpcert {
namespace {

bool same(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) || (std::isnan(a) && std::isnan(b)); }

std::uint64_t mix(std::uint64_t v) {  // splitmix64's finaliser
  v += 0x9e3779b97f4a7c15ULL;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

std::uint64_t value_key(double v) { return std::isnan(v) ? 0x7ff8000000000000ULL : std::bit_cast<std::uint64_t>(v); }

/// Distance in ulps of `out` between two of its values (Inf when one is NaN and the other not).
double ulps(const Format& out, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0.0 : std::numeric_limits<double>::infinity();
  const Rounder rn = Rounder::nearest(out);
  return std::fabs(static_cast<double>(code_ordinal(out, round_double(out, a, rn).code) - code_ordinal(out, round_double(out, b, rn).code)));
}

const Format& out_format(const std::string& kernel) {
  if (auto k = make_reduce_kernel(kernel)) return *k->reduce_traits().out;
  if (auto k = make_softmax_kernel(kernel)) return *k->softmax_traits().arith.out;
  if (auto k = make_norm_kernel(kernel)) return *k->norm_traits().arith.out;
  throw InputError("diagnose: '" + kernel + "' is not a reduction, softmax or norm kernel");
}

const Format& in_format(const std::string& kernel) {
  if (auto k = make_reduce_kernel(kernel)) return *k->reduce_traits().x_input;
  if (auto k = make_softmax_kernel(kernel)) return *k->softmax_traits().x_input;
  if (auto k = make_norm_kernel(kernel)) return *k->norm_traits().x_input;
  throw InputError("diagnose: '" + kernel + "' is not a reduction, softmax or norm kernel");
}

/// The index of case `id` in run r, or -1.
std::ptrdiff_t case_at(const RowRun& r, const std::string& id) {
  const auto it = std::find(r.case_ids.begin(), r.case_ids.end(), id);
  return it == r.case_ids.end() ? -1 : it - r.case_ids.begin();
}

/// Elements of `r`'s cases beyond their envelope (the runner's count), summed; -1 when a case in `ids` was not graded.
std::int64_t envelope_exceed(const RowRun& r, const std::vector<std::string>& ids) {
  std::int64_t n = 0;
  for (const std::string& id : ids) {
    const std::ptrdiff_t c = case_at(r, id);
    if (c < 0 || r.out[static_cast<std::size_t>(c)].empty()) return -1;
    const auto& a = r.results[static_cast<std::size_t>(c)].achieved;
    const auto it = a.find("envelope_exceed_elements");
    if (it == a.end()) return -1;
    n += static_cast<std::int64_t>(it->second);
  }
  return n;
}

}  // namespace

RowRun run_row_kernel(const std::string& kernel, const std::string& suite, const std::vector<std::string>& cases) {
  const auto op = row_operation(kernel);
  if (!op) throw InputError("diagnose: '" + kernel + "' is not a reduction, softmax or norm kernel");
  const SuiteInfo* si = find_suite(suite);
  if (!si) throw InputError("diagnose: unknown suite '" + suite + "'");
  SuiteRunOptions o;
  std::vector<double> buf;
  o.run.output = &buf;
  RowRun rr;
  if (!cases.empty())
    o.select = [&cases](const std::string& id, const std::string&) { return std::find(cases.begin(), cases.end(), id) != cases.end(); };
  o.on_case = [&](const CaseResult& r) {
    rr.case_ids.push_back(r.case_id);
    rr.out.push_back(buf);
    rr.results.push_back(r);
    buf.clear();
  };
  (void)operation_runner(*op).run(*si, {kernel}, o);
  for (const std::string& id : cases)
    if (case_at(rr, id) < 0) throw InputError(fmt::format("diagnose: suite '{}' has no case '{}' for {}", suite, id, kernel));
  return rr;
}

RowHypothesisSet row_hypothesis_set(const std::string& base, const std::string& suite, const std::vector<std::string>& cases) {
  RowHypothesisSet s;
  s.base = base;
  s.suite = suite;
  s.cases = cases;
  for (RowHypothesisSpec& h : row_hypothesis_specs(base, &s.notes)) {
    RowHypothesis x;
    x.spec = std::move(h);
    x.run = run_row_kernel(x.spec.kernel, suite, cases);
    s.hs.push_back(std::move(x));
  }
  return s;
}

DiagnosisRecord diagnose_rows(const std::string& kernel, const std::string& declared, const Format& out, const RowRun& got,
                              const RowHypothesisSet& hs, int top, int unexplained, double consistent) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t nh = hs.hs.size();
  if (nh == 0) throw InputError("diagnose " + kernel + ": no hypothesis");
  std::vector<DiagnosisHypothesis> res(nh);
  std::vector<std::uint64_t> digest(nh, 0);
  std::int64_t total = 0;
  struct Miss {
    std::size_t c, e;
  };
  std::vector<Miss> misses;
  std::vector<std::string> graded;  // the cases the kernel ran
  for (std::size_t c = 0; c < got.case_ids.size(); ++c) {
    const std::vector<double>& g = got.out[c];
    if (g.empty()) continue;
    graded.push_back(got.case_ids[c]);
    std::vector<std::uint8_t> explained(g.size(), 0);
    for (std::size_t h = 0; h < nh; ++h) {
      const RowRun& hr = hs.hs[h].run;
      const std::ptrdiff_t hc = case_at(hr, got.case_ids[c]);
      const std::vector<double>* w = hc < 0 ? nullptr : &hr.out[static_cast<std::size_t>(hc)];
      if (w && w->size() != g.size()) w = nullptr;
      DiagnosisHypothesis& d = res[h];
      for (std::size_t e = 0; e < g.size(); ++e) {
        const std::uint64_t at = (static_cast<std::uint64_t>(c) << 40) ^ (static_cast<std::uint64_t>(e) << 1);
        if (!w) {
          digest[h] += mix(at ^ 0x5bd1e995ULL);  // not computed here: equal to no computed hypothesis
          d.max_ulps = std::numeric_limits<double>::infinity();
          continue;
        }
        const double v = (*w)[e];
        digest[h] += mix(at ^ mix(value_key(v)));
        if (same(v, g[e])) {
          ++d.matched;
          explained[e] = 1;
        } else {
          d.max_ulps = std::max(d.max_ulps, ulps(out, v, g[e]));
        }
      }
    }
    for (std::size_t e = 0; e < g.size() && misses.size() < static_cast<std::size_t>(std::max(unexplained, 0)); ++e)
      if (!explained[e]) misses.push_back({c, e});
    total += static_cast<std::int64_t>(g.size());
  }
  if (total == 0)
    throw InputError(fmt::format("diagnose {}: the kernel produced no result on these cases{}", kernel,
                                 got.results.empty() || got.results.front().reason.empty() ? "" : ": " + got.results.front().reason));
  for (std::size_t h = 0; h < nh; ++h) {
    DiagnosisHypothesis& d = res[h];
    const RowHypothesisSpec& sp = hs.hs[h].spec;
    d.id = sp.id;
    d.what = sp.what;
    d.changes = sp.changes;
    d.tighter = sp.tighter;
    d.elements = total;
    d.envelope_exceed = h == 0 && hs.hs[0].envelope_exceed < 0 ? envelope_exceed(got, graded) : hs.hs[h].envelope_exceed;
    d.envelope_holds = d.envelope_exceed == 0;
    for (std::size_t g = 0; g < nh; ++g)
      if (g != h && digest[g] == digest[h]) d.same_as.push_back(hs.hs[g].spec.id);
  }
  std::vector<std::size_t> order(nh);
  for (std::size_t h = 0; h < nh; ++h) order[h] = h;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return diagnosis_better(res[x], res[y], false); });

  DiagnosisRecord r;
  r.kernel = kernel;
  r.declared = declared;
  r.cases = graded;
  r.tried = static_cast<std::int64_t>(nh);
  std::int64_t failed = 0;  // the runner's failed checks, the first few (each case's are in certify's report)
  for (std::size_t c = 0; c < got.results.size(); ++c)
    for (const CheckResult& k : got.results[c].checks)
      if (!k.passed && ++failed <= 4) r.failed_checks.push_back(fmt::format("{}: {}: {}", got.case_ids[c], to_string(k.kind), k.detail));
  if (failed > 4) r.failed_checks.push_back(fmt::format("... and {} more failed check(s) on these cases", failed - 4));
  const DiagnosisHypothesis& best = res[order[0]];
  const DiagnosisHypothesis& decl = res[0];
  const bool declared_top = order[0] == 0 || std::find(best.same_as.begin(), best.same_as.end(), "declared") != best.same_as.end();
  const bool explains = static_cast<double>(best.matched) >= consistent * static_cast<double>(total);
  const auto share = [&](const DiagnosisHypothesis& h) {
    return fmt::format("bit for bit on {} of elements ({} of {})", diagnosis_share_text(h), h.matched, total);
  };
  const std::string alike =
      best.same_as.empty() ? "" : fmt::format("; indistinguishable on every case from {}", fmt::join(best.same_as, ", "));
  const std::string env = decl.envelope_exceed < 0   ? "the declared envelope not judged on every case"
                          : decl.envelope_exceed == 0 ? "the declared envelope holds on every element"
                                                      : fmt::format("the declared envelope exceeded on {} element(s)", decl.envelope_exceed);
  // The declared model is the declaration bit for bit: where it misses elements, those must still lie within the declared
  // envelope for the output to be called declared (a masked-row policy of its own on 2 % of a softmax's elements is not).
  if (explains && declared_top && (decl.matched == total || decl.envelope_exceed == 0)) {
    r.kind = "declared";
    r.verdict = fmt::format("consistent with the declared arithmetic: {}; {}", share(decl), env);
  } else if (explains && !declared_top) {
    // A member of the declared family (an order where "any order" is declared) or a more precise arithmetic, within the
    // declared envelope everywhere: the kernel keeps its declaration, and could name what it computes (exit code 0, as
    // the GEMM diagnosis's "hint").
    r.kind = best.tighter && decl.envelope_exceed == 0 ? "hint" : "consistent";
    r.verdict = fmt::format("consistent with {} [{}]: {}, {}{}; {}", best.what, best.id, share(best), diagnosis_envelope_text(best), alike, env);
    if (r.kind == "hint") r.verdict += "; within the declaration (a member of the family it declares, or more precise): it could name it";
  } else if (decl.envelope_exceed == 0) {
    r.kind = "declared";
    r.verdict = fmt::format("within the declared envelope on every element; no known arithmetic reproduces it bit for bit: at best {} [{}], {}",
                            diagnosis_share_text(best), best.id, share(best));
  } else {
    r.kind = "logic_error";
    std::vector<std::string> xs;
    for (const Miss& m : misses) xs.push_back(fmt::format("{}[{}]", got.case_ids[m.c], m.e));
    r.verdict = fmt::format("no known arithmetic explains it — a logic error; the closest is {} [{}], {}; {}; the first elements no "
                            "hypothesis explains are {}",
                            best.what, best.id, share(best), env,
                            xs.empty() ? "(none: each element is explained by some hypothesis, no one by all)" : fmt::format("{}", fmt::join(xs, ", ")));
  }
  // No CPU model declares the kernel's arithmetic: the hypotheses are made from the kernel itself, so `declared` is its own
  // output and proves nothing. Its declaration is then judged by the runner's checks alone: a failed one (an envelope
  // exceeded, a declared order not reproduced bit for bit) is no "declared" verdict.
  if (hs.base == kernel && failed > 0 && (r.kind == "declared" || r.kind == "hint")) {
    const DiagnosisHypothesis& other = best.id == "declared" && order.size() > 1 ? res[order[1]] : best;
    r.kind = "logic_error";
    r.verdict = fmt::format("the kernel fails the checks of its own declaration on these cases ({} failed check(s), the first: {}); no CPU "
                            "model declares its arithmetic, so `declared` is the kernel's own output and no evidence; the closest other "
                            "hypothesis: {} [{}], {}",
                            failed, r.failed_checks.front(), other.what, other.id, share(other));
  }
  if (r.kind == "declared" && decl.matched == total) {
    for (std::size_t h = 1; h < nh; ++h)
      if (res[h].tighter && res[h].matched == total) {
        r.hint_id = res[h].id;
        r.hint = fmt::format("{} reproduces every element too: the declaration could be tightened to it", res[h].what);
        break;
      }
  }
  const std::ptrdiff_t bi = static_cast<std::ptrdiff_t>(order[0]);
  for (const Miss& m : misses) {
    const std::string& id = got.case_ids[m.c];
    const CaseResult& cr = got.results[m.c];
    const auto value_of = [&](std::size_t h) {
      const RowRun& hr = hs.hs[h].run;
      const std::ptrdiff_t hc = case_at(hr, id);
      if (hc < 0 || hr.out[static_cast<std::size_t>(hc)].size() <= m.e) return std::numeric_limits<double>::quiet_NaN();
      return hr.out[static_cast<std::size_t>(hc)][m.e];
    };
    DiagnosisElement e;
    const std::int64_t cols = cr.n > 0 && cr.m * cr.n == static_cast<std::int64_t>(got.out[m.c].size()) ? cr.n : 1;
    e.i = static_cast<std::int64_t>(m.e) / cols;
    e.j = static_cast<std::int64_t>(m.e) % cols;
    e.got = got.out[m.c][m.e];
    e.ref = value_of(0);
    e.best = value_of(static_cast<std::size_t>(bi));
    e.case_label = fmt::format("{} element {} (row {}, column {}): got {:.9g}, declared model {:.9g}, {} {:.9g}", id, m.e, e.i, e.j, e.got,
                               e.ref, res[order[0]].id, e.best);
    r.unexplained.push_back(e);
  }
  for (int k = 0; k < top && k < static_cast<int>(nh); ++k) r.ranked.push_back(res[order[static_cast<std::size_t>(k)]]);
  r.notes = hs.notes;
  r.notes.push_back(
      "the hypotheses are the declared CPU model, the model with each fault of the operation's catalogue injected by its own fault "
      "injector, and the numeric variants the oracle emulates (docs/diagnose.md, \"Reductions, softmax and normalisation\"); each is run "
      "on the same suite cases through the operation's runner; envelope: the kernel's output judged by the hypothesis's bound (a fault "
      "has none); ref of an unexplained element: the declared model's value");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

DiagnosisRecord diagnose_row_kernel(const std::string& kernel, const std::string& suite, const std::vector<std::string>& cases, int top,
                                    const RowHypothesisSet* cached, const std::string& declared_as) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string note;
  const bool as = !declared_as.empty();
  if (as && row_operation(declared_as) != row_operation(kernel))
    throw InputError(fmt::format("diagnose: --declared-as {}: not a kernel of {}'s operation", declared_as, kernel));
  if (as && (in_format(declared_as) != in_format(kernel) || out_format(declared_as) != out_format(kernel)))
    throw InputError(fmt::format("diagnose: --declared-as {}: its input and output formats must be {}'s", declared_as, kernel));
  const std::string base = as ? declared_as : row_base_kernel(kernel, &note);
  if (as) note = fmt::format("judged against {}'s declaration (--declared-as): the hypotheses are made from it", declared_as);
  RowHypothesisSet set;
  if (cached && cached->base == base && cached->suite == suite && cached->cases == cases) set = *cached;
  else set = row_hypothesis_set(base, suite, cases);
  const RowRun got = run_row_kernel(kernel, suite, cases);
  std::vector<std::string> ran;
  for (std::size_t c = 0; c < got.case_ids.size(); ++c)
    if (!got.out[c].empty()) ran.push_back(got.case_ids[c]);
  for (RowHypothesis& h : set.hs)
    if (h.spec.declared_as && !ran.empty() && (as || h.spec.id != "declared")) h.envelope_exceed = envelope_exceed(run_row_kernel(h.spec.declared_as(kernel), suite, ran), ran);
  set.notes.insert(set.notes.begin(), note);
  const RowRun& src = as ? set.hs.front().run : got;  // whose declaration: the base's with --declared-as
  const std::string declared = src.results.empty() ? std::string() : src.results.front().kernel_traits;
  DiagnosisRecord r = diagnose_rows(kernel, declared, out_format(kernel), got, set, top);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<RowIdentificationRow> measure_row_identification(const std::vector<std::string>& models, const std::vector<Fault>& faults,
                                                             const std::string& suite, const std::vector<std::string>& cases) {
  std::vector<RowIdentificationRow> rows;
  for (const std::string& m : models) {
    if (!row_operation(m)) throw InputError("diagnose --identify: '" + m + "' is not a reduction, softmax or norm kernel");
    const RowHypothesisSet set = row_hypothesis_set(row_base_kernel(m), suite, cases);  // once per model: every fault's diagnosis reuses it
    for (const RowHypothesis& h : set.hs) {
      if (!h.spec.fault || (!faults.empty() && std::find(faults.begin(), faults.end(), *h.spec.fault) == faults.end())) continue;
      const auto t0 = std::chrono::steady_clock::now();
      RowIdentificationRow row;
      row.model = m;
      row.fault = std::string(fault_info(*h.spec.fault).id);
      // Dormant: the fault's results equal the model's on every case (nothing to identify).
      bool differs = h.run.case_ids != set.hs[0].run.case_ids;
      for (std::size_t c = 0; !differs && c < h.run.out.size(); ++c) {
        const auto& a = h.run.out[c];
        const auto& b = set.hs[0].run.out[c];
        differs = a.size() != b.size() || !std::equal(a.begin(), a.end(), b.begin(), same);
      }
      row.dormant = !differs;
      const DiagnosisRecord r = diagnose_row_kernel(h.spec.kernel, suite, cases, 8, &set);
      row.kind = r.kind;
      if (!r.ranked.empty()) {
        row.top = r.ranked.front().id;
        row.top_fraction = r.ranked.front().fraction();
        row.alike = r.ranked.front().same_as;
      }
      row.identified = !row.dormant && r.kind == "consistent" && top_is(r, h.spec.id);
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace fpcert
