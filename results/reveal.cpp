// results/reveal.cpp — a revelation's results as JSON and back (results/reveal.hpp).
#include "results/reveal.hpp"

#include "base/error.hpp"
#include "results/results_json.hpp"

namespace fpcert {

using nlohmann::json;

bool RevealResult::passed() const {
  if (status != "revealed" || classes.empty()) return false;
  for (const auto& c : classes) {
    if (!c.revealed || c.verify_mismatches) return false;
    if (c.replay.requested && !c.replay.passed()) return false;
  }
  return true;
}

namespace {

json pairs_json(const std::vector<std::pair<int, int>>& v) {
  json a = json::array();
  for (const auto& [x, y] : v) a.push_back({x, y});
  return a;
}
std::vector<std::pair<int, int>> pairs_from(const json& j) {
  std::vector<std::pair<int, int>> v;
  for (const auto& p : j) v.push_back({p.at(0).get<int>(), p.at(1).get<int>()});
  return v;
}

json replay_json(const RevealReplay& r) {
  json diffs = json::array();
  for (const auto& d : r.diffs)
    diffs.push_back({{"trial", d.trial}, {"row", d.row}, {"col", d.col}, {"kernel", d.kernel}, {"replay", d.replay}, {"note", d.note}});
  return {{"requested", r.requested}, {"ran", r.ran},         {"why_not", r.why_not}, {"assumed", r.assumed}, {"tried", r.tried}, {"inputs", r.inputs},
          {"trials", r.trials},   {"compared", r.compared}, {"equal", r.equal},   {"diffs", diffs},   {"passed", r.passed()}};
}
RevealReplay replay_from(const json& j) {
  RevealReplay r;
  r.requested = j.value("requested", false);
  r.ran = j.value("ran", false);
  r.why_not = j.value("why_not", "");
  r.assumed = j.value("assumed", "");
  r.tried = j.value("tried", std::vector<std::string>{});
  r.inputs = j.value("inputs", "");
  r.trials = j.value("trials", 0);
  r.compared = j.value("compared", std::uint64_t{0});
  r.equal = j.value("equal", std::uint64_t{0});
  for (const auto& d : j.value("diffs", json::array()))
    r.diffs.push_back({d.at("trial").get<int>(), d.at("row").get<int>(), d.at("col").get<int>(), d.at("kernel").get<std::uint64_t>(),
                       d.at("replay").get<std::uint64_t>(), d.value("note", "")});
  return r;
}

json class_json(const RevealClass& c) {
  json j = {{"elements", c.elements},
            {"where", c.where},
            {"examples", pairs_json(c.examples)},
            {"signature", c.signature},
            {"revealed", c.revealed},
            {"why", c.why},
            {"headline", c.headline},
            {"details", c.details},
            {"fused_width", c.fused_width},
            {"card_check", c.card_check},
            {"rounds", c.rounds},
            {"queries", c.queries},
            {"verified", c.verified},
            {"verify_mismatches", c.verify_mismatches},
            {"mismatches", c.mismatches},
            {"replay", replay_json(c.replay)}};
  if (c.revealed) j["tree"] = to_json(c.tree);
  return j;
}
RevealClass class_from(const json& j) {
  RevealClass c;
  c.elements = j.at("elements").get<std::int64_t>();
  c.where = j.value("where", "");
  c.examples = pairs_from(j.value("examples", json::array()));
  c.signature = j.value("signature", std::vector<std::int32_t>{});
  c.revealed = j.value("revealed", false);
  c.why = j.value("why", "");
  c.headline = j.value("headline", "");
  c.details = j.value("details", std::vector<std::string>{});
  c.fused_width = j.value("fused_width", 0);
  c.card_check = j.value("card_check", "");
  c.rounds = j.value("rounds", 0);
  c.queries = j.value("queries", std::int64_t{0});
  c.verified = j.value("verified", std::int64_t{0});
  c.verify_mismatches = j.value("verify_mismatches", std::int64_t{0});
  c.mismatches = j.value("mismatches", std::vector<std::string>{});
  if (j.contains("replay")) c.replay = replay_from(j.at("replay"));
  if (c.revealed) c.tree = sum_tree_from_json(j.at("tree"));
  return c;
}

}  // namespace

namespace {

/// Row-major classes as runs [[class, count], ...].
json class_runs(const std::vector<int>& v) {
  json a = json::array();
  for (std::size_t i = 0; i < v.size();) {
    std::size_t e = i;
    while (e < v.size() && v[e] == v[i]) ++e;
    a.push_back({v[i], e - i});
    i = e;
  }
  return a;
}

}  // namespace

json to_json(const RevealResult& r) {
  json classes = json::array();
  for (const auto& c : r.classes) classes.push_back(class_json(c));
  json phases = json::array();
  for (const auto& [name, n] : r.launches_by_phase) phases.push_back({{"phase", name}, {"launches", n}});
  return {{"kind", "reveal"},
          {"kernel", r.kernel},
          {"description", r.description},
          {"backend", r.backend},
          {"traits", r.traits},
          {"m", r.m},
          {"n", r.n},
          {"k", r.k},
          {"focus", {r.focus_row, r.focus_col}},
          {"focus_class", r.focus_class},
          {"status", r.status},
          {"passed", r.passed()},
          {"message", r.message},
          {"plan", r.plan},
          {"mode", r.mode},
          {"units_per_pass", r.units_per_pass},
          {"passes", r.passes},
          {"deterministic", r.deterministic},
          {"determinism", r.determinism},
          {"value_check", r.value_check},
          {"signature_pairs", pairs_json(r.signature_pairs)},
          {"classes", classes},
          {"launches", r.launches},
          {"queries", r.queries},
          {"launches_by_phase", phases},
          {"complexity", r.complexity},
          {"seconds", r.seconds},
          {"kernel_seconds", r.kernel_seconds},
          {"element_classes", class_runs(r.class_of)},
          {"environment", to_json(r.env)}};
}

RevealResult reveal_from_json(const json& j) {
  RevealResult r;
  try {
    if (j.value("kind", "") != "reveal") throw InputError("not a revelation result (kind is not \"reveal\")");
    r.kernel = j.at("kernel").get<std::string>();
    r.description = j.value("description", "");
    r.backend = j.value("backend", "");
    r.traits = j.value("traits", "");
    r.m = j.at("m").get<std::int64_t>();
    r.n = j.at("n").get<std::int64_t>();
    r.k = j.at("k").get<std::int64_t>();
    if (j.contains("focus")) {
      r.focus_row = j.at("focus").at(0).get<int>();
      r.focus_col = j.at("focus").at(1).get<int>();
    }
    r.focus_class = j.value("focus_class", -1);
    r.status = j.at("status").get<std::string>();
    r.message = j.value("message", "");
    r.plan = j.value("plan", "");
    r.mode = j.value("mode", "");
    r.units_per_pass = j.value("units_per_pass", std::int64_t{0});
    r.passes = j.value("passes", 0);
    r.deterministic = j.value("deterministic", true);
    r.determinism = j.value("determinism", "");
    r.value_check = j.value("value_check", "");
    r.signature_pairs = pairs_from(j.value("signature_pairs", json::array()));
    for (const auto& c : j.value("classes", json::array())) r.classes.push_back(class_from(c));
    r.launches = j.value("launches", std::int64_t{0});
    r.queries = j.value("queries", std::int64_t{0});
    for (const auto& p : j.value("launches_by_phase", json::array()))
      r.launches_by_phase.push_back({p.at("phase").get<std::string>(), p.at("launches").get<std::int64_t>()});
    r.complexity = j.value("complexity", "");
    r.seconds = j.value("seconds", 0.0);
    r.kernel_seconds = j.value("kernel_seconds", 0.0);
    for (const auto& run : j.value("element_classes", json::array())) {
      const int cls = run.at(0).get<int>();
      const auto count = run.at(1).get<std::int64_t>();
      if (cls < -1 || cls >= static_cast<int>(r.classes.size()) || count < 1 || static_cast<std::int64_t>(r.class_of.size()) + count > r.m * r.n)
        throw InputError("revelation result: element_classes holds a run that does not fit the classes or the M x N output");
      r.class_of.insert(r.class_of.end(), static_cast<std::size_t>(count), cls);
    }
    if (!r.class_of.empty() && static_cast<std::int64_t>(r.class_of.size()) != r.m * r.n)
      throw InputError("revelation result: element_classes covers " + std::to_string(r.class_of.size()) + " elements, not M x N");
    if (j.contains("environment")) r.env = environment_from_json(j.at("environment"));
  } catch (const json::exception& e) {
    throw InputError(std::string("revelation result: ") + e.what());
  }
  return r;
}

}  // namespace fpcert
