// suites/diagnose/diagnose.cpp — hypotheses evaluated, grouped, ranked and said (diagnose.hpp; docs/diagnose.md).
#include "suites/diagnose/diagnose.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "oracle/gemm_ref.hpp"
#include "oracle/ulp.hpp"
#include "suites/diagnose/hypotheses.hpp"
#include "suites/verdict/emulate/emulate.hpp"
#include "suites/verdict/envelope.hpp"

namespace fpcert {
std::string diagnosis_share_text(const DiagnosisHypothesis& h) {
  const double f = 100.0 * h.fraction();
  return h.matched == h.elements ? "100 %" : fmt::format("{:.1f} %", std::min(f, 99.9));
}

std::string diagnosis_envelope_text(const DiagnosisHypothesis& h) {
  if (h.envelope_holds) return "envelope everywhere";
  if (h.envelope_exceed < 0) return "no envelope (not an arithmetic)";
  return h.envelope_exceed ? fmt::format("envelope exceeded on {} element(s)", h.envelope_exceed) : std::string("envelope vacuous");
}

bool diagnosis_better(const DiagnosisHypothesis& a, const DiagnosisHypothesis& b, bool envelope_first) {
  if (envelope_first && a.envelope_holds != b.envelope_holds) return a.envelope_holds;
  if (a.matched != b.matched) return a.matched > b.matched;
  if (a.envelope_holds != b.envelope_holds) return a.envelope_holds;
  if (a.changes != b.changes) return a.changes < b.changes;
  return a.max_ulps < b.max_ulps;
}

namespace {

/// Equal as outputs: the same code, or both NaN (a payload is not arithmetic).
bool same_output(const Format& f, std::uint64_t x, std::uint64_t y) {
  return x == y || (classify(f, x) == FpClass::NaN && classify(f, y) == FpClass::NaN);
}

/// What the envelope needs of a case, computed once.
struct CaseData {
  GemmRef ref;
  std::vector<double> row_abs_a, col_abs_b;
};

CaseData case_data(const DiagnoseCase& c) {
  CaseData d;
  d.ref = gemm_reference(MatrixView::row_major(c.a.data(), c.m, c.k), MatrixView::row_major(c.b.data(), c.k, c.n));
  d.row_abs_a.assign(static_cast<std::size_t>(c.m), 0.0);
  d.col_abs_b.assign(static_cast<std::size_t>(c.n), 0.0);
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t p = 0; p < c.k; ++p) d.row_abs_a[static_cast<std::size_t>(i)] += std::fabs(c.a[static_cast<std::size_t>(i * c.k + p)]);
  for (std::int64_t p = 0; p < c.k; ++p)
    for (std::int64_t j = 0; j < c.n; ++j) d.col_abs_b[static_cast<std::size_t>(j)] += std::fabs(c.b[static_cast<std::size_t>(p * c.n + j)]);
  return d;
}

struct Evaluated {
  Hypothesis h;
  DiagnosisHypothesis row;
  std::vector<std::vector<std::uint64_t>> out;  ///< per case
  std::uint64_t digest = 0;                     ///< of every output: equal digests, then equal outputs, are look-alikes
};

std::uint64_t fnv(std::uint64_t h, std::uint64_t x) {
  for (int b = 0; b < 8; ++b) h = (h ^ ((x >> (8 * b)) & 0xFF)) * 0x100000001b3ULL;
  return h;
}

bool better(const Evaluated& x, const Evaluated& y, bool envelope_first) { return diagnosis_better(x.row, y.row, envelope_first); }

/// Elements of the envelope verdict over a case: those whose every order of the hypothesised arithmetic takes an
/// operand beyond its operand format's range (tf32's range is fp32's, fp16's ends at 65504) are judged apart: that
/// arithmetic gives Inf or NaN there (nearest) or a value saturated far beyond a rounding error (toward zero), which
/// the envelope, a bound on rounding errors, does not describe; a non-finite output there is what it gives (inside), a
/// finite one is not (outside). Every other finite element is outside when |c - ref'| exceeds its allowance (fracs > 1);
/// a non-finite one is left to the special-value checks (evaluate_envelope's count).
std::int64_t envelope_exceed(const KernelTraits& t, const DiagnoseCase& c, const std::vector<double>& fracs) {
  std::vector<std::uint8_t> row(static_cast<std::size_t>(c.m), 0), col(static_cast<std::size_t>(c.n), 0);
  if (t.a_operand->emax() < t.a_input->emax() || t.b_operand->emax() < t.b_input->emax()) {
    const std::vector<double> ao = operand_values(c.a, *t.a_input, *t.a_operand, t.input_rounding);
    const std::vector<double> bo = operand_values(c.b, *t.b_input, *t.b_operand, t.input_rounding);
    const auto beyond = [](const Format& f, double in, double op) {
      return std::isinf(op) || (std::isfinite(in) && std::fabs(in) > f.max_finite() * (1 + 2 * f.epsilon()));
    };
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t p = 0; p < c.k; ++p) {
        const auto x = static_cast<std::size_t>(i * c.k + p);
        row[static_cast<std::size_t>(i)] |= beyond(*t.a_operand, c.a[x], ao[x]) ? 1 : 0;
      }
    for (std::int64_t p = 0; p < c.k; ++p)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const auto x = static_cast<std::size_t>(p * c.n + j);
        col[static_cast<std::size_t>(j)] |= beyond(*t.b_operand, c.b[x], bo[x]) ? 1 : 0;
      }
  }
  std::int64_t r = 0;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      const auto x = static_cast<std::size_t>(i * c.n + j);
      const bool finite = std::isfinite(to_double(*t.out, c.got[x]));
      if (row[static_cast<std::size_t>(i)] || col[static_cast<std::size_t>(j)]) r += finite ? 1 : 0;
      else r += finite && fracs[x] > 1 ? 1 : 0;  // a non-finite output is left to the special-value checks, as before
    }
  return r;
}

