// suites/verdict/emulate/emulate_schemes.hpp — the bitwise tier's scheme-driven orders (suites/verdict/emulate/emulate.hpp): split products
// and power-of-two scaling onto fp16. Each takes the inputs as the kernel received them and returns C's
// values before the output rounding (row-major m x n). Internal to suites/verdict/emulate/emulate.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "oracle/fused_dot.hpp"

namespace fpcert::emulate_detail {

/// Where an emulation stops once a card block result rounds inexactly below the accumulator's normal range: emulate_gemm
/// then declines the bitwise verdict (EmulationDeclined), so the rows still to come would be computed for nothing (on the
/// certify suite's tiny_* cases every element meets one, and the host emulated them all: 8-11 s of a 9xbf16 unit on one
/// thread). Rows run in parallel; a row after the first row found is skipped and every row before it finishes, so the row
/// found is the first in row order whatever the thread count (every row before it was computed and had none).
struct FirstInexactRow {
  std::atomic<std::int64_t> row{std::numeric_limits<std::int64_t>::max()};
  bool found() const { return row.load(std::memory_order_relaxed) != std::numeric_limits<std::int64_t>::max(); }
  /// Whether row i need not be computed (a row before it already met one).
  bool skip(std::int64_t i) const { return i > row.load(std::memory_order_relaxed); }
  /// Row i met one.
  void mark(std::int64_t i) {
    std::int64_t cur = row.load(std::memory_order_relaxed);
    while (i < cur && !row.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
    }
  }
};

/// Split products: slices per operand, each kept slice product summed over K by fp32 FMA from +0
/// (k ascending), the terms merged in fp32 in the scheme's order starting from the first term; one row of
/// C at a time, columns innermost. The slices of a float are taken on its bit pattern (slices of fp32's grid,
/// suites/verdict/emulate/emulate_round.hpp) unless one overflows or `generic`: then by the scheme's split_value.
std::vector<double> split_products(const SplitScheme& sc, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                   const std::vector<double>& b, bool generic = false);

/// Split products on tensor cores (order split_products with term=tensor_core and a behaviour card: the CUDA
/// split kernels, kernels/emu/cuda/emu_split_kernel.cuh): the same slices; K zero-padded to a multiple of
/// `pad`; per step of `step` inputs (one instruction, k ascending) every kept term but (0, 0), in the scheme's
/// order, into a small-term accumulator, then the (0, 0) term into the main one, each one fused_dot of the
/// card's model whose C is that accumulator (both from +0); C = RN_f32(small + main) (one fp32 addition), or
/// the main accumulator alone when the scheme keeps only (0, 0).
/// `subnormal_inexact` (may be null) counts the block results that rounded inexactly below fp32's normal range; with
/// `stop` (may be null) the rows after the first row that meets one are skipped (their values are then meaningless) and
/// the count covers the rows computed.
std::vector<double> split_products_tc(const SplitScheme& sc, const FusedDotParams& p, int step, int pad, std::int64_t m, std::int64_t n,
                                      std::int64_t k, const std::vector<double>& a, const std::vector<double>& b, bool generic = false,
                                      std::uint64_t* subnormal_inexact = nullptr, FirstInexactRow* stop = nullptr);

/// The tensor-core card order (kernels/order.hpp, OrderKind::TensorCoreBlock with a behaviour card; fp32 promotion where
/// the kernel declares it) on the process's default engine's device (oracle/card_chains.hpp; docs/tensor_cores.md "The card
/// emulation on the GPU"): ao, bo the operands (m x k, k x n); fills value (m x n, before the output rounding) for every
/// element the fast path decides and sets host_rows[i] = 1 for each row holding one it does not (the caller emulates those
/// rows); false, value and host_rows untouched, when the card or the engine does not take the job.
bool tensor_core_on_device(const KernelTraits& t, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& ao,
                           const std::vector<double>& bo, std::vector<double>& value, std::vector<std::uint8_t>& host_rows);

/// A value of format f as an instruction reads it: its code in f's container (tf32 in an fp32 pattern).
/// The value must be one of f's (the encoding is then exact).
std::uint32_t card_operand_code(const Format& f, double v);

/// BF16 on fp16 by power-of-two scales (order pow2_scaled, docs/emulation.md "The declared order"): the
/// strategy's plans (kernels/emu/bf16_on_fp16.hpp, the declared scale rule) give each operand entry its
/// scale 2^s or mark it an outlier; a' = RN_f16(a 2^s) (the oracle's rounding, IEEE overflow); per 128 x 128
/// tile of C the mode (row: one sum over K, C = RN_f32(acc 2^-(s_A + s_B)); kblock: a sum per segment from +0,
/// acc = RN(acc + RN(part 2^-(s_A,g + s_B,g))), from +0) with fp32 FMA along K on a' b' (exact products);
/// then where row i of A or column j of B has outliers, corr = fp32 FMA over the A outliers of the row
/// (times b) and then over the B outliers of the column whose a is not one (times a), k ascending from
/// +0, on the bf16 values; C = RN(C + corr). One row of C at a time, columns innermost. `generic`: every
/// conversion through the oracle, the rescale by ldexp, the outlier path scanning every entry of B (the
/// reference the fast path is tested against, EmulationPath::Generic).
/// `card` (the fp16 MMA's behaviour card, term order tensor_core: the CUDA kernels, kernels/emu/cuda/emu_bf16_kernel.cuh):
/// each sum over K (a row-mode tile's whole K, a K-block mode tile's segment) is the instruction's K-loop instead
/// of the FMA loop: steps of `step` from +0, each one fused_dot of the card's model, K zero-padded to `pad`
/// (segments are whole multiples of it); the rescales, the outliers' fp32 path and the merge as above.
/// `subnormal_inexact` and `stop` as for split_products_tc.
std::vector<double> pow2_scaled(const Bf16OnF16Policy& pol, std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<double>& a,
                                const std::vector<double>& b, bool generic = false, const FusedDotParams* card = nullptr, int step = 16,
                                int pad = 32, std::uint64_t* subnormal_inexact = nullptr, FirstInexactRow* stop = nullptr);

}  // namespace fpcert::emulate_detail
