// results/audit.hpp — the record of `fpcert audit` (docs/audit.md): a test's acceptance rule for a GEMM audited for
// false alarms (the correct arithmetic it fails) and power (the mutants it passes), with its JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fpcert {

/// One correct arithmetic (an admissible order of the declared formats) run on every seed.
struct AuditVariantRow {
  std::string name;        ///< "order pairwise", "kernel model_gemm_bf16_f32acc"
  std::string order;       ///< the order in words
  int runs = 0;
  int rule_failed = 0;     ///< runs the rule failed (false alarms)
  std::string fpcert;      ///< fpcert's verdict on this arithmetic where it ran through the runner ("pass 5/5"), else ""
  std::map<std::string, int> labels;  ///< failed runs by label: unsatisfiable tolerance, cancellation, reduction order, beyond bound
  double worst_ratio = 0;  ///< max over runs of max_ij |c - ref| / tolerance_ij (> 1: the rule failed)
};

/// One mutant run on every seed: does the rule pass it, does fpcert's certify verdict refuse it.
struct AuditMutantRow {
  std::string mutant;      ///< fault id ("acc_f16", "zeros", "constant")
  std::string what;        ///< the fault in words
  int runs = 0;
  int dormant = 0;         ///< runs whose output equals the kernel's bit for bit (the fault changed nothing)
  int rule_passed = 0;     ///< runs the rule passed
  int fpcert_refused = 0;  ///< runs fpcert's verdict refused (status other than pass)
  std::string fpcert_reason;  ///< the first refusal's reason
  /// The defect's size: max over seeds of max_ij |mutant_ij - kernel_ij| / max_ij |ref_ij| (0 when dormant; +inf where
  /// an output is not finite). The smallest defect a rule detects is the least of these over the mutants it refuses.
  double defect = 0;
};

/// One batch size of the batch-invariance check: probe rows embedded in a batch of M rows against their M = 1 result.
struct AuditBatchRow {
  std::int64_t batch = 0;  ///< M
  int probes = 0;          ///< probe rows compared (at the first, last and middle positions)
  int differ = 0;          ///< of those, the rows differing bit for bit from their M = 1 result
  std::string first;       ///< the first difference in words ("not supported: ..." where the kernel declined M)
};

struct AuditRecord {
  std::string op = "gemm"; ///< the operation the test checks: gemm, softmax (m rows of n logits; k = n)
  std::string kernel;      ///< the audited kernel (or "traits:<spec>")
  std::string traits;      ///< describe_traits
  std::int64_t m = 0, n = 0, k = 0;
  std::string inputs;      ///< the generator spec as given (m, n, k, seed set per run)
  std::vector<std::uint64_t> seeds;
  std::string rule;        ///< the rule as given
  std::string rule_text;   ///< the rule in words with its formula
  std::string reference;   ///< what the rule compares against, in words
  std::string reference_kind = "exact";  ///< --reference: exact, f32 or out (docs/audit.md, "The test's reference")
  std::vector<std::string> allow;        ///< --allow: arithmetic admitted as correct besides the declaration ("tf32"; docs/audit.md, "Allowed arithmetic")
  // Static findings (over every seed's reference; no kernel run).
  std::int64_t elements = 0;          ///< m n per seed, times seeds
  std::int64_t below_half_ulp = 0;    ///< elements whose tolerance is below half an ulp of the output format at |ref|
  std::int64_t cr_fail = 0;           ///< elements where even the correctly rounded result fails the rule
  int cr_fail_runs = 0;               ///< seeds on which the correctly rounded output fails the rule (unsatisfiable)
  std::int64_t below_bound = 0;       ///< elements whose tolerance is below fpcert's envelope for a correct kernel
  std::int64_t below_bound_cancel = 0;  ///< of those, the ones that would be met without cancellation (relative rule near zero)
  std::int64_t admit_zero = 0;        ///< elements where an output of 0 meets the rule (|ref| <= tolerance)
  std::vector<double> kref_err;       ///< kref rule: max |ref_p - ref| per seed (the tolerance is k times it)
  std::int64_t sample_rows = 0;       ///< the power table's cases: rows of C run (0: every row; else a sample of them)
  double ref_abs_min = 0, ref_abs_max = 0;  ///< |ref| over the elements
  std::vector<std::string> findings;  ///< the static findings in words
  // Sampled false alarms.
  std::vector<AuditVariantRow> variants;
  int false_alarm_runs = 0, variant_runs = 0;  ///< the flake rate is their ratio
  // Power.
  std::vector<AuditMutantRow> mutants;
  double seconds = 0;                 ///< wall time of the audit
  // Batch invariance (checked where declared: KernelTraits::batch_invariant or --batch-invariant) and reproducibility
  // (every kernel), bit for bit (docs/audit.md, "Batch invariance and reproducibility").
  bool batch_declared = false;
  std::string batch_note;             ///< where the declaration comes from
  std::vector<AuditBatchRow> batch_rows;  ///< one per batch size; empty when not declared
  int repro_runs = 0;                 ///< calls on the first seed's case, each compared with the first
  bool reproducible = true;
  std::string repro_first;            ///< the first difference in words
  std::string determinism;            ///< the declared determinism (deterministic, run_to_run)
  /// The smallest defect (AuditMutantRow::defect) of a mutant that changed the output and that the rule refuses on
  /// every seed (fpcert: that fpcert refuses on every seed); -1 when none.
  double smallest_detected(bool fpcert) const {
    double d = -1;
    for (const AuditMutantRow& m : mutants)
      if (m.dormant < m.runs && (fpcert ? m.fpcert_refused == m.runs : m.rule_passed == 0) && (d < 0 || m.defect < d)) d = m.defect;
    return d;
  }
  /// Rows of batch_rows whose probes differ (a refuted declaration when batch_declared).
  int batch_sizes_differ() const {
    int d = 0;
    for (const AuditBatchRow& b : batch_rows) d += b.differ > 0;
    return d;
  }
};

/// What `fpcert audit` exits 1 for (docs/audit.md, "What it reports"): the rule fails correct arithmetic (a false alarm,
/// an unsatisfiable finding); a mutant that changed the output passes the rule while fpcert refuses it on every seed;
/// a refuted declaration (batch invariance, or reproducibility of a kernel declared deterministic).
bool audit_finds_wanting(const AuditRecord& r);

nlohmann::json audit_to_json(const AuditRecord& r);
AuditRecord audit_from_json(const nlohmann::json& j);

}  // namespace fpcert
