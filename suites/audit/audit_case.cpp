// suites/audit/audit_case.cpp — the audit's shared tallies, findings and labels (audit_case.hpp).
#include "suites/audit/audit_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.hpp"
#include "oracle/round.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {

double half_ulp(const Format& f, double x) {
  const int e = x == 0 || !std::isfinite(x) ? f.emin() : std::max(std::ilogb(x), f.emin());
  return std::ldexp(1.0, e - f.frac_bits - 1);
}

std::string pct(std::int64_t a, std::int64_t b) { return b ? fmt::format("{:.3g} %", 100.0 * static_cast<double>(a) / static_cast<double>(b)) : "0 %"; }

std::string spec_with(const std::string& inputs, const std::vector<std::pair<std::string, std::string>>& keys) {
  const auto colon = inputs.find(':');
  std::string out = inputs.substr(0, colon) + ":";
  std::stringstream fields(colon == std::string::npos ? std::string() : inputs.substr(colon + 1));
  for (std::string f; std::getline(fields, f, ',');) {
    const std::string key = f.substr(0, f.find('='));
    if (f.empty() || std::any_of(keys.begin(), keys.end(), [&](const auto& kv) { return kv.first == key; })) continue;
    out += f + ",";
  }
  for (std::size_t i = 0; i < keys.size(); ++i) out += (i ? "," : "") + keys[i].first + "=" + keys[i].second;
  return out;
}

std::vector<double> decode(const Format& f, const std::vector<std::uint64_t>& codes) {
  std::vector<double> v(codes.size());
  for (std::size_t x = 0; x < codes.size(); ++x) v[x] = to_double(f, codes[x]);
  return v;
}

namespace {

double rn_acc(const Format& f, double x) { return to_double(f, round_double(f, x, Rounder::nearest(f)).code); }

double pairwise_sum(const double* x, std::size_t n, const Format& acc) {
  if (n == 0) return 0;
  if (n == 1) return x[0];
  const std::size_t h = n / 2;
  return rn_acc(acc, pairwise_sum(x, h, acc) + pairwise_sum(x + h, n - h, acc));
}

double sequential_sum(const double* x, std::size_t n, const Format& acc) {
  double s = 0;
  for (std::size_t j = 0; j < n; ++j) s = rn_acc(acc, s + x[j]);
  return s;
}

}  // namespace

double sum_rounded(const double* x, std::size_t n, const ReduceOrder& order, const Format& acc) {
  bool exact = true;
  for (std::size_t j = 0; j < n && exact; ++j) exact = !std::isfinite(x[j]) || rn_acc(acc, x[j]) == x[j];
  if (exact) {
    ReduceArith ra;
    ra.acc = &acc;
    ra.rounder = Rounder::nearest(acc);
    return emulate_sum(x, n, order, ra);
  }
  switch (order.kind) {
    case ReduceOrderKind::Pairwise: return pairwise_sum(x, n, acc);
    case ReduceOrderKind::Blocked: {
      const auto b = static_cast<std::size_t>(std::max(1, order.block));
      std::vector<double> parts;
      for (std::size_t s0 = 0; s0 < n; s0 += b) parts.push_back(sequential_sum(x + s0, std::min(b, n - s0), acc));
      return sequential_sum(parts.data(), parts.size(), acc);
    }
    case ReduceOrderKind::WarpTree: {
      std::vector<double> lane(static_cast<std::size_t>(order.lanes), 0.0);
      for (std::size_t j = 0; j < n; ++j) lane[j % lane.size()] = rn_acc(acc, lane[j % lane.size()] + x[j]);
      for (std::size_t off = lane.size() / 2; off >= 1; off /= 2)
        for (std::size_t l = 0; l < off; ++l) lane[l] = rn_acc(acc, lane[l] + lane[l + off]);
      return lane[0];
    }
    default: return sequential_sum(x, n, acc);
  }
}

void tally_static(AuditRecord& rec, const RuleCase& c) {
  if (!apply_rule(c.rule, c.crt, c.testref, c.allowed).pass) ++rec.cr_fail_runs;
  for (std::size_t x = 0; x < c.refd.size(); ++x) {
    ++rec.elements;
    const double a = std::fabs(c.refd[x]);
    rec.ref_abs_min = std::min(rec.ref_abs_min, a);
    rec.ref_abs_max = std::max(rec.ref_abs_max, a);
    if (!c.rule.elementwise()) continue;
    const double tol = rule_tolerance(c.rule, c.testref[x], c.allowed[x]);
    if (tol < half_ulp(*c.out, std::fabs(c.testref[x]))) ++rec.below_half_ulp;
    if (!(std::fabs(c.crt[x] - c.testref[x]) <= tol)) ++rec.cr_fail;
    if (std::fabs(c.testref[x]) <= tol) ++rec.admit_zero;
    if (tol < c.allowed[x]) {
      ++rec.below_bound;
      if (!c.abs_sum.empty() && rule_tolerance(c.rule, c.abs_sum[x], c.allowed[x]) >= c.allowed[x]) ++rec.below_bound_cancel;
    }
  }
}

