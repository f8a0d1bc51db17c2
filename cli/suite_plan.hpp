// cli/suite_plan.hpp — which suites a certify run holds and which kernels each one certifies: the certify level
// (certify, quick) reaches every operation of the kernels named (docs/suites.md, "Suites of every operation").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::cli {

/// A suite of the run and the kernels it certifies.
struct SuitePlan {
  const SuiteInfo* suite = nullptr;
  std::vector<std::string> kernels;
};

/// The suites and, for each, its kernels: the groups (cpu, cuda, cublas) expand to every operation the run's
/// suites reach; a certify-level GEMM suite reaches the reductions (their kernels on suite_at_level's suite);
/// a kernel whose operation no suite certifies is refused (InputError). `reach` false (--preset): no suite is
/// added; `groups_reach` false (--case): the groups stay within the named suites' operations.
std::vector<SuitePlan> plan_suites(const std::vector<const SuiteInfo*>& named, const std::vector<std::string>& given, bool reach,
                                   bool groups_reach);

/// certify: the mutation score of every kernel whose own cases all passed, printed and kept in the run (or why not;
/// --no-mutation: none). In a part of a scaled run (docs/scale.md) only the kernels `mine` accepts: the part that
/// holds a kernel's last case measures its score, and the run made whole withdraws it when the kernel failed in
/// another part (complete_certify).
void add_mutation_scores(bool no_mutation, const SuiteInfo& suite, const std::vector<std::string>& kernels, const SuiteRunOptions& o,
                         RunResult& run, bool print, const std::function<bool(const std::string&)>& mine);

}  // namespace fpcert::cli
