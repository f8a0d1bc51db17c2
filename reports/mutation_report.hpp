// reports/mutation_report.hpp — the mutation score as terminal text: one row per mutant, the score per
// fault class, and one row per kernel for runs over many kernels (docs/mutation.md).
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace fpcert {

/// One row per mutant: fault, class, outcome, the case and checks that killed it, and why.
std::string mutation_table(const MutationScore& s);
/// "mutation score of K on S: 19/20 killed for their own fault (95 %) ..." and the classes.
std::string mutation_summary(const MutationScore& s);
/// fpcert's verdict beside torch.allclose at 1e-2 and FlashAttention's 2x rule (results/results.hpp,
/// HeuristicVerdicts): the unmutated kernel's row (a refusal there is a false alarm), then one row per mutant judged;
/// "" when the heuristics were not measured.
std::string heuristics_table(const MutationScore& s);
/// One row per kernel: score, not applicable, killed by another check only and survivors by fault id, seconds.
std::string mutation_score_table(const std::vector<MutationScore>& scores);
/// Its header and one row, for printing as kernels finish.
std::string mutation_score_header();
std::string mutation_score_row(const MutationScore& s);
/// "12/13 (92.3 %)".
std::string score_text(int killed, int total);

}  // namespace fpcert
