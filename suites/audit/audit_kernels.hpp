// suites/audit/audit_kernels.hpp — the kernels an audit runs besides the registered ones (docs/audit.md): a host
// kernel computing a traits declaration by fpcert's emulator (for `--traits` without a kernel), and the mutants the
// fault catalogue does not hold, made from the wrapped kernel as a black box: zeros (every output +0), constant (every
// output the mean of the wrapped kernel's outputs, rounded into the output format), epilogue_constant (outputs times
// 1 + 2^-7), reused_output (the previous call's outputs); inputs_tf32 for fp32 inputs and inputs_narrowed for 16-bit
// ones (the operands narrowed before the call).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

/// A host kernel that declares `declared` and computes it by emulate_gemm in `computed` (an order the declaration
/// admits: its own when it declares one, e.g. sequential FMA when it declares none).
std::unique_ptr<GemmKernel> make_emulated_kernel(std::string name, const KernelTraits& declared, const SummationOrder& computed);

/// The zeros mutant of a host kernel: claims its traits, writes +0 everywhere (never calls it).
std::unique_ptr<GemmKernel> make_zeros_mutant(std::unique_ptr<GemmKernel> wrapped);
/// The constant mutant of a host kernel: runs it, then writes the mean of its finite outputs (rounded to nearest
/// into the output format) into every element.
std::unique_ptr<GemmKernel> make_constant_mutant(std::unique_ptr<GemmKernel> wrapped);
/// The inputs_tf32 mutant of a host kernel with fp32 inputs: A and B rounded to tf32 (nearest-away, cvt.rna) before
/// the call (TF32 passed off as fp32: torch's allow_tf32, cuBLAS's default math mode).
std::unique_ptr<GemmKernel> make_tf32_inputs_mutant(std::unique_ptr<GemmKernel> wrapped);
/// The inputs_narrowed mutant: A and B (16-bit formats: f16, bf16) rounded to 3 fewer significant bits, nearest even,
/// before the call (f16 read at bf16's precision; bf16 at 5 bits): an operand staged through a narrower format.
std::unique_ptr<GemmKernel> make_narrowed_inputs_mutant(std::unique_ptr<GemmKernel> wrapped);
/// The epilogue_constant mutant: every output of the wrapped kernel times (1 + 2^-7), rounded into the output format.
std::unique_ptr<GemmKernel> make_epilogue_constant_mutant(std::unique_ptr<GemmKernel> wrapped);
/// The reused_output mutant's memory, shared by the mutants of one power row (one per seed).
struct ReusedOutput {
  std::int64_t m = -1, n = -1;
  std::uint64_t a_hash = 0;  ///< A's codes in the call that computed `codes` (a repeated run of the same case computes again)
  std::vector<std::uint64_t> codes;
};
/// The reused_output mutant: a call of the shape of the previous one writes the previous call's outputs (a stale output
/// buffer); the first call computes.
std::unique_ptr<GemmKernel> make_reused_output_mutant(std::unique_ptr<GemmKernel> wrapped, std::shared_ptr<ReusedOutput> last);

/// The batch-invariance fixtures (docs/audit.md, "Batch invariance and reproducibility"), both fp32, order unknown,
/// declaring batch invariance: the variant one computes split-K 4 below 8 rows and sequential FMA from 8 (a row's bits
/// change with M: refused), the invariant one sequential FMA whatever M (passed).
inline constexpr const char* kBatchVariantFixture = "fixture_gemm_f32_batch_variant";
inline constexpr const char* kBatchInvariantFixture = "fixture_gemm_f32_batch_invariant";
std::unique_ptr<GemmKernel> make_batch_fixture(bool variant);
/// Register both fixtures (as mutants, hidden from `fpcert kernels`); idempotent. run_audit calls it before it looks up
/// --kernel, so they exist only in an audit.
void register_audit_fixtures();

}  // namespace fpcert