/// The envelope of split-K partials stored in a narrower format (Hypothesis::partials): each product passes through
/// at most S + 1 more roundings into it (the partial's, and S additions in place or the output's), so the
/// accumulation's coefficient grows by gamma_{S+1}(u_p) (1 + coef), each rounding may add eta_p / 2 below its normal
/// range, and a partial's magnitude by (1 + u_p)^(S+1).
void widen_for_partials(EnvelopeModel& e, const Format& p, int splits) {
  const double u = p.unit_roundoff(), d = splits + 1;
  if (d * u >= 1) {
    e.exists = false;
    return;
  }
  const double g = d * u / (1 - d * u);
  e.coef += g * (1 + e.coef);
  e.eta_arith += d * p.min_subnormal() * (1 + e.coef);
  e.growth *= std::pow(1 + u, d);
}

/// Elements of case ci equal bit for bit to the kernel's output.
std::int64_t matched_on(const Evaluated& e, const std::vector<DiagnoseCase>& cases, std::size_t ci, const Format& out) {
  std::int64_t r = 0;
  for (std::size_t x = 0; x < e.out[ci].size(); ++x) r += same_output(out, e.out[ci][x], cases[ci].got[x]) ? 1 : 0;
  return r;
}

/// Ties and the cases that separate them (docs/diagnose.md, "Separating cases"). A hypothesis ties with the top one
/// when both envelopes agree and, ranked by the envelope (no bit-for-bit share reaches half: shares that low are no
/// evidence), both hold; ranked bit for bit, when its share is within noise of the top's (two binomial standard
/// deviations and one element; never against a top that reproduces every element). For each tie, in rank order, the
/// cases derived from where the two arithmetics' formats differ are asked for (opt.separate_max at most); when they
/// have been run (opt.separations), each says what it showed.
void separations(DiagnosisRecord& rec, const std::vector<Evaluated>& all, const std::vector<DiagnoseCase>& cases, std::int64_t elements,
                 bool envelope_first, const DiagnoseOptions& opt) {
  const Format& out = *all.front().h.traits.out;
  if (!opt.separations.empty()) {
    for (DiagnosisSeparation s : opt.separations) {
      const auto c = std::find_if(cases.begin(), cases.end(), [&](const DiagnoseCase& x) { return x.label == s.spec; });
      const auto find = [&](const std::string& id) {
        return std::find_if(all.begin(), all.end(), [&](const Evaluated& e) { return e.row.id == id; });
      };
      const auto x = find(s.first), y = find(s.second);
      if (c == cases.end() || x == all.end() || y == all.end()) {
        s.outcome = "not evaluated on it (a pair past the time budget, or the case was not run)";
      } else {
        const auto ci = static_cast<std::size_t>(c - cases.begin());
        const std::int64_t mx = matched_on(*x, cases, ci, out), my = matched_on(*y, cases, ci, out), n = c->m * c->n;
        const auto env = [](const Evaluated& e) {
          return e.row.envelope_holds ? std::string("envelope holds") : fmt::format("envelope {}", e.row.envelope_exceed > 0 ? fmt::format("exceeded on {}", e.row.envelope_exceed) : std::string("n/a"));
        };
        if (x->out[ci] == y->out[ci])
          s.outcome = fmt::format("indistinguishable on it too (the same bits on all {} elements)", n);
        else
          s.outcome = fmt::format("separated: {} ranks first now ({} bit for bit on {} of {} elements there, {} over all cases; {} on {}, {})",
                                  x < y ? x->row.id : y->row.id, s.first, mx, n, env(*x), s.second, my, env(*y));
      }
      rec.separations.push_back(std::move(s));
    }
    return;
  }
  if (!opt.ask_separation) return;
  const Evaluated& lead = all.front();
  const auto tied = [&](const Evaluated& e) {
    if (e.row.envelope_holds != lead.row.envelope_holds) return false;
    if (envelope_first && lead.row.envelope_holds) return true;
    if (lead.row.matched == elements && e.row.matched < elements) return false;
    const double p = lead.row.fraction();
    return static_cast<double>(lead.row.matched - e.row.matched) <= 2.0 * std::sqrt(static_cast<double>(elements) * p * (1 - p)) + 1.0;
  };
  for (std::size_t x = 1; x < all.size() && rec.separations.size() < static_cast<std::size_t>(opt.separate_max); ++x) {
    if (!tied(all[x]) || all[x].out == lead.out) continue;  // equal outputs are look-alikes, separated by the suite's cases
    for (const SeparatingSpec& sp : separating_specs(lead.h, all[x].h, 71)) {
      const bool known = std::any_of(rec.separations.begin(), rec.separations.end(), [&](const DiagnosisSeparation& d) { return d.spec == sp.spec; }) ||
                         std::any_of(cases.begin(), cases.end(), [&](const DiagnoseCase& c) { return c.label == sp.spec; });
      if (!known && rec.separations.size() < static_cast<std::size_t>(opt.separate_max))
        rec.separations.push_back({lead.row.id, all[x].row.id, sp.spec, sp.why, ""});
    }
  }
}

}  // namespace

