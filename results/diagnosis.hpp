// results/diagnosis.hpp — the record of a diagnosis (`fpcert diagnose`, docs/diagnose.md): which known arithmetic
// explains a GEMM kernel's output on a case, each hypothesis with the share of elements it reproduces bit for bit,
// whether its envelope holds everywhere and its residual, ranked; with its JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fpcert {

/// One hypothesis: the declared arithmetic with one change (or two, or none), evaluated on every case.
struct DiagnosisHypothesis {
  std::string id;                  ///< "operands=tf32/rn", "acc=bf16+order=pairwise", "fault=acc_rz", "declared"
  std::string what;                ///< the same in words
  int changes = 0;                 ///< 0: the declared arithmetic
  bool tighter = false;            ///< every change is more precise than the declaration (a hint for a passing kernel)
  std::int64_t matched = 0;        ///< elements equal bit for bit to the kernel's output (all cases together)
  std::int64_t elements = 0;       ///< elements compared
  bool envelope_holds = false;     ///< the hypothesised arithmetic's envelope (any order) holds on every element
  std::int64_t envelope_exceed = 0;  ///< elements beyond it (-1: no envelope, a fault that is not an arithmetic)
  double max_ulps = 0;             ///< residual: the largest distance in output ulps on the elements it misses
  std::vector<std::string> same_as;  ///< hypotheses whose outputs equal this one's bit for bit on every case
  double fraction() const { return elements ? static_cast<double>(matched) / static_cast<double>(elements) : 0.0; }
};

/// An element no hypothesis reproduces bit for bit.
struct DiagnosisElement {
  std::string case_label;
  std::int64_t i = 0, j = 0;
  double got = 0, ref = 0;   ///< the kernel's value and the exact product (rounded to double)
  double best = 0;           ///< the top hypothesis's value there
};

/// A case run to tell two hypotheses apart that tie on the case(s) before it (equal bit-for-bit shares within noise, or
/// both only by their envelope), derived from where their formats differ (docs/diagnose.md, "Separating cases").
struct DiagnosisSeparation {
  std::string first, second;  ///< the two hypotheses (ids): the better-ranked first, as they tied
  std::string spec;           ///< the generator spec of the separating case
  std::string why;            ///< what differs and why this case shows it
  std::string outcome;        ///< after the case: which one it separated, or that they are indistinguishable (empty: not run)
};

struct DiagnosisRecord {
  std::string kernel;
  std::string declared;            ///< describe_traits of the declaration
  /// "declared" (the declared arithmetic explains it), "consistent" (a changed arithmetic does), "hint" (a more precise
  /// arithmetic than declared does), "envelope" (no hypothesis bit for bit; the top one by its envelope),
  /// "logic_error" (none explains it), "not_arithmetic" (a memory or determinism check names the fault).
  std::string kind;
  std::string verdict;             ///< the sentence
  std::vector<std::string> cases;  ///< the cases evaluated, first the one asked for, then the separating ones
  std::vector<std::string> failed_checks;  ///< the runner's failed checks on the first case
  std::vector<std::string> named_by_checks;  ///< faults of the catalogue the failed non-arithmetic checks name
  std::int64_t tried = 0;          ///< hypotheses evaluated
  std::vector<DiagnosisHypothesis> ranked;  ///< best first (the top ones)
  std::vector<DiagnosisElement> unexplained;  ///< the first elements no hypothesis explains
  std::vector<std::string> notes;  ///< hypotheses that could not be evaluated and why; how look-alikes were separated
  std::vector<DiagnosisSeparation> separations;  ///< ties and the cases that separated them (or not)
  double seconds = 0;
  /// The passing-kernel hint: a hypothesis more precise than the declaration that reproduces every element of every case
  /// bit for bit (the declaration, and its bound with it, could be tightened); empty when none does or the output is
  /// not explained by the declared arithmetic (or a more precise one).
  std::string hint_id, hint;
};

nlohmann::json diagnosis_to_json(const DiagnosisRecord& r);
/// Whether `j` is one diagnosis record as diagnosis_to_json writes it (an object with "kernel", "kind" and "ranked").
bool is_diagnosis_record(const nlohmann::json& j);
/// The inverse of diagnosis_to_json (the report reads `fpcert diagnose --json` and `certify --diagnose FILE`); an
/// infinite residual, which JSON writes as null, reads back as infinity. Throws nlohmann::json errors on a wrong shape.
DiagnosisRecord diagnosis_from_json(const nlohmann::json& j);

}  // namespace fpcert
