// suites/verdict/grade.hpp — metrics and verdict of one kernel output against the exact reference.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generators/problem.hpp"
#include "kernels/kernel.hpp"
#include "oracle/gemm_ref.hpp"
#include "results/results.hpp"
#include "suites/verdict/bound.hpp"

namespace fpcert {

/// An order given from outside the kernel's declaration (a revealed tree, suites/reveal/revealed_order.hpp): the
/// bitwise tier emulates it instead of the declared order. With `fallback` set it is not used, and the
/// declared order decides as it would without it (the case says why).
struct OrderOverride {
  std::string name;      ///< what the bitwise check calls it: "the revealed order (every element: sequential chain ...)"
  std::string fallback;  ///< non-empty: why it cannot be used for this case
  /// C as the order computes it (codes of the output format, row-major m x n) from the inputs as the kernel
  /// received them (values of its input formats, A m x k and B k x n row-major).
  std::function<std::vector<std::uint64_t>(const std::vector<double>& a, const std::vector<double>& b)> emulate;
};

/// The exact reference of a problem's inputs rounded into formats a and b (GradeInput::inputs_ref).
using InputsReference = std::function<std::shared_ptr<const GemmRef>(const Format& a, const Format& b, Rounding r)>;

/// What the bitwise tier's emulator gives on a case: the declared arithmetic's output codes, or why a tensor-core card
/// declined the case (suites/verdict/emulate/emulate.hpp, EmulationDeclined).
struct Emulated {
  std::vector<std::uint64_t> codes;
  std::string declined;
};
/// The emulator's output for a kernel's traits on a case, kept by the caller (GradeInput::emulated): `make` computes it.
using EmulationMemo = std::function<std::shared_ptr<const Emulated>(const KernelTraits& t, const std::function<Emulated()>& make)>;

struct GradeInput {
  const Problem* problem = nullptr;
  const GemmRef* ref = nullptr;
  const Matrix* a = nullptr;  ///< the operands ref was computed from, when not the problem's (block-scaled kernels)
  const Matrix* b = nullptr;
  /// Whether every operand reaches the multiplier exactly in its storage format, when the runner knows
  /// better than a look at a and b (block-scaled kernels: NVFP4 applies its tensor scales at the end).
  std::optional<bool> a_exact, b_exact;
  /// The per-tensor scales inside a and b (NVFP4's s_t, suites/verdict/block_reference.hpp; 1 otherwise), which an
  /// order with final_scale = tensor applies after the accumulation (suites/verdict/emulate/emulate.hpp, TensorScales).
  double a_tensor_scale = 1, b_tensor_scale = 1;
  const KernelTraits* traits = nullptr;
  BoundVariant variant = BoundVariant::Independent;  ///< the course gate's variant (reported, never decisive)
  const std::vector<std::uint64_t>* codes = nullptr;  ///< the kernel's output codes, row-major m x n
  std::int64_t unwritten = 0, first_unwritten = -1;   ///< from the runner's pre-fill check
  int worst_count = 5;
  /// The strongest tier to use: Bitwise (default: the strongest the declarations allow);
  /// EnvelopeStatistical (no emulation: the envelope and, where it applies, the statistical test);
  /// Envelope (the envelope alone). Studies of the weaker tiers.
  Tier strongest = Tier::Bitwise;
  /// Keep the error map (results/results.hpp, ErrorMap) of a passing case too (failing cases always keep it).
  bool error_map_always = false;
  /// The output tile the kernel declares (0: none), recorded so a report shows worst elements in tile coordinates.
  std::int64_t tile_m = 0, tile_n = 0;
  /// An order from outside the declaration (certify --order revealed / FILE); null: the declared order.
  const OrderOverride* order = nullptr;
  /// A kernel declaring run-to-run nondeterminism: the distinct outputs of its later runs, each judged on its own
  /// after the checked run (suites/verdict/envelope.hpp, envelope_later_runs); null: none to judge. `runs`: runs made (the
  /// checked one included), of which `differing_runs` later ones differed.
  const std::vector<std::vector<std::uint64_t>>* later = nullptr;
  int runs = 0, differing_runs = 0;
  /// The exact reference of the problem's A and B rounded into formats a and b by r (round_values: the inputs as the
  /// kernel receives them, the tiers' ref'), kept by the caller across kernels and mutants (suites/ops/gemm/
  /// gemm_operation.hpp, gemm_inputs_reference); empty: grade computes it. Used only with the problem's own A and B
  /// (a and b above null).
  InputsReference inputs_ref;
  /// The emulator's output, kept by the caller across a kernel and its mutants (which declare the kernel's traits: a
  /// mutation campaign grades every live mutant on the same case; suites/ops/gemm/gemm_operation.hpp, gemm_emulation);
  /// empty: grade computes it. Used only with the problem's own A and B and the declared order (no `order` above).
  EmulationMemo emulated;
  /// Non-empty: why fp64's envelope is not applied to this case (a line beyond the span domain of a scheme that claims a
  /// bound of its own, InputDomain::span_scheme_graded): the bitwise emulation and the scheme_bound check judge it.
  std::string envelope_waived;
};

/// Fill metrics, the course gate (bound, gate fraction, worst elements), the envelope, the checks
/// (docs/bound_model.md, "Checks"), the tier, evidence, status and reason of `out` (which already holds
/// the runner's findings: guards, determinism). Inputs that never reach rounding in the kernel's
/// storage are flagged.
void grade(const GradeInput& in, CaseResult& out);

/// The kernel's error sources (suites/verdict/envelope.hpp) for which none of these cases holds evidence:
/// `certify` fails a kernel with any (a suite that cannot see an error source certifies nothing about it).
std::vector<std::string> missing_evidence(const KernelTraits& t, const std::vector<CaseResult>& cases);

/// Whether every value is exactly representable in format f.
bool all_representable(const std::vector<double>& values, const Format& f);

}  // namespace fpcert