void push_static_findings(AuditRecord& rec, const Format& out, int n_cases, const std::string& envelope_note) {
  if (rec.cr_fail_runs > 0)
    rec.findings.push_back(fmt::format("UNSATISFIABLE: on {} of {} seeds even the correctly rounded output fails the rule{}; "
                                       "no {} output can pass it there",
                                       rec.cr_fail_runs, n_cases,
                                       rec.elements > 0 && rec.cr_fail > 0 ? " (" + pct(rec.cr_fail, rec.elements) + " of the elements)" : std::string(),
                                       out.tag));
  if (rec.below_half_ulp > 0)
    rec.findings.push_back(fmt::format("the tolerance is below half an ulp of {} at |ref| on {} of the elements (|ref| in [{:g}, {:g}]): a "
                                       "correctly rounded output may miss it by rounding alone",
                                       out.tag, pct(rec.below_half_ulp, rec.elements), rec.ref_abs_min, rec.ref_abs_max));
  if (rec.below_bound > 0)
    rec.findings.push_back(fmt::format("the tolerance is below fpcert's envelope for the declared arithmetic{} on {} of the elements ({} of them "
                                       "only through cancellation: a relative rule on outputs near zero); a correct kernel may fail there",
                                       envelope_note, pct(rec.below_bound, rec.elements), pct(rec.below_bound_cancel, rec.elements)));
  if (rec.admit_zero > 0)
    rec.findings.push_back(fmt::format("an output of 0 meets the rule on {} of the elements (|ref| <= tolerance)", pct(rec.admit_zero, rec.elements)));
}

namespace {

/// Whether `got` is the exact value x's other neighbour in the output format: cr = RN(x) and got are adjacent values of
/// `out` on either side of x (the accumulated value sat on or crossed the midpoint between them: a tie broken the other
/// way, or a double rounding through the accumulator).
bool other_neighbour(const Format& out, double x, double cr, double got) {
  if (got == cr || !std::isfinite(got) || !std::isfinite(cr) || (got - x) * (cr - x) > 0) return false;
  return std::fabs(got - cr) <= 2 * half_ulp(out, std::max(std::fabs(got), std::fabs(cr)));
}

}  // namespace

std::string failure_label(const RuleCase& c, const std::vector<double>& got, const RuleOutcome& out, const std::string& cause) {
  const AuditRule& r = c.rule;
  if (r.kind == AuditRule::Kind::Cosine) {
    // No cancellation label: cosine compares directions, and an error orthogonal to ref costs the same at any |ref_ij|.
    if (!apply_rule(r, c.crt, c.testref, c.allowed).pass) return "unsatisfiable tolerance";
    return cause;
  }
  if (r.kind == AuditRule::Kind::RelFro) {
    if (!apply_rule(r, c.crt, c.testref, c.allowed).pass) return "unsatisfiable tolerance";
    if (c.abs_sum.empty()) return cause;
    double err2 = 0, abs2 = 0;
    for (std::size_t x = 0; x < c.refd.size(); ++x)
      err2 += (got[x] - c.testref[x]) * (got[x] - c.testref[x]), abs2 += c.abs_sum[x] * c.abs_sum[x];
    return std::sqrt(err2) <= r.tol * std::sqrt(abs2) ? "cancellation" : cause;
  }
  const auto w = static_cast<std::size_t>(out.worst);
  if (!(std::fabs(got[w] - c.refd[w]) <= c.allowed[w])) return "beyond bound";  // against the exact reference
  const double err = std::fabs(got[w] - c.testref[w]);
  const double tol = rule_tolerance(r, c.testref[w], c.allowed[w]);
  if (!(std::fabs(c.crt[w] - c.testref[w]) <= tol)) return "unsatisfiable tolerance";
  if (other_neighbour(*c.out, c.refd[w], c.cr[w], got[w])) return "rounding tie";
  if (!c.abs_sum.empty() && err <= rule_tolerance(r, c.abs_sum[w], c.allowed[w])) return "cancellation";
  return cause;
}

void tally_variant(AuditVariantRow& row, const RuleCase& c, const std::vector<double>& got, const std::string& cause) {
  ++row.runs;
  const RuleOutcome r = apply_rule(c.rule, got, c.testref, c.allowed);
  row.worst_ratio = std::max(row.worst_ratio, r.ratio);
  if (!r.pass) ++row.rule_failed, ++row.labels[failure_label(c, got, r, cause)];
}

