// reports/audit_text.cpp — the audit's terminal tables (audit_text.hpp).
#include "reports/audit_text.hpp"

#include <fmt/format.h>

namespace fpcert {

std::string audit_text(const AuditRecord& r) {
  std::string s;
  if (r.op != "gemm")  // softmax, log_softmax, layernorm, rmsnorm: rows
    s += fmt::format("audit of {} kernel {}\n  traits: {}\n  shape: {} rows of {} {}; inputs: {}; seeds:", r.op, r.kernel, r.traits, r.m, r.n,
                     r.op == "softmax" || r.op == "log_softmax" ? "logits" : "entries", r.inputs);
  else
    s += fmt::format("audit of {}\n  traits: {}\n  shape: m={} n={} k={}; inputs: {}; seeds:", r.kernel, r.traits, r.m, r.n, r.k, r.inputs);
  for (auto x : r.seeds) s += fmt::format(" {}", x);
  s += fmt::format("\n  rule: {}\n  reference: {}\n", r.rule_text, r.reference);
  for (const auto& a : r.allow)
    s += a == "tf32" ? "  allowed: tf32 (fp32 inputs rounded to TF32 before the products, fp32 accumulation in any order: correct arithmetic, not a fault)\n"
                     : "  allowed: " + a + "\n";
  s += "\n";
  s += "Static findings\n";
  if (r.findings.empty()) s += "  none: the rule is above half an ulp and above fpcert's envelope on every element\n";
  for (const auto& f : r.findings) s += "  - " + f + "\n";
  s += fmt::format("\nFalse alarms (correct arithmetic of the declaration; a failed run is a false alarm; the rule against the {} reference)\n",
                   r.reference_kind);
  s += fmt::format("  {:<40} {:>5} {:>12} {:>12}  {:<12} {}\n", "arithmetic", "runs", "rule failed", "worst ratio", "fpcert", "labels");
  for (const AuditVariantRow& v : r.variants) {
    std::string labels;
    for (const auto& [l, n] : v.labels) labels += (labels.empty() ? "" : ", ") + fmt::format("{} x{}", l, n);
    s += fmt::format("  {:<40} {:>5} {:>12} {:>12.4g}  {:<12} {}\n", v.name, v.runs, v.rule_failed, v.worst_ratio, v.fpcert.empty() ? "-" : v.fpcert,
                     labels.empty() ? "-" : labels);
  }
  s += fmt::format("  flake rate: {} of {} runs fail the rule ({:.3g} %)\n", r.false_alarm_runs, r.variant_runs,
                   r.variant_runs ? 100.0 * r.false_alarm_runs / r.variant_runs : 0.0);
  if (!r.mutants.empty()) {
    s += fmt::format("\nPower (mutants of the kernel on the same inputs; dormant: runs where the fault changed no output bit; the rule against "
                     "the {} reference)\n",
                     r.reference_kind);
    if (r.sample_rows > 0)
      s += fmt::format("  on a sample of at most {} of the {} rows of C per seed, every column (first, last, both sides of each power of two, "
                       "random ones; --sample-rows all: every row)\n",
                       r.sample_rows, r.m);
    s += fmt::format("  {:<22} {:>5} {:>8} {:>13} {:>15} {:>10}  {}\n", "mutant", "runs", "dormant", "rule passes", "fpcert refuses", "defect",
                     "verdict");
    int caught_rule = 0, caught_fpcert = 0, live = 0;
    for (const AuditMutantRow& m : r.mutants) {
      const bool active = m.dormant < m.runs;
      const bool rule_misses = m.rule_passed > 0, fpcert_refuses = m.fpcert_refused == m.runs;
      std::string verdict = !active ? (m.fpcert_refused > 0 ? "output unchanged: invisible to the rule, fpcert refuses" : "dormant on these inputs")
                            : rule_misses && fpcert_refuses ? "RULE MISSES IT, fpcert refuses"
                            : rule_misses                  ? "both miss it"
                                                           : "rule refuses it";
      if (active) ++live, caught_rule += !rule_misses, caught_fpcert += m.fpcert_refused > 0;
      s += fmt::format("  {:<22} {:>5} {:>8} {:>13} {:>15} {:>10.3g}  {}\n", m.mutant, m.runs, m.dormant, fmt::format("{}/{}", m.rule_passed, m.runs),
                       fmt::format("{}/{}", m.fpcert_refused, m.runs), m.defect, verdict);
    }
    s += fmt::format("  of {} mutants that changed the output: the rule refuses {} on every seed, fpcert refuses {}\n", live, caught_rule, caught_fpcert);
    const auto smallest = [](double d) { return d < 0 ? std::string("none") : fmt::format("{:.3g}", d); };
    s += fmt::format("  smallest defect detected (max |mutant - kernel| / max |ref|): the rule {}, fpcert {}\n", smallest(r.smallest_detected(false)),
                     smallest(r.smallest_detected(true)));
    if (r.false_alarm_runs > 0 || r.cr_fail_runs > 0)
      s += "  (the rule also fails correct arithmetic above: its refusals are no evidence of a fault)\n";
  }
  s += fmt::format("\nReproducibility (declared {}): {}\n", r.determinism.empty() ? "?" : r.determinism,
                   r.reproducible ? fmt::format("reproducible over {} runs, bit for bit", r.repro_runs) : "NOT reproducible: differs at " + r.repro_first);
  if (r.batch_declared) {
    s += fmt::format("Batch invariance (declared: {}): probe rows in batches of M rows against their M = 1 result\n", r.batch_note);
    s += fmt::format("  {:>6} {:>7} {:>7}  {}\n", "M", "probes", "differ", "first difference");
    for (const AuditBatchRow& b : r.batch_rows)
      s += fmt::format("  {:>6} {:>7} {:>7}  {}\n", b.batch, b.probes, b.differ, b.first.empty() ? "-" : b.first);
  }
  s += fmt::format("\n{:.2f} s\n", r.seconds);
  return s;
}

}  // namespace fpcert
