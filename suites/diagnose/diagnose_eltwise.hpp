// suites/diagnose/diagnose_eltwise.hpp — the diagnosis of an elementwise kernel's output (docs/diagnose.md, "Elementwise
// kernels"): hypotheses "f(x) correctly rounded with one change" (rounding mode, FTZ, DAZ, double rounding through f32,
// fewer significand bits, the last bit cleared), each computed by the oracle (oracle/math/elementary.hpp, oracle/round.hpp),
// and "computes what <kernel> computes" for every other registered kernel of the same function and formats that runs in
// this process; compared with the kernel's results bit for bit and ranked, in the GEMM diagnosis's record. Unary and
// binary (f32 x f32 -> f32) functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise_kernel.hpp"
#include "results/diagnosis.hpp"

namespace fpcert {

/// One elementwise case as the kernel saw it: its input codes and the results it wrote (codes of the output format).
struct EltwiseDiagnoseCase {
  std::string label;
  std::vector<std::uint32_t> codes;
  std::vector<std::uint32_t> got;
  std::vector<std::uint32_t> codes2;  ///< a binary function's second operand, beside codes (empty: unary)
};

/// A kernel of the same function and formats whose results are a hypothesis ("computes what <name> computes").
struct EltwiseOtherKernel {
  std::string name;
  std::vector<std::vector<std::uint32_t>> results;  ///< per case, its results on the case's codes
  std::string what;  ///< the hypothesis in words (empty: "computes what <name> computes")
  int changes = 1;   ///< changes from the declaration it counts as (ranking)
};

/// Diagnose the cases against the declaration `t` and the other kernels' results. Every hypothesis is evaluated on every
/// input; "declared" when the correctly rounded result (with the declared DAZ/FTZ) or a look-alike of it reproduces at
/// least 99.9 % of the results (or every result lies within the claim while none reproduces 99.9 %), "consistent" when
/// another hypothesis does, "logic_error" otherwise with the first inputs no hypothesis explains (DiagnosisElement: i the
/// position in the case, j the input code, got the kernel's value, ref the correctly rounded value, best the top
/// hypothesis's). A passing kernel whose claim is looser than correct rounding and that is correctly rounded on every
/// input gets the hint that its claim could be tightened.
DiagnosisRecord diagnose_eltwise(const std::string& kernel, const EltwiseTraits& t, const std::vector<EltwiseDiagnoseCase>& cases,
                                 const std::vector<EltwiseOtherKernel>& others, int top = 8, int unexplained = 5);

/// Run kernel `k` on input codes and return its results (the runner's guarded buffers, on the kernel's device).
/// Throws DeviceError / NotSupportedError as the kernel does, InputError when no device is reachable.
std::vector<std::uint32_t> eltwise_run_codes(ElementwiseKernel& k, const std::vector<std::uint32_t>& codes,
                                             const std::vector<std::uint32_t>* codes2 = nullptr);

/// The input codes a case names for kernel traits t: a case id of the `elementwise` suite (`special`, `sample`,
/// `all_f16`, `all_bf16`), "all" (every case of that suite for the kernel: one list per case), or "FIRST+COUNT" (codes
/// FIRST ... FIRST + COUNT - 1, decimal or 0x hex, at most 2^26); a binary function: `special_pairs`, `sample_pairs` or
/// "all" (both; no FIRST+COUNT). Throws InputError otherwise.
std::vector<EltwiseDiagnoseCase> eltwise_diagnose_cases(const EltwiseTraits& t, const std::vector<std::string>& cases);

/// Run kernel `k` on the cases (default: every case of its `elementwise` suite), run every other registered kernel with
/// the same function and formats that this process can run (not `k`, not kernels named `k~...` nor k's base when k is
/// `base~change`), and diagnose. A binary function (f32 x f32 -> f32) on its input pairs.
DiagnosisRecord diagnose_eltwise_kernel(ElementwiseKernel& k, const std::vector<std::string>& cases, int top = 8);

/// The arithmetic changes the identification measure injects around a kernel (a wrapper on its inputs or results,
/// declaring the kernel's own traits), each with the hypothesis that should name it.
enum class EltwiseChange : std::uint8_t { FtzResults, DazInputs, TowardZero, Up, Down, LastBitCleared, Round8Bits };
inline constexpr EltwiseChange kAllEltwiseChanges[] = {EltwiseChange::FtzResults, EltwiseChange::DazInputs,   EltwiseChange::TowardZero,
                                                       EltwiseChange::Up,         EltwiseChange::Down,        EltwiseChange::LastBitCleared,
                                                       EltwiseChange::Round8Bits};
std::string to_string(EltwiseChange c);
/// The hypothesis id that names the change.
std::string eltwise_change_named(EltwiseChange c);
/// `inner` with the change applied, named `<inner>~<change>`. The directed roundings and the bit counts are made from the
/// inner kernel's own result (its direction from f(x) in double by libm: independent of the oracle); InputError where the
/// change cannot be made for this function or format (no double libm function; 8 bits from a 16-bit output, which would be a double rounding).
std::unique_ptr<ElementwiseKernel> make_eltwise_change(std::unique_ptr<ElementwiseKernel> inner, EltwiseChange c);

struct EltwiseIdentificationRow {
  std::string kernel, change, named, top, kind;
  double top_fraction = 0, seconds = 0;
  bool identified = false;
  bool dormant = false;  ///< the change alters no result on these cases (the diagnosis: "declared"): not counted
};
/// Every change injected into each host kernel and diagnosed on its elementwise cases: identified when the top hypothesis
/// (or a look-alike of it) is the change's own.
std::vector<EltwiseIdentificationRow> measure_eltwise_identification(const std::vector<std::string>& kernels,
                                                                     const std::vector<EltwiseChange>& changes);

}  // namespace fpcert
