// results/audit.cpp — the audit record's JSON (results/audit.hpp; docs/audit.md lists the fields).
#include "results/audit.hpp"

#include <cmath>
#include <limits>

namespace fpcert {

bool audit_finds_wanting(const AuditRecord& r) {
  if (r.false_alarm_runs > 0 || r.cr_fail_runs > 0) return true;
  if ((r.batch_declared && r.batch_sizes_differ() > 0) || (!r.reproducible && r.determinism == "deterministic")) return true;
  for (const AuditMutantRow& m : r.mutants)
    if (m.dormant < m.runs && m.rule_passed > 0 && m.fpcert_refused == m.runs) return true;
  return false;
}

nlohmann::json audit_to_json(const AuditRecord& r) {
  nlohmann::json vs = nlohmann::json::array(), ms = nlohmann::json::array();
  for (const AuditVariantRow& v : r.variants)
    vs.push_back({{"name", v.name}, {"order", v.order}, {"runs", v.runs}, {"rule_failed", v.rule_failed}, {"fpcert", v.fpcert},
                  {"labels", v.labels}, {"worst_ratio", v.worst_ratio}});
  for (const AuditMutantRow& m : r.mutants)
    ms.push_back({{"mutant", m.mutant}, {"what", m.what}, {"runs", m.runs}, {"dormant", m.dormant}, {"rule_passed", m.rule_passed},
                  {"fpcert_refused", m.fpcert_refused}, {"fpcert_reason", m.fpcert_reason},
                  {"defect", std::isfinite(m.defect) ? nlohmann::json(m.defect) : nlohmann::json("inf")}});
  nlohmann::json bs = nlohmann::json::array();
  for (const AuditBatchRow& b : r.batch_rows) bs.push_back({{"batch", b.batch}, {"probes", b.probes}, {"differ", b.differ}, {"first", b.first}});
  const nlohmann::json batch = {{"declared", r.batch_declared}, {"note", r.batch_note}, {"sizes", bs}};
  const double flake = r.variant_runs ? static_cast<double>(r.false_alarm_runs) / r.variant_runs : 0.0;
  return {{"kind", "audit"},
          {"op", r.op},
          {"kernel", r.kernel},
          {"traits", r.traits},
          {"m", r.m},
          {"n", r.n},
          {"k", r.k},
          {"inputs", r.inputs},
          {"seeds", r.seeds},
          {"rule", r.rule},
          {"rule_text", r.rule_text},
          {"reference", r.reference},
          {"reference_kind", r.reference_kind},
          {"allow", r.allow},
          {"static", {{"elements", r.elements},
                      {"below_half_ulp", r.below_half_ulp},
                      {"cr_fail", r.cr_fail},
                      {"cr_fail_runs", r.cr_fail_runs},
                      {"below_bound", r.below_bound},
                      {"below_bound_cancel", r.below_bound_cancel},
                      {"admit_zero", r.admit_zero},
                      {"kref_err", r.kref_err},
                      {"ref_abs_min", r.ref_abs_min},
                      {"ref_abs_max", r.ref_abs_max},
                      {"findings", r.findings}}},
          {"false_alarms", {{"variants", vs}, {"failed_runs", r.false_alarm_runs}, {"runs", r.variant_runs}, {"flake_rate", flake}}},
          {"power", ms},
          {"power_rows", r.sample_rows},
          {"smallest_detected", {{"rule", r.smallest_detected(false)}, {"fpcert", r.smallest_detected(true)}}},
          {"seconds", r.seconds},
          {"batch_invariance", batch},
          {"reproducibility", {{"runs", r.repro_runs}, {"reproducible", r.reproducible}, {"first", r.repro_first}, {"declared", r.determinism}}}};
}

AuditRecord audit_from_json(const nlohmann::json& j) {
  AuditRecord r;
  r.kernel = j.at("kernel").get<std::string>();
  r.op = j.value("op", "gemm");
  r.traits = j.value("traits", "");
  r.m = j.at("m").get<std::int64_t>();
  r.n = j.at("n").get<std::int64_t>();
  r.k = j.at("k").get<std::int64_t>();
  r.inputs = j.value("inputs", "");
  r.seeds = j.value("seeds", std::vector<std::uint64_t>{});
  r.rule = j.value("rule", "");
  r.rule_text = j.value("rule_text", "");
  r.reference = j.value("reference", "");
  r.reference_kind = j.value("reference_kind", "exact");
  r.allow = j.value("allow", std::vector<std::string>{});
  const auto& s = j.at("static");
  r.elements = s.value("elements", std::int64_t{0});
  r.below_half_ulp = s.value("below_half_ulp", std::int64_t{0});
  r.cr_fail = s.value("cr_fail", std::int64_t{0});
  r.cr_fail_runs = s.value("cr_fail_runs", 0);
  r.below_bound = s.value("below_bound", std::int64_t{0});
  r.below_bound_cancel = s.value("below_bound_cancel", std::int64_t{0});
  r.admit_zero = s.value("admit_zero", std::int64_t{0});
  r.ref_abs_min = s.value("ref_abs_min", 0.0);
  r.ref_abs_max = s.value("ref_abs_max", 0.0);
  r.findings = s.value("findings", std::vector<std::string>{});
  r.kref_err = s.value("kref_err", std::vector<double>{});
  r.sample_rows = j.value("power_rows", std::int64_t{0});
  const auto& f = j.at("false_alarms");
  for (const auto& v : f.at("variants")) {
    AuditVariantRow x;
    x.name = v.value("name", "");
    x.order = v.value("order", "");
    x.runs = v.value("runs", 0);
    x.rule_failed = v.value("rule_failed", 0);
    x.fpcert = v.value("fpcert", "");
    x.labels = v.value("labels", std::map<std::string, int>{});
    x.worst_ratio = v.value("worst_ratio", 0.0);
    r.variants.push_back(x);
  }
  r.false_alarm_runs = f.value("failed_runs", 0);
  r.variant_runs = f.value("runs", 0);
  for (const auto& m : j.at("power")) {
    AuditMutantRow x;
    x.mutant = m.value("mutant", "");
    x.what = m.value("what", "");
    x.runs = m.value("runs", 0);
    x.dormant = m.value("dormant", 0);
    x.rule_passed = m.value("rule_passed", 0);
    x.fpcert_refused = m.value("fpcert_refused", 0);
    x.fpcert_reason = m.value("fpcert_reason", "");
    if (m.contains("defect")) x.defect = m.at("defect").is_string() ? std::numeric_limits<double>::infinity() : m.at("defect").get<double>();
    r.mutants.push_back(x);
  }
  r.seconds = j.value("seconds", 0.0);
  if (j.contains("batch_invariance")) {
    const auto& b = j.at("batch_invariance");
    r.batch_declared = b.value("declared", false);
    r.batch_note = b.value("note", "");
    for (const auto& x : b.value("sizes", nlohmann::json::array()))
      r.batch_rows.push_back({x.value("batch", std::int64_t{0}), x.value("probes", 0), x.value("differ", 0), x.value("first", "")});
  }
  if (j.contains("reproducibility")) {
    const auto& p = j.at("reproducibility");
    r.repro_runs = p.value("runs", 0);
    r.reproducible = p.value("reproducible", true);
    r.repro_first = p.value("first", "");
    r.determinism = p.value("declared", "");
  }
  return r;
}

}  // namespace fpcert
