// suites/audit/audit_case.hpp — what every operation's audit shares (docs/audit.md): one case as the rule and the
// labels read it (the exact reference, its correctly rounded output, fpcert's envelope, the test's reference), the
// static tallies and findings, the label of a failed correct run, and a power row's tally. `fpcert audit` of a GEMM
// (audit.cpp) and of a softmax (audit_softmax.cpp) fill it from their own references and bounds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oracle/format.hpp"
#include "oracle/reduce/reduce_order.hpp"
#include "results/audit.hpp"
#include "generators/problem.hpp"
#include "results/results.hpp"
#include "suites/run/case_run.hpp"
#include "suites/audit/audit.hpp"

namespace fpcert {

/// One case, element by element (row-major outputs).
struct RuleCase {
  std::vector<double> refd;     ///< the exact reference rounded to double
  std::vector<double> cr;       ///< the exact reference correctly rounded into the output format
  std::vector<double> allowed;  ///< fpcert's envelope per element (the arithmetic the audit admits, order unknown)
  std::vector<double> testref;  ///< the test's reference, what the rule compares with (refd unless AuditOptions::reference says)
  std::vector<double> crt;      ///< testref correctly rounded into the output format: the best any output can do against it
  /// sum |terms| per element where the result is a sum of terms that may cancel (GEMM: sum_k |a_ik b_kj|); empty where
  /// nothing cancels (softmax: every weight positive), and then no failure is labelled cancellation.
  std::vector<double> abs_sum;
  AuditRule rule;               ///< the rule resolved on this case
  const Format* out = &f32;     ///< the output format
};

/// Half an ulp of format f at magnitude |x| (the largest error of a correctly rounded result there).
double half_ulp(const Format& f, double x);
/// "12.5 %".
std::string pct(std::int64_t a, std::int64_t b);
/// A generator spec with `keys` set by the audit (any given in `inputs` replaced): spec_with("uniform:lo=0", {{"m", "8"}}).
std::string spec_with(const std::string& inputs, const std::vector<std::pair<std::string, std::string>>& keys);
std::vector<double> decode(const Format& f, const std::vector<std::uint64_t>& codes);

/// The sum of x[0..n) in `order` with every addition rounded to nearest into `acc`: oracle/reduce's emulation where
/// every term is a value of acc; else (terms wider than the accumulator: a row sum of fp32 terms in fp16, a mutant or a
/// narrow declared accumulator) the same shapes here, each addition computed in double and rounded into acc
/// (sequential; pairwise halves; blocks summed in turn; lanes j mod W then a butterfly), any other order sequential.
double sum_rounded(const double* x, std::size_t n, const ReduceOrder& order, const Format& acc);

/// Count one case into the record's static figures (elements, |ref| range, below half an ulp, correctly rounded
/// failing, admits zero, below the envelope and of those through cancellation; cr_fail_runs when the correctly rounded
/// output fails the rule).
void tally_static(AuditRecord& rec, const RuleCase& c);
/// The static findings every operation reports, from the tallies, after the operation's own: UNSATISFIABLE, below half
/// an ulp, below the envelope (`envelope_note` says what it admits, e.g. " with TF32 operands allowed"), admits zero.
void push_static_findings(AuditRecord& rec, const Format& out, int n_cases, const std::string& envelope_note);

/// Why a correct arithmetic failed the rule, from its worst element (docs/audit.md, "What it reports"): beyond bound,
/// unsatisfiable tolerance, rounding tie, cancellation (only where abs_sum is given), else `cause` (the GEMM's
/// "reduction order"; an allowed operand rounding's own label).
std::string failure_label(const RuleCase& c, const std::vector<double>& got, const RuleOutcome& out,
                          const std::string& cause = "reduction order");
/// One correct run of a false-alarm row: the rule applied, the worst ratio kept, a failure counted and labelled.
void tally_variant(AuditVariantRow& row, const RuleCase& c, const std::vector<double>& got, const std::string& cause = "reduction order");
/// One run of a mutant: `got` its output (empty: it did not run), `base` the kernel's own output on the same case,
/// `refused`/`reason` fpcert's verdict on it.
void tally_mutant(AuditMutantRow& row, const RuleCase& c, const std::vector<double>& got, const std::vector<double>& base, bool refused,
                  const std::string& reason);
/// A power row: `run(s, got)` runs the mutant on case s through the operation's runner (fpcert's verdict; `got` its
/// output), every case tallied against the kernel's own output base[s].
AuditMutantRow mutant_row(const std::string& id, const std::string& what, const std::vector<const RuleCase*>& cases,
                          const std::vector<std::vector<double>>& base, const std::function<CaseResult(std::size_t, std::vector<double>&)>& run);

/// The row operations' audits (softmax, normalisation): the record's head (operation, kernel, traits, rows x cols,
/// inputs, seeds, rule; the exact reference described by `reference`).
void init_rows_record(AuditRecord& rec, const AuditOptions& o, const std::string& op, const std::string& kernel, const std::string& traits,
                      const std::string& reference);
/// The row sum's orders a row operation's false-alarm table samples: sequential, pairwise, blocked 32, warp tree 32.
const std::vector<std::pair<std::string, ReduceOrder>>& row_sum_orders();
/// One case's runner setup (suite "audit", case seed<N>, the command as its repro) and options (the output kept).
template <class Setup>
Setup audit_case_setup(const Problem& q, std::uint64_t seed, const std::string& command) {
  Setup s;
  s.suite = "audit";
  s.case_id = "seed" + std::to_string(seed);
  s.problem = &q;
  s.repro = command;
  s.family = "audit";
  return s;
}
RunOptions audit_run_options(std::vector<double>* got);
/// The false-alarm table's first row, the kernel through its runner on every case (`run(s, full)`: one call on case s,
/// its whole output in `full`; `view(s, full)`: what the rule sees of it), fpcert's verdict beside the rule, and the
/// reproducibility check (a second call on the first case, bit for bit). full[s] and base[s] (the rule's view) are kept
/// for the power table. Throws InputError when the kernel does not run.
void kernel_row(AuditRecord& rec, const std::string& kernel, const std::string& order, const std::vector<const RuleCase*>& cases,
                const std::function<CaseResult(std::size_t, std::vector<double>&)>& run,
                const std::function<std::vector<double>(std::size_t, const std::vector<double>&)>& view,
                std::vector<std::vector<double>>& full, std::vector<std::vector<double>>& base);
/// The false-alarm totals (variant runs, failed runs) from the rows.
void total_false_alarms(AuditRecord& rec);

}  // namespace fpcert
