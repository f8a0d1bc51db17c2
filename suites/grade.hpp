// suites/grade.hpp — metrics and verdict of one kernel output against the exact reference.
#pragma once

#include <cstdint>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/bound.hpp"

namespace fpcert {

struct GradeInput {
  const Problem* problem = nullptr;
  const GemmRef* ref = nullptr;
  const KernelTraits* traits = nullptr;
  BoundVariant variant = BoundVariant::Independent;  ///< the course gate's variant (reported, never decisive)
  const std::vector<std::uint64_t>* codes = nullptr;  ///< the kernel's output codes, row-major m x n
  std::int64_t unwritten = 0, first_unwritten = -1;   ///< from the runner's pre-fill check
  int worst_count = 5;
  /// The strongest tier to use: Bitwise (default: the strongest the declarations allow);
  /// EnvelopeStatistical (no emulation: the envelope and, where it applies, the statistical test);
  /// Envelope (the envelope alone). Studies of the weaker tiers.
  Tier strongest = Tier::Bitwise;
};

/// Fill metrics, the course gate (bound, gate fraction, worst elements), the envelope, the checks
/// (docs/bound_model.md, "Checks"), the tier, evidence, status and reason of `out` (which already holds
/// the runner's findings: guards, determinism). Inputs that never reach rounding in the kernel's
/// storage are flagged.
void grade(const GradeInput& in, CaseResult& out);

/// The kernel's error sources (suites/envelope.hpp) for which none of these cases holds evidence:
/// `certify` fails a kernel with any (a suite that cannot see an error source certifies nothing about it).
std::vector<std::string> missing_evidence(const KernelTraits& t, const std::vector<CaseResult>& cases);

/// Whether every value is exactly representable in format f.
bool all_representable(const std::vector<double>& values, const Format& f);

}  // namespace fpcert