void tally_mutant(AuditMutantRow& row, const RuleCase& c, const std::vector<double>& got, const std::vector<double>& base, bool refused,
                  const std::string& reason) {
  ++row.runs;
  if (refused) {
    ++row.fpcert_refused;
    if (row.fpcert_reason.empty()) row.fpcert_reason = reason;
  }
  if (got.empty()) return;  // it did not run: the rule sees nothing to pass
  if (same_bits(got, base)) ++row.dormant;
  else {
    // the defect's size relative to the case's largest |ref| (AuditMutantRow::defect)
    double d = 0, top = 0;
    for (std::size_t x = 0; x < got.size(); ++x) {
      const double dx = std::fabs(got[x] - base[x]);
      d = std::isnan(dx) ? std::numeric_limits<double>::infinity() : std::max(d, dx);
      top = std::max(top, std::fabs(c.refd[x]));
      if (std::isinf(d)) break;
    }
    row.defect = std::max(row.defect, top > 0 ? d / top : d);
  }
  if (apply_rule(c.rule, got, c.testref, c.allowed).pass) ++row.rule_passed;
}

AuditMutantRow mutant_row(const std::string& id, const std::string& what, const std::vector<const RuleCase*>& cases,
                          const std::vector<std::vector<double>>& base, const std::function<CaseResult(std::size_t, std::vector<double>&)>& run) {
  AuditMutantRow row;
  row.mutant = id;
  row.what = what;
  for (std::size_t s = 0; s < cases.size(); ++s) {
    std::vector<double> got;
    const CaseResult cr = run(s, got);
    tally_mutant(row, *cases[s], got, base[s], cr.status != CaseStatus::Pass, std::string(to_string(cr.status)) + ": " + cr.reason.substr(0, 160));
  }
  return row;
}

void init_rows_record(AuditRecord& rec, const AuditOptions& o, const std::string& op, const std::string& kernel, const std::string& traits,
                      const std::string& reference) {
  rec.op = op;
  rec.kernel = kernel;
  rec.traits = traits;
  rec.m = o.m, rec.n = o.n, rec.k = o.n;
  rec.inputs = o.tensors ? o.tensors->source : o.inputs;
  rec.seeds = o.tensors ? std::vector<std::uint64_t>{0} : o.seeds;
  rec.rule = o.rule.spec;
  rec.rule_text = o.rule.text();
  rec.reference_kind = "exact";
  rec.reference = reference;
  rec.ref_abs_min = std::numeric_limits<double>::infinity();
}

const std::vector<std::pair<std::string, ReduceOrder>>& row_sum_orders() {
  static const std::vector<std::pair<std::string, ReduceOrder>> orders = {
      {"sequential", ReduceOrder::sequential()}, {"pairwise", ReduceOrder::pairwise()},
      {"blocked 32", ReduceOrder::blocked(32)},  {"warp tree 32", ReduceOrder::warp_tree(32)}};
  return orders;
}

RunOptions audit_run_options(std::vector<double>* got) {
  RunOptions r;
  r.worst_count = 1;
  r.output = got;
  return r;
}

void kernel_row(AuditRecord& rec, const std::string& kernel, const std::string& order, const std::vector<const RuleCase*>& cases,
                const std::function<CaseResult(std::size_t, std::vector<double>&)>& run,
                const std::function<std::vector<double>(std::size_t, const std::vector<double>&)>& view,
                std::vector<std::vector<double>>& full, std::vector<std::vector<double>>& base) {
  AuditVariantRow row;
  row.name = "kernel " + kernel;
  row.order = order;
  full.assign(cases.size(), {});
  base.assign(cases.size(), {});
  int passed = 0;
  for (std::size_t s = 0; s < cases.size(); ++s) {
    const CaseResult cr = run(s, full[s]);
    if (full[s].empty()) throw InputError("audit: kernel '" + kernel + "' did not run: " + cr.reason);
    passed += cr.status == CaseStatus::Pass;
    base[s] = view(s, full[s]);
    tally_variant(row, *cases[s], base[s]);
  }
  row.fpcert = fmt::format("pass {}/{}", passed, row.runs);
  rec.variants.push_back(row);
  std::vector<double> again;
  run(0, again);
  rec.repro_runs = 2;
  rec.determinism = "deterministic";
  for (std::size_t x = 0; x < again.size() && rec.reproducible; ++x)
    if (!(again[x] == full[0][x] || (std::isnan(again[x]) && std::isnan(full[0][x]))))
      rec.reproducible = false, rec.repro_first = fmt::format("element {}: {:.9g} then {:.9g}", x, full[0][x], again[x]);
}

void total_false_alarms(AuditRecord& rec) {
  for (const AuditVariantRow& v : rec.variants) rec.variant_runs += v.runs, rec.false_alarm_runs += v.rule_failed;
}

}  // namespace fpcert
