// suites/verdict/emulate/emulate.hpp — the bitwise verdict tier's emulator: the arithmetic a kernel declares (its
// structured order, kernels/order.hpp, and the roundings of its traits) interpreted on a case's inputs,
// so that the kernel's output can be required equal bit for bit (docs/bound_model.md, "Tiers").
//
// Independent of the CPU models (kernels/gemm/cpu/): it shares primitives only (the oracle's correct
// rounding, the split schemes' slicing), never their loops. One step of every order is
// step(acc, a, b) = round_acc(acc + a b) with the exact sum (fma) or round_acc(acc + round_p(a b))
// (mul_add); sums of two partials are round(x + y); zeros follow IEEE 754 (x + (-x) is +0 except
// toward -Inf, -0 + -0 = -0). fp32 round-to-nearest steps run on the host's fmaf (vectorised along a row
// of C), narrow accumulators hosted in fp32, other formats of at most 26 bits through an integer rounding of
// the exact two-sum, the rest through oracle/round (tests/suites/emulate_test.cpp holds every path equal to
// the oracle's rounding, and the fast paths equal to the generic one, EmulationPath).
#pragma once

#include <cstdint>
#include <string>
#include <stdexcept>
#include <vector>

#include "kernels/kernel.hpp"

namespace fpcert {

/// Why the bitwise tier cannot emulate a kernel with these traits (the order is unknown, a tensor-core
/// block model is not measured, a format is too wide for the exact step); empty when it can.
std::string emulation_unavailable(const KernelTraits& t);

/// Exact values rounded into a format as the runner stores a kernel's inputs (rounding r, the format's
/// default saturation).
std::vector<double> round_values(const std::vector<double>& exact, const Format& f, Rounding r);

/// Whether a value of `wide` can round when it moves into f: fewer significant bits or a smaller range.
bool narrower_format(const Format& f, const Format& wide);

/// The operands as the kernel's multiplier sees them: its inputs (values of a_input/b_input) rounded
/// into a_operand/b_operand with input_rounding where those are narrower (tf32 inside a TF32 tensor core).
std::vector<double> operand_values(const std::vector<double>& inputs, const Format& input, const Format& operand, Rounding r);

/// The per-tensor scales inside a block-scaled kernel's operands (NVFP4's s_t, suites/verdict/block_reference.hpp;
/// 1 otherwise). An order with final_scale = tensor divides them out of the operands (exactly: each value is
/// an element times its block scale times s_t) and applies them after the accumulation.
struct TensorScales {
  double a = 1, b = 1;
};

/// Which implementation computes the declared arithmetic. Fast (the default) runs the row loops on the host's
/// float arithmetic (fmaf, the fp32-hosted narrow accumulator, fp32 pairwise rows, the rounding mode set toward
/// zero for truncating accumulators) and power-of-two scaling with its shortcuts (exact conversions done as
/// casts, the outlier path visiting only the lines that have outliers). Generic runs every step through the
/// scalar rounding (the integer rounding of an exact two-sum, or the oracle) and every conversion through the
/// oracle: slower, and kept for the tests that hold the two equal bit for bit (tests/suites/emulate_test.cpp).
enum class EmulationPath : std::uint8_t { Fast, Generic };

/// Thrown by emulate_gemm when the case takes a tensor-core behaviour card where it was not validated: a block
/// result that rounds inexactly below the accumulator's normal range (oracle/fused_dot.hpp, FusedDotNotes). The
/// grading then has no bitwise verdict and the envelope judges, with the reason (docs/tensor_cores.md).
struct EmulationDeclined : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// C = A B (codes of t.out, row-major m x n) computed exactly as t declares, from the inputs as the kernel
/// received them (a: m x k, b: k x n, row-major values of t.a_input / t.b_input; a block-scaled kernel's
/// dequantized operands, with their tensor scales `ts`). Throws std::invalid_argument when
/// emulation_unavailable(t) is not empty, EmulationDeclined when a card meets a regime it was not validated on.
std::vector<std::uint64_t> emulate_gemm(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k,
                                        const std::vector<double>& a, const std::vector<double>& b, TensorScales ts = {},
                                        EmulationPath path = EmulationPath::Fast);

/// One rounded step of the emulator, exposed for its tests: round_f(x + y) with IEEE zero signs and
/// non-finite operands (x, y values; the exact sum is formed without rounding).
double emulate_add(const Format& f, Rounding r, double x, double y);
/// round_f(a b + acc) with one rounding (a b exact in double: operands of at most 26 significant bits).
double emulate_fma(const Format& f, Rounding r, double a, double b, double acc);
/// round_f(x) of a double.
double emulate_round(const Format& f, Rounding r, double x);

}  // namespace fpcert
