// results/mutation.cpp — the mutation score's outcomes, counts per class, and its JSON.
#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.hpp"
#include "results/results.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

std::string_view to_string(MutantOutcome o) {
  switch (o) {
    case MutantOutcome::Killed: return "killed";
    case MutantOutcome::KilledOther: return "killed_other";
    case MutantOutcome::Survived: return "survived";
    case MutantOutcome::NotApplicable: return "not_applicable";
  }
  return "?";
}

std::optional<MutantOutcome> parse_mutant_outcome(std::string_view s) {
  for (MutantOutcome o : {MutantOutcome::Killed, MutantOutcome::KilledOther, MutantOutcome::Survived, MutantOutcome::NotApplicable})
    if (to_string(o) == s) return o;
  return std::nullopt;
}

int MutationScore::count(MutantOutcome o) const {
  return static_cast<int>(std::count_if(mutants.begin(), mutants.end(), [o](const MutantResult& m) { return m.outcome == o; }));
}

int MutationScore::total() const { return static_cast<int>(mutants.size()) - count(MutantOutcome::NotApplicable); }

double MutationScore::score() const {
  const int t = total();
  return t == 0 ? 1.0 : static_cast<double>(count(MutantOutcome::Killed)) / t;
}

std::vector<ClassScore> MutationScore::by_class() const {
  std::vector<ClassScore> r;
  for (const MutantResult& m : mutants) {
    if (m.outcome == MutantOutcome::NotApplicable) continue;
    auto it = std::find_if(r.begin(), r.end(), [&](const ClassScore& c) { return c.fault_class == m.fault_class; });
    if (it == r.end()) {
      r.push_back({m.fault_class});
      it = r.end() - 1;
    }
    ++it->total;
    it->killed += m.outcome == MutantOutcome::Killed;
    it->killed_other += m.outcome == MutantOutcome::KilledOther;
    it->survived += m.outcome == MutantOutcome::Survived;
  }
  return r;
}

namespace {

json kinds_json(const std::vector<CheckKind>& ks) {
  json a = json::array();
  for (CheckKind k : ks) a.push_back(std::string(to_string(k)));
  return a;
}

std::vector<CheckKind> kinds_from_json(const json& j, const char* key) {
  std::vector<CheckKind> r;
  if (!j.contains(key)) return r;
  for (const json& x : j.at(key)) {
    const auto k = parse_check_kind(x.get<std::string>());
    if (!k) throw InputError("mutation: unknown check kind " + x.dump());
    r.push_back(*k);
  }
  return r;
}

/// A text field: absent or null is "", another type is malformed input (as in results_json.cpp).
std::string text(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return "";
  if (!j.at(key).is_string()) throw InputError(std::string("'") + key + "' must be a string, got " + j.at(key).dump());
  return j.at(key).get<std::string>();
}
/// A count: absent or null is `def` (-1: unknown); otherwise an integer in [min(def, 0), 2^31 - 1] (a
/// fraction, a negative count or another type is malformed input, not a cast).
int whole(const json& j, const char* key, int def) {
  if (!j.contains(key) || j.at(key).is_null()) return def;
  const json& v = j.at(key);
  const double d = v.is_number() ? v.get<double>() : std::nan("");
  if (!v.is_number() || d != std::floor(d) || d < std::min(def, 0) || d > 2147483647.0)
    throw InputError(std::string("'") + key + "' must be a count (an integer >= " + std::to_string(std::min(def, 0)) + "), got " + v.dump());
  return static_cast<int>(d);
}

json heuristics_json(const HeuristicVerdicts& h) {
  return {{"cases", h.cases},
          {"fpcert_refused", h.fpcert_refused},
          {"allclose_refused", h.allclose_refused},
          {"fa2x_refused", h.fa2x_refused},
          {"allclose_missed", h.allclose_missed},
          {"fa2x_missed", h.fa2x_missed},
          {"first_allclose_refused", h.first_allclose_refused},
          {"first_fa2x_refused", h.first_fa2x_refused},
          {"first_allclose_missed", h.first_allclose_missed},
          {"first_fa2x_missed", h.first_fa2x_missed}};
}

HeuristicVerdicts heuristics_from_json(const json& j) {
  HeuristicVerdicts h;
  h.cases = whole(j, "cases", 0);
  h.fpcert_refused = whole(j, "fpcert_refused", 0);
  h.allclose_refused = whole(j, "allclose_refused", 0);
  h.fa2x_refused = whole(j, "fa2x_refused", 0);
  h.allclose_missed = whole(j, "allclose_missed", 0);
  h.fa2x_missed = whole(j, "fa2x_missed", 0);
  h.first_allclose_refused = text(j, "first_allclose_refused");
  h.first_fa2x_refused = text(j, "first_fa2x_refused");
  h.first_allclose_missed = text(j, "first_allclose_missed");
  h.first_fa2x_missed = text(j, "first_fa2x_missed");
  return h;
}

}  // namespace

