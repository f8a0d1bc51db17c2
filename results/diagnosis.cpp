// results/diagnosis.cpp — the JSON of a diagnosis record (results/diagnosis.hpp).
#include "results/diagnosis.hpp"

#include <limits>

namespace fpcert {

nlohmann::json diagnosis_to_json(const DiagnosisRecord& r) {
  nlohmann::json j;
  j["kernel"] = r.kernel;
  j["declared"] = r.declared;
  j["kind"] = r.kind;
  j["verdict"] = r.verdict;
  j["cases"] = r.cases;
  j["failed_checks"] = r.failed_checks;
  j["named_by_checks"] = r.named_by_checks;
  j["hypotheses_tried"] = r.tried;
  j["seconds"] = r.seconds;
  j["notes"] = r.notes;
  auto& sep = j["separations"] = nlohmann::json::array();
  for (const DiagnosisSeparation& x : r.separations)
    sep.push_back({{"first", x.first}, {"second", x.second}, {"spec", x.spec}, {"why", x.why}, {"outcome", x.outcome}});
  if (!r.hint_id.empty()) j["hint"] = {{"id", r.hint_id}, {"text", r.hint}};
  auto& h = j["ranked"] = nlohmann::json::array();
  for (const DiagnosisHypothesis& x : r.ranked)
    h.push_back({{"id", x.id}, {"what", x.what}, {"changes", x.changes}, {"tighter", x.tighter}, {"matched", x.matched},
                 {"elements", x.elements}, {"fraction", x.fraction()}, {"envelope_holds", x.envelope_holds},
                 {"envelope_exceed", x.envelope_exceed}, {"max_ulps", x.max_ulps}, {"same_as", x.same_as}});
  auto& u = j["unexplained"] = nlohmann::json::array();
  for (const DiagnosisElement& e : r.unexplained)
    u.push_back({{"case", e.case_label}, {"i", e.i}, {"j", e.j}, {"got", e.got}, {"ref", e.ref}, {"best", e.best}});
  return j;
}

bool is_diagnosis_record(const nlohmann::json& j) {
  return j.is_object() && j.contains("kernel") && j.contains("kind") && j.contains("ranked") && j.at("ranked").is_array();
}

DiagnosisRecord diagnosis_from_json(const nlohmann::json& j) {
  DiagnosisRecord r;
  r.kernel = j.at("kernel").get<std::string>();
  r.declared = j.value("declared", std::string());
  r.kind = j.at("kind").get<std::string>();
  r.verdict = j.value("verdict", std::string());
  r.cases = j.value("cases", std::vector<std::string>{});
  r.failed_checks = j.value("failed_checks", std::vector<std::string>{});
  r.named_by_checks = j.value("named_by_checks", std::vector<std::string>{});
  r.tried = j.value("hypotheses_tried", std::int64_t{0});
  r.seconds = j.value("seconds", 0.0);
  r.notes = j.value("notes", std::vector<std::string>{});
  for (const auto& x : j.value("separations", nlohmann::json::array()))
    r.separations.push_back({x.value("first", std::string()), x.value("second", std::string()), x.value("spec", std::string()),
                             x.value("why", std::string()), x.value("outcome", std::string())});
  if (j.contains("hint")) {
    r.hint_id = j.at("hint").at("id").get<std::string>();
    r.hint = j.at("hint").at("text").get<std::string>();
  }
  for (const auto& x : j.at("ranked")) {
    DiagnosisHypothesis h;
    h.id = x.at("id").get<std::string>();
    h.what = x.value("what", std::string());
    h.changes = x.value("changes", 0);
    h.tighter = x.value("tighter", false);
    h.matched = x.at("matched").get<std::int64_t>();
    h.elements = x.at("elements").get<std::int64_t>();
    h.envelope_holds = x.value("envelope_holds", false);
    h.envelope_exceed = x.value("envelope_exceed", std::int64_t{-1});
    const auto& u = x.at("max_ulps");
    h.max_ulps = u.is_null() ? std::numeric_limits<double>::infinity() : u.get<double>();
    h.same_as = x.value("same_as", std::vector<std::string>{});
    r.ranked.push_back(std::move(h));
  }
  for (const auto& x : j.value("unexplained", nlohmann::json::array())) {
    DiagnosisElement e;
    e.case_label = x.value("case", std::string());
    e.i = x.at("i").get<std::int64_t>();
    e.j = x.at("j").get<std::int64_t>();
    const auto num = [&](const char* k) { return x.at(k).is_null() ? std::numeric_limits<double>::quiet_NaN() : x.at(k).get<double>(); };
    e.got = num("got");
    e.ref = num("ref");
    e.best = num("best");
    r.unexplained.push_back(e);
  }
  return r;
}

}  // namespace fpcert
