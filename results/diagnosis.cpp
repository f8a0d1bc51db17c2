// results/diagnosis.cpp — the JSON of a diagnosis record (results/diagnosis.hpp).
#include "results/diagnosis.hpp"

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

}  // namespace fpcert
