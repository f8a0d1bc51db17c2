// suites/diagnose/diagnose.hpp — the diagnosis of a GEMM kernel's output (docs/diagnose.md): every hypothesis of
// suites/diagnose/hypotheses.hpp computed bit for bit on the case(s), compared with what the kernel wrote, ranked,
// and said in one sentence ("consistent with inputs rounded to tf32 (rn): bit for bit on 98.7 % of elements, envelope
// everywhere", or "no known arithmetic explains it — a logic error; first unexplained elements ...").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "results/diagnosis.hpp"
#include "suites/mutation/faults.hpp"

namespace fpcert {

/// One case as the kernel saw it and what it wrote.
struct DiagnoseCase {
  std::string label;
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<double> a, b;         ///< row-major values of the declared input formats, as the kernel received them
  std::vector<std::uint64_t> got;   ///< the kernel's output, codes of the declared output format, row-major m x n
};

struct DiagnoseOptions {
  int top = 8;          ///< hypotheses kept in the record
  int pair_pool = 6;    ///< pairs are formed among this many best single changes
  int per_class = 4;    ///< and the best this many of each class
  double pair_seconds = 15;  ///< pairs stop being evaluated after this long (the likeliest are evaluated first)
  int unexplained = 5;  ///< elements no hypothesis explains, listed
  bool pairs = true;    ///< evaluate pairs of changes when no single change explains every element
  double consistent = 0.9;  ///< the share of elements bit for bit above which a hypothesis is "consistent"
  int separate_max = 3;     ///< separating cases asked for ties (DiagnosisRecord::separations), at most
  bool ask_separation = true;  ///< derive separating cases for ties (off once they have been run)
  /// Separating cases an earlier diagnosis asked for, now among the cases (by their spec as label): the record says
  /// what each one showed.
  std::vector<DiagnosisSeparation> separations;
};

/// Diagnose `cases` (the first is the case asked about; the others separate look-alikes) against the declaration.
DiagnosisRecord diagnose_gemm(const std::string& kernel, const KernelTraits& declared, const std::vector<DiagnoseCase>& cases,
                              const DiagnoseOptions& opt = {});

/// A hypothesis's share bit for bit in words ("98.7 %", "100 %" only when every element matches) and its envelope
/// ("envelope everywhere", "envelope exceeded on 3 element(s)", "envelope vacuous", "no envelope (not an arithmetic)").
std::string diagnosis_share_text(const DiagnosisHypothesis& h);
std::string diagnosis_envelope_text(const DiagnosisHypothesis& h);

/// The ranking: a ranks before b (the envelope first when `envelope_first`, else bits first; then the envelope, fewer
/// changes, the smaller residual).
bool diagnosis_better(const DiagnosisHypothesis& a, const DiagnosisHypothesis& b, bool envelope_first);

/// The id of the hypothesis that is exactly one injected fault ("fault=acc_rz"), for the identification measure.
std::string fault_hypothesis_id(Fault f);
/// Whether the record's top hypothesis is `id` or indistinguishable from it on every case.
bool top_is(const DiagnosisRecord& r, const std::string& id);

}  // namespace fpcert