std::string fault_hypothesis_id(Fault f) { return "fault=" + std::string(fault_info(f).id); }

bool top_is(const DiagnosisRecord& r, const std::string& id) {
  if (r.ranked.empty()) return false;
  const DiagnosisHypothesis& t = r.ranked.front();
  return t.id == id || std::find(t.same_as.begin(), t.same_as.end(), id) != t.same_as.end();
}

DiagnosisRecord diagnose_gemm(const std::string& kernel, const KernelTraits& declared, const std::vector<DiagnoseCase>& cases,
                              const DiagnoseOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  DiagnosisRecord rec;
  rec.kernel = kernel;
  rec.declared = describe_traits(declared);
  for (const DiagnoseCase& c : cases) rec.cases.push_back(c.label);
  if (cases.empty()) throw std::invalid_argument("diagnose_gemm: no case");
  const Format& out = *declared.out;
  std::vector<CaseData> data;
  for (const DiagnoseCase& c : cases) data.push_back(case_data(c));
  std::int64_t elements = 0;
  for (const DiagnoseCase& c : cases) elements += c.m * c.n;

  std::string note;
  const Hypothesis base = declared_hypothesis(declared, &note);
  if (!note.empty()) rec.notes.push_back(note);
  std::map<std::string, bool> envelope_cache;  // by the traits' description: many hypotheses share their traits
  std::map<std::string, std::int64_t> exceed_cache;
  std::vector<std::uint8_t> explained(static_cast<std::size_t>(elements), 0);

  auto evaluate = [&](const Hypothesis& h) -> std::optional<Evaluated> {
    if (const std::string why = hypothesis_unavailable(h); !why.empty()) {
      if (h.changes <= 1) rec.notes.push_back(fmt::format("{}: not evaluated ({})", h.id, why));
      return std::nullopt;
    }
    Evaluated e;
    e.h = h;
    e.row.id = h.id;
    e.row.what = h.what;
    e.row.changes = h.changes;
    e.row.tighter = h.tighter;
    e.row.elements = elements;
    std::uint64_t digest = 0xcbf29ce484222325ULL;
    std::size_t at = 0;
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      const DiagnoseCase& c = cases[ci];
      std::vector<std::uint64_t> o;
      try {
        o = evaluate_hypothesis(h, c.m, c.n, c.k, c.a, c.b);
      } catch (const std::exception& ex) {
        if (h.changes <= 1) rec.notes.push_back(fmt::format("{}: not evaluated on {} ({})", h.id, c.label, ex.what()));
        return std::nullopt;
      }
      for (std::size_t x = 0; x < o.size(); ++x, ++at) {
        digest = fnv(digest, classify(out, o[x]) == FpClass::NaN ? out.canonical_nan_code() : o[x]);
        if (same_output(out, o[x], c.got[x])) {
          ++e.row.matched;
          explained[at] = 1;
        } else if (std::isfinite(to_double(out, o[x])) && std::isfinite(to_double(out, c.got[x]))) {
          e.row.max_ulps = std::max(e.row.max_ulps, ulp_distance(out, c.got[x], to_double(out, o[x])));
        } else {
          e.row.max_ulps = std::numeric_limits<double>::infinity();
        }
      }
      e.out.push_back(std::move(o));
    }
    e.digest = digest;
    // The hypothesised arithmetic's envelope, in any order (a fault has the envelope of the arithmetic it wraps).
    // A fault that is an arithmetic has that arithmetic's envelope; the others (a row zeroed, a NaN written) have none.
    KernelTraits any = h.traits;
    any.sum_order = SummationOrder::unknown();
    if (h.fault) {
      switch (*h.fault) {
        case Fault::AccF16: any.acc = &f16; break;
        case Fault::AccBf16: any.acc = &bf16; break;
        case Fault::AccTowardZero: any.acc_rounding = Rounding::TowardZero; break;
        default:
          e.row.envelope_exceed = -1;  // no envelope: shown as n/a
          return e;
      }
    }
    const std::string key =
        describe_traits(any) + (h.partials ? fmt::format("; partials {} x{}", h.partials->tag, h.partial_splits) : std::string());
    if (!envelope_cache.count(key)) {
      std::int64_t exceed = 0, graded = 0, admit_zero = 0;
      for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const DiagnoseCase& c = cases[ci];
        EnvelopeModel em = make_envelope(any, c.k);
        if (h.partials) widen_for_partials(em, *h.partials, h.partial_splits);
        std::vector<double> fracs;
        const EnvelopeVerdict v = evaluate_envelope(em, out, c.m, c.n, data[ci].ref, c.got, data[ci].row_abs_a, data[ci].col_abs_b, &fracs);
        exceed += envelope_exceed(any, c, fracs);
        graded += v.graded;
        admit_zero += v.admit_zero;
      }
      // A vacuous envelope (every allowance covers |ref|: zeros would pass) is no evidence: it does not "hold".
      envelope_cache[key] = exceed == 0 && admit_zero < graded;
      exceed_cache[key] = exceed;
    }
    e.row.envelope_holds = envelope_cache[key];
    e.row.envelope_exceed = exceed_cache[key];
    return e;
  };

  std::vector<Evaluated> all;
  if (auto e = evaluate(base)) all.push_back(std::move(*e));
  const std::vector<Change> singles = single_changes(declared, cases.front().k);
  std::vector<std::pair<const Change*, std::size_t>> single_at;
  for (const Change& ch : singles)
    if (auto e = evaluate(with_changes(base, {&ch}))) {
      single_at.push_back({&ch, all.size()});
      all.push_back(std::move(*e));
    }
  const auto best_matched = [&] {
    std::int64_t b = 0;
    for (const Evaluated& e : all) b = std::max(b, e.row.matched);
    return b;
  };
  // Pairs, when no single change explains every element: among the best single changes overall and the best of each
  // class (an order change that only helps together with an operand change ranks low alone), two of different classes,
  // the likeliest first (most elements matched by the two alone); stopped at the first pair that explains every element
  // (its look-alikes among the pairs not evaluated are not looked for) or when the time budget is spent.
  if (opt.pairs && best_matched() < elements) {
    std::vector<std::pair<const Change*, std::size_t>> sorted = single_at;
    std::sort(sorted.begin(), sorted.end(), [&](const auto& x, const auto& y) { return better(all[x.second], all[y.second], false); });
    std::vector<std::pair<const Change*, std::size_t>> pool;
    std::map<ChangeClass, int> per_class;
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (i < static_cast<std::size_t>(opt.pair_pool) || per_class[sorted[i].first->cls] < opt.per_class) {
        pool.push_back(sorted[i]);
        ++per_class[sorted[i].first->cls];
      }
    struct Pair {
      const Change *first, *second;
      std::int64_t prior;
    };
    std::vector<Pair> pairs;
    for (std::size_t x = 0; x < pool.size(); ++x)
      for (std::size_t y = x + 1; y < pool.size(); ++y) {
        const Change *p = pool[x].first, *q = pool[y].first;
        if (p->cls == q->cls) continue;
        const Change* first = p->cls == ChangeClass::Fault ? q : p;  // the fault wraps the changed arithmetic
        pairs.push_back({first, first == p ? q : p, all[pool[x].second].row.matched + all[pool[y].second].row.matched});
      }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.prior > b.prior; });
    int done = 0;
    const auto p0 = std::chrono::steady_clock::now();
    for (const Pair& p : pairs) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count() > opt.pair_seconds) {
        rec.notes.push_back(fmt::format("pairs: {} of {} evaluated within the time budget of {} s", done, pairs.size(), opt.pair_seconds));
        break;
      }
      ++done;
      if (auto e = evaluate(with_changes(base, {p.first, p.second}))) {
        const bool whole = e->row.matched == elements;
        all.push_back(std::move(*e));
        if (whole) {
          if (done < static_cast<int>(pairs.size()))
            rec.notes.push_back(fmt::format("pairs: stopped at the first that explains every element ({} of {} evaluated)", done, pairs.size()));
          break;
        }
      }
    }
  }
  rec.tried = static_cast<std::int64_t>(all.size());
  if (all.empty()) {
    rec.kind = "logic_error";
    rec.verdict = "no hypothesis could be computed for this declaration (see the notes)";
    return rec;
  }

  // Rank: bit for bit first; when no hypothesis reaches half the elements (an order nobody declared), the envelope first.
  const bool envelope_first = static_cast<double>(best_matched()) < 0.5 * static_cast<double>(elements);
  std::stable_sort(all.begin(), all.end(), [&](const Evaluated& x, const Evaluated& y) { return better(x, y, envelope_first); });
  separations(rec, all, cases, elements, envelope_first, opt);
  // The declared rule: a declaration that fixes no order (unknown, atomic split-K) is certified by its envelope, so
  // when the declared arithmetic's envelope holds on every element of every case and no hypothesis is bit for bit on
  // the consistent share, the output is consistent with the declaration and the order is not identified; bit-for-bit
  // shares below that are a hint only, never evidence of a logic error (docs/diagnose.md, "The declared rule").
  const bool order_free = !declared.sum_order.known() || declared.sum_order.outer == Combine::Atomic;
  const auto decl = std::find_if(all.begin(), all.end(), [](const Evaluated& e) { return e.row.id == "declared"; });
  const bool by_envelope = order_free && decl != all.end() && decl->row.envelope_holds && all.front().row.fraction() < opt.consistent;
  std::string best_bitwise;  // the hint of the declared rule: the best bit-for-bit share and its hypothesis
  if (by_envelope) {
    const Evaluated& b = all.front().row.id == "declared" && all.size() > 1 ? all[1] : all.front();
    best_bitwise = fmt::format("{} of elements [{}]", diagnosis_share_text(b.row), b.row.id);
    std::rotate(all.begin(), decl, decl + 1);
  }
  // Look-alikes: outputs equal bit for bit on every case.
  for (std::size_t x = 0; x < all.size() && x < static_cast<std::size_t>(opt.top); ++x)
    for (std::size_t y = 0; y < all.size(); ++y)
      if (x != y && all[x].digest == all[y].digest && all[x].out == all[y].out) all[x].row.same_as.push_back(all[y].row.id);
  // A look-alike of a better-ranked entry is shown there, not as an entry of its own.
  std::vector<std::string> shown;
  for (const Evaluated& e : all) {
    if (rec.ranked.size() >= static_cast<std::size_t>(opt.top)) break;
    if (std::find(shown.begin(), shown.end(), e.row.id) != shown.end()) continue;
    rec.ranked.push_back(e.row);
    shown.push_back(e.row.id);
    for (const std::string& s : e.row.same_as) shown.push_back(s);
  }

  // The first elements no hypothesis reproduces.
  {
    std::size_t at = 0;
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      const DiagnoseCase& c = cases[ci];
      for (std::int64_t x = 0; x < c.m * c.n; ++x, ++at)
        if (!explained[at] && rec.unexplained.size() < static_cast<std::size_t>(opt.unexplained))
          rec.unexplained.push_back({c.label, x / c.n, x % c.n, to_double(out, c.got[static_cast<std::size_t>(x)]),
                                     data[ci].ref.c[static_cast<std::size_t>(x)].hi,
                                     to_double(out, all.front().out[ci][static_cast<std::size_t>(x)])});
    }
  }

  // The sentence.
  const DiagnosisHypothesis& top = rec.ranked.front();
  const std::string alike = top.same_as.empty() ? "" : fmt::format(" (indistinguishable on {} from: {})",
                                                                   cases.size() > 1 ? "these cases" : "this case",
                                                                   fmt::join(top.same_as, ", "));
  if (top.fraction() >= opt.consistent) {
    const bool declared_top = top.id == "declared";
    rec.kind = declared_top ? "declared" : top.tighter ? "hint" : "consistent";
    rec.verdict = fmt::format("{} {}: bit for bit on {} of elements, {}{}",
                              declared_top ? "consistent with the declared arithmetic" : "consistent with",
                              declared_top ? "" : fmt::format("{} [{}]", top.what, top.id), diagnosis_share_text(top), diagnosis_envelope_text(top), alike);
    if (declared_top) rec.verdict = fmt::format("consistent with the declared arithmetic: bit for bit on {} of elements, {}{}", diagnosis_share_text(top),
                                                diagnosis_envelope_text(top), alike);
    if (rec.kind == "hint")
      rec.verdict += "; more precise than declared: the declaration (and its bound) could be tightened";
    // the first look-alike more precise than declared (and how many more there are)
    int more = -1;
    for (const std::string& s : top.same_as)
      for (const Evaluated& e : all)
        if (e.row.id == s && e.row.tighter && rec.kind == "declared" && ++more == 0)
          rec.verdict += fmt::format("; hint: as consistent with {} [{}], more precise than declared", e.row.what, e.row.id);
    if (more > 0) rec.verdict += fmt::format(" (and {} more look-alike(s) more precise than declared)", more);
  } else if (by_envelope) {
    rec.kind = "declared";
    rec.verdict = fmt::format("consistent with the declared arithmetic by its envelope on every element of every case ({} elements); its "
                              "order ({}) is not identified: bit for bit at best {}, a hint only",
                              elements, order_spec(declared.sum_order), best_bitwise);
  } else if (top.envelope_holds) {
    // Below the consistent share bit for bit (an order fpcert does not compute), the top hypothesis's envelope holding
    // on every element of every case is the evidence: not a logic error.
    rec.kind = "envelope";
    rec.verdict = fmt::format("no hypothesis bit for bit (best {} of elements: the order is not one fpcert computes); consistent with {} "
                              "[{}] by its envelope everywhere{}",
                              diagnosis_share_text(top), top.what, top.id, alike);
  } else {
    rec.kind = "logic_error";
    rec.verdict = fmt::format("no known arithmetic explains it — a logic error; the closest is {} [{}], bit for bit on {} of elements, {}",
                              top.what, top.id, diagnosis_share_text(top), diagnosis_envelope_text(top));
    if (!rec.unexplained.empty()) {
      std::string first;
      for (const DiagnosisElement& e : rec.unexplained)
        first += fmt::format("{}({}, {}) got {:.9g} exact {:.9g}", first.empty() ? "" : "; ", e.i, e.j, e.got, e.ref);
      rec.verdict += "; first unexplained elements: " + first;
    }
  }
  // The passing-kernel hint: the best-ranked hypothesis more precise than declared that reproduces every element of
  // every case (not merely the 90 % that "consistent" asks), when the declared arithmetic or a tighter one explains it.
  if (rec.kind == "declared" || rec.kind == "hint")
    for (const Evaluated& e : all)
      if (e.row.tighter && e.row.matched == e.row.elements && e.row.elements > 0) {
        rec.hint_id = e.row.id;
        rec.hint = fmt::format("bit for bit on every element ({} of {}) with {} [{}], more precise than the declaration ({}): the "
                               "declaration, and its bound with it, could be tightened",
                               e.row.matched, e.row.elements, e.row.what, e.row.id, rec.declared);
        break;
      }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace fpcert