json to_json(const MutationScore& s) {
  json mutants = json::array();
  for (const MutantResult& m : s.mutants) {
    mutants.push_back({{"mutant", m.mutant},
                       {"fault", m.fault},
                       {"class", m.fault_class},
                       {"what", m.what},
                       {"expected", kinds_json(m.expected)},
                       {"outcome", std::string(to_string(m.outcome))},
                       {"case", m.case_id},
                       {"fired", kinds_json(m.fired)},
                       {"detail", m.detail},
                       {"repro", m.repro},
                       {"cases_run", m.cases_run},
                       {"runs", m.runs},
                       {"active_runs", m.active_runs},
                       {"seconds", json_number(m.seconds)}});
    if (m.heuristics.cases > 0) mutants.back()["heuristics"] = heuristics_json(m.heuristics);
  }
  json classes = json::array();
  for (const ClassScore& c : s.by_class())
    classes.push_back({{"class", c.fault_class},
                       {"total", c.total},
                       {"killed", c.killed},
                       {"killed_other", c.killed_other},
                       {"survived", c.survived}});
  json out = {{"kernel", s.kernel},
          {"suite", s.suite},
          {"cases", s.cases},
          {"invalid_cases", s.invalid_cases},
          {"total", s.total()},
          {"killed", s.count(MutantOutcome::Killed)},
          {"killed_other", s.count(MutantOutcome::KilledOther)},
          {"survived", s.count(MutantOutcome::Survived)},
          {"not_applicable", s.count(MutantOutcome::NotApplicable)},
          {"score", json_number(s.score())},
          {"classes", classes},
          {"seconds", json_number(s.seconds)},
          {"mutants", mutants}};
  if (s.honest_heuristics.cases > 0) out["honest_heuristics"] = heuristics_json(s.honest_heuristics);
  return out;
}

MutationScore mutation_from_json(const json& j) {
  if (!j.is_object() || !j.contains("mutants")) throw InputError("not a mutation score (no 'mutants')");
  MutationScore s;
  s.kernel = text(j, "kernel");
  s.suite = text(j, "suite");
  s.cases = whole(j, "cases", 0);
  if (j.contains("invalid_cases")) s.invalid_cases = j.at("invalid_cases").get<std::vector<std::string>>();
  s.seconds = j.contains("seconds") ? number_from_json(j.at("seconds")) : 0;
  if (j.contains("honest_heuristics")) s.honest_heuristics = heuristics_from_json(j.at("honest_heuristics"));
  for (const json& x : j.at("mutants")) {
    MutantResult m;
    m.mutant = text(x, "mutant");
    m.fault = text(x, "fault");
    m.fault_class = text(x, "class");
    m.what = text(x, "what");
    m.expected = kinds_from_json(x, "expected");
    const auto o = parse_mutant_outcome(text(x, "outcome"));
    if (!o) throw InputError("mutation: unknown outcome " + (x.contains("outcome") ? x.at("outcome").dump() : std::string("(none)")));
    m.outcome = *o;
    m.case_id = text(x, "case");
    m.fired = kinds_from_json(x, "fired");
    m.detail = text(x, "detail");
    m.repro = text(x, "repro");
    m.cases_run = whole(x, "cases_run", 0);
    m.runs = whole(x, "runs", -1);
    m.active_runs = whole(x, "active_runs", -1);
    m.seconds = x.contains("seconds") ? number_from_json(x.at("seconds")) : 0;
    if (x.contains("heuristics")) m.heuristics = heuristics_from_json(x.at("heuristics"));
    s.mutants.push_back(std::move(m));
  }
  return s;
}

}  // namespace fpcert
