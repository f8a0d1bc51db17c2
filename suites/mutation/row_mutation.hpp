// suites/mutation/row_mutation.hpp — the mutation score of a suite on a kernel of an operation driven by
// suites/run/row_operation.hpp (reduction, softmax, normalisation, ...): the method of suites/mutation/mutation.hpp
// over the operation's hooks. Every case runs on the unmutated kernel and the mutants still alive; a case the
// unmutated kernel does not pass judges no mutant; a mutant stops at its first kill for its own fault unless
// all_cases is set.
//
// Besides the hooks of row_operation.hpp (Kernel, noun, make, suite_name, cases), H provides:
//   static constexpr Operation operation;                       the catalogue's faults of this operation
//   static std::string not_applicable(Fault, const Kernel&);    why a fault cannot apply to the kernel ("" if it can)
//   static std::string register_mutant(const std::string& kernel, Fault);  registers <kernel>~<fault>, returns it
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "suites/mutation/mutation.hpp"
#include "suites/run/operation.hpp"

namespace fpcert {

namespace row_mutation_detail {

/// max |got - want| as torch computes it on a case (suites/run/row_case.hpp, RowGrades::heuristics); nullopt where the
/// runner did not measure it.
inline std::optional<double> heuristic_max(const CaseResult& c) {
  const auto at = [&](const char* k) { return c.achieved.count(k) ? c.achieved.at(k) : 0.0; };
  if (!c.achieved.count("heuristic_maxabs")) return std::nullopt;
  if (at("heuristic_maxabs_nan") != 0) return std::numeric_limits<double>::quiet_NaN();
  if (at("heuristic_maxabs_inf") != 0) return std::numeric_limits<double>::infinity();
  return at("heuristic_maxabs");
}

/// Adds case `c` of a kernel to its verdicts: torch.allclose(atol = rtol = 1e-2) refuses the case when an element is
/// not close; FlashAttention's rule refuses it unless max|out - ref| <= 2 max|base - ref| + 1e-5 (`base`: the unmutated
/// kernel's case; a NaN on either side refuses, as a comparison with NaN is false).
inline void add_heuristics(HeuristicVerdicts& h, const CaseResult& c, const CaseResult& base) {
  const auto mine = heuristic_max(c), theirs = heuristic_max(base);
  if (!mine || !theirs) return;
  ++h.cases;
  const bool fpcert_refuses = c.status != CaseStatus::Pass;
  const bool allclose_refuses = c.achieved.at("heuristic_allclose_refused_elements") > 0;
  const bool fa2x_refuses = !(*mine <= 2 * *theirs + 1e-5);
  h.fpcert_refused += fpcert_refuses;
  if (allclose_refuses && h.allclose_refused++ == 0) h.first_allclose_refused = c.case_id;
  if (fa2x_refuses && h.fa2x_refused++ == 0) h.first_fa2x_refused = c.case_id;
  if (fpcert_refuses && !allclose_refuses && h.allclose_missed++ == 0) h.first_allclose_missed = c.case_id;
  if (fpcert_refuses && !fa2x_refuses && h.fa2x_missed++ == 0) h.first_fa2x_missed = c.case_id;
}

}  // namespace row_mutation_detail

template <class H>
MutationScore row_mutation(const OperationRunner& runner, const SuiteInfo& suite, const std::string& kernel,
                           const MutationOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  auto k = H::make(kernel);
  if (!k) throw InputError(fmt::format("unknown {} kernel '{}' (fpcert kernels lists them)", H::noun, kernel));
  if (k->is_mutant()) throw InputError("'" + kernel + "' is itself a mutant: give the kernel it was made from");
  std::vector<CaseSpec> cases = H::cases(H::suite_name(suite), *k);
  if (!opt.run.only_case.empty()) {
    std::string ids;
    for (const CaseSpec& c : cases) ids += (ids.empty() ? "" : ", ") + c.id;
    std::erase_if(cases, [&](const CaseSpec& c) { return !case_matches(opt.run.only_case, c.id); });
    if (cases.empty())  // nothing run is no score: as certify --case says it
      throw InputError(fmt::format("suite '{}' has no case '{}' for {} (cases: {})", H::suite_name(suite), opt.run.only_case, kernel, ids));
  }
  MutationScore s;
  s.kernel = kernel;
  s.suite = H::suite_name(suite);
  s.cases = static_cast<int>(cases.size());
  std::vector<Fault> faults = opt.faults;
  if (faults.empty())
    for (const FaultInfo& f : fault_catalogue())
      if (f.operation == H::operation) faults.push_back(f.fault);
  std::vector<std::size_t> live;
  for (Fault f : faults) {
    const FaultInfo& fi = fault_info(f);
    MutantResult r;
    r.mutant = mutant_name(kernel, f);
    r.fault = std::string(fi.id);
    r.fault_class = std::string(to_string(fi.cls));
    r.what = std::string(fi.what);
    r.expected = fi.expected;
    if (const std::string why = H::not_applicable(f, *k); !why.empty()) {
      r.outcome = MutantOutcome::NotApplicable;
      r.detail = why;
    } else {
      H::register_mutant(kernel, f);
      live.push_back(s.mutants.size());
    }
    s.mutants.push_back(std::move(r));
  }
  std::vector<bool> done(s.mutants.size(), false);
  for (const CaseSpec& c : cases) {
    std::vector<std::string> names = {kernel};
    for (std::size_t i : live)
      if (!done[i]) names.push_back(s.mutants[i].mutant);
    if (names.size() == 1) break;
    if (opt.on_progress) opt.on_progress(fmt::format("{}: {} mutant(s) of {}", c.id, names.size() - 1, kernel));
    SuiteRunOptions o = opt.run;
    o.only_case = c.id;
    o.baseline.clear();
    o.jsonl_path.clear();
    o.on_case = nullptr;
    o.on_progress = nullptr;
    o.select = nullptr;
    o.run.warmups = 0;
    o.run.timed = 1;
    const RunResult rr = runner.run(suite, names, o);
    if (opt.env) *opt.env = rr.env;
    const auto honest = std::find_if(rr.cases.begin(), rr.cases.end(), [&](const CaseResult& x) { return x.kernel == kernel; });
    if (honest == rr.cases.end()) continue;
    if (opt.on_honest_case) opt.on_honest_case(*honest);
    row_mutation_detail::add_heuristics(s.honest_heuristics, *honest, *honest);
    if (honest->status != CaseStatus::Pass) {
      if (honest->status != CaseStatus::NotSupported)
        s.invalid_cases.push_back(fmt::format("{}: {}: {}", c.id, to_string(honest->status), honest->reason));
      continue;
    }
    for (std::size_t i : live) {
      if (done[i]) continue;
      MutantResult& m = s.mutants[i];
      const auto it = std::find_if(rr.cases.begin(), rr.cases.end(), [&](const CaseResult& x) { return x.kernel == m.mutant; });
      if (it == rr.cases.end() || it->status == CaseStatus::NotSupported) continue;
      ++m.cases_run;
      m.seconds += it->wall_seconds;
      row_mutation_detail::add_heuristics(m.heuristics, *it, *honest);
      const std::vector<CheckKind> fired = failed_checks(*it);
      if (fired.empty()) continue;
      const bool own = std::any_of(fired.begin(), fired.end(),
                                   [&](CheckKind x) { return std::find(m.expected.begin(), m.expected.end(), x) != m.expected.end(); });
      if (own || m.outcome == MutantOutcome::Survived) {
        m.outcome = own ? MutantOutcome::Killed : MutantOutcome::KilledOther;
        m.case_id = c.id;
        m.fired = fired;
        m.detail = it->reason;
        m.repro = it->repro;
      }
      if (own && !opt.all_cases) done[i] = true;
    }
  }
  for (std::size_t i : live) {
    MutantResult& m = s.mutants[i];
    if (m.outcome == MutantOutcome::Survived)
      m.detail = fmt::format("passed {} case(s); a suite needs {}", m.cases_run, find_fault(m.fault)->needs);
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace fpcert
