// kernels/order.hpp — the structured summation order a kernel declares next to its free-text order:
// what the bitwise verdict tier emulates and what the envelope's accumulation term depends on
// (docs/bound_model.md, "Orders"). Every built-in kernel declares one; plugins through the ABI
// (fpcert_gemm_order) or fpcert.toml; an undeclared order is Unknown.
//
// The vocabulary (c_ij = sum over k of p_k, p_k = a_ik b_kj; "acc" the traits' accumulator format
// and rounding; every sum starts from +0 unless stated):
//   sequential        acc = step(acc, a_k, b_k) for k = 0..K-1
//   blocked along K   K cut into blocks of `block` products; each block's partial summed by `inner`
//                     from +0; partials joined by `outer` into the total (in acc, or in the traits'
//                     promote_format when promote_every > 0: promotion is blocking with a wider outer)
//   split-K           K cut into `splits` contiguous chunks of ceil(K / splits); each summed
//                     sequentially from +0; the partials combined by `outer` (atomic: added into C = +0
//                     in an arrival order that changes run to run: the order family of atomics split-K)
//   pairwise          the K products (each rounded into acc) summed by recursive halving
//   tensor-core block the instruction's k per step (`block`), its products fused by `block_model`
//   split products    operands cut into slices (kernels/emu/split.hpp, `split_scheme`); each kept slice
//                     product summed over K sequentially; the terms merged in fp32, smallest first
//   pow2 scaled       bf16 operands moved into fp16 by power-of-two scales (kernels/emu/bf16_on_fp16.hpp,
//                     `scale_scheme`: the scale per tensor / row and column / K-block, the outlier window,
//                     the tile modes), exact products summed by `term_order` in acc, the scales removed by
//                     one rounding per line (row mode) or per K-block (acc = RN(acc + RN(part 2^-s))), then
//                     the outliers' products on an fp32 path added once: docs/emulation.md, "The declared order"
//   ozaki2            FP64 by Ozaki-II with `moduli` moduli (kernels/gemm/cpu/ozaki2.hpp): rows of A and columns
//                     of B scaled by powers of two to integers and rounded to nearest, their residues multiplied
//                     in exact integer GEMMs, the product reconstructed exactly (CRT) and rounded once into fp64.
//                     Exact in K: every order of the K products gives the same bits (docs/fp64.md)
// Blocked with inner = exact: each block's products summed exactly and rounded once into acc (a block
// sum of a block-scaled GEMM, its scales inside the operands), then joined by `outer`.
// final_scale = tensor: the operands carry per-tensor scales s_A, s_B (NVFP4) that the arithmetic
// leaves out and applies at the end: C = RN_acc(acc * RN_acc(s_A s_B)).
// `step`: fma (one rounding: acc = RN(a*b + acc)) or mul_add (the product rounded into the product
// format, or into acc when products are declared exact, then added with one more rounding).
// Combining by `sequential` starts from the first partial (no +0); `pairwise` splits n partials
// into the first ceil(n/2) and the rest, recursively.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oracle/fused_dot.hpp"
#include "oracle/round.hpp"

namespace fpcert {

enum class OrderKind : std::uint8_t { Unknown, Sequential, BlockedK, SplitK, Pairwise, TensorCoreBlock, SplitProducts, Pow2Scaled, Ozaki2 };
enum class StepKind : std::uint8_t { Fma, MulAdd };
/// How a group of terms is summed: one rounding per addition in order, by recursive halving, or (a block's
/// products only) exactly and rounded once. Atomic (split-K partials only): each partial added into C, which
/// holds +0 first, with one rounding, in an order that changes run to run (atomicAdd arrival order): an order
/// family, never emulated bit for bit; a kernel declaring it declares run-to-run nondeterminism.
enum class Combine : std::uint8_t { Sequential, Pairwise, Exact, Atomic };
/// A step after the accumulation: none, or NVFP4's per-tensor scales (C = RN_acc(acc * RN_acc(s_A s_B))).
enum class FinalScale : std::uint8_t { None, Tensor };

/// The block-accumulation model of a tensor-core instruction. Three states:
/// - placeholder ("rz fp32 per block", measured = false, no params): the block's exact products and the
///   accumulator input summed exactly and rounded once with `block_rounding`. No hardware is known to do
///   that bit for bit (it aligns and truncates first), so the bitwise tier declines and the envelope judges.
/// - declared exact (measured = true, no params): a plugin states that very arithmetic ("model=measured").
/// - the behaviour card's model (params set, measured = true): the block model that `fpcert probe
///   tensor-cores` fitted and validated on this device for `instruction` (oracle/fused_dot.hpp), installed
///   by certify (kernels/tc/cards.hpp; docs/tensor_cores.md, "Certifying tensor-core kernels"). The bitwise
///   tier then composes it with the kernel's K-loop.
/// `instruction` names the card (kernels/tc/instruction.hpp ids, e.g. mma_f16_f32); for an unknown order it
/// lists the instructions the kernel may run, '|'-separated (cuBLAS: mma_f16_f32|wgmma_f16_f32), whose cards'
/// measured alignment and result bits the envelope then uses instead of the accumulator's nominal ones.
struct BlockModel {
  int fused_length = 0;                              ///< products per rounding (0: the instruction's k)
  Rounding block_rounding = Rounding::TowardZero;    ///< rounding of the block's sum into the accumulator
  bool measured = false;                             ///< parameters known exactly (bitwise possible)
  std::string source = "placeholder: rz fp32 per block";  ///< where the parameters come from
  std::string instruction;                           ///< the behaviour card's instruction id(s)
  int pad = 0;                                       ///< the K-loop runs over K rounded up to a multiple of this (0: k), zero-padded
  std::optional<FusedDotParams> params;              ///< the card's block model (oracle/fused_dot.hpp)
  bool operator==(const BlockModel&) const = default;
};

struct SummationOrder {
  OrderKind kind = OrderKind::Unknown;
  StepKind step = StepKind::Fma;
  int block = 0;                      ///< blocked: products per block; tensor-core block: the instruction's k
  Combine inner = Combine::Sequential;  ///< blocked: how a block's products are summed (exact: once rounded)
  Combine outer = Combine::Sequential;  ///< blocked: how block partials join; split-K: how partials combine
  int splits = 0;                     ///< split-K: number of contiguous chunks of K
  std::string split_scheme;           ///< split products: the scheme's name (kernels/emu/split.hpp)
  std::string scale_scheme;           ///< pow2 scaled: the strategy's tag (kernels/emu/bf16_on_fp16.hpp)
  OrderKind term_order = OrderKind::Sequential;  ///< split products, pow2 scaled: the order of the sums over K
  FinalScale final_scale = FinalScale::None;     ///< the per-tensor scales applied after the accumulation
  BlockModel block_model;             ///< tensor-core block (and split products on tensor cores)
  int bitwise_ulps = 0;               ///< the bitwise tier allows this many output ulps (0: bit for bit)
  int moduli = 0;                     ///< ozaki2: the number of moduli
  bool operator==(const SummationOrder&) const = default;

  bool known() const { return kind != OrderKind::Unknown; }
  static SummationOrder unknown() { return {}; }
  static SummationOrder sequential(StepKind s = StepKind::Fma) {
    SummationOrder o;
    o.kind = OrderKind::Sequential;
    o.step = s;
    return o;
  }
  static SummationOrder blocked(int block, Combine inner = Combine::Sequential, Combine outer = Combine::Sequential) {
    SummationOrder o;
    o.kind = OrderKind::BlockedK;
    o.block = block;
    o.inner = inner;
    o.outer = outer;
    return o;
  }
  static SummationOrder split_k(int splits, Combine combine = Combine::Sequential) {
    SummationOrder o;
    o.kind = OrderKind::SplitK;
    o.splits = splits;
    o.outer = combine;
    return o;
  }
  static SummationOrder pairwise() {
    SummationOrder o;
    o.kind = OrderKind::Pairwise;
    return o;
  }
  static SummationOrder tensor_core(int k, BlockModel model = {}) {
    SummationOrder o;
    o.kind = OrderKind::TensorCoreBlock;
    o.block = k;
    o.block_model = std::move(model);
    return o;
  }
  /// The K-loop of one instruction: steps of k (K zero-padded to a multiple of `pad`), each step's D the
  /// next step's C, the block model that of the card of `instruction` once certify installs it.
  static SummationOrder tensor_core(int k, std::string instruction, int pad) {
    SummationOrder o = tensor_core(k);
    o.block_model.instruction = std::move(instruction);
    o.block_model.pad = pad;
    return o;
  }
  /// bf16 operands on fp16 arithmetic by the power-of-two scaling of strategy `scheme` (cast, tensor, rowcol,
  /// kblock64, kblock128, outlier, auto).
  static SummationOrder pow2_scaled(std::string scheme, OrderKind term = OrderKind::Sequential, int k = 0) {
    SummationOrder o;
    o.kind = OrderKind::Pow2Scaled;
    o.scale_scheme = std::move(scheme);
    o.term_order = term;
    o.block = k;
    return o;
  }
  static SummationOrder split_products(std::string scheme, OrderKind term = OrderKind::Sequential, int k = 0) {
    SummationOrder o;
    o.kind = OrderKind::SplitProducts;
    o.split_scheme = std::move(scheme);
    o.term_order = term;
    o.block = k;
    return o;
  }
  static SummationOrder ozaki2(int moduli) {
    SummationOrder o;
    o.kind = OrderKind::Ozaki2;
    o.moduli = moduli;
    return o;
  }
  /// Does the declared arithmetic give the same bits in every order of the K products (exact integer arithmetic and
  /// one rounding)? Then a reordering of K is not a fault of the kernel's (suites/mutation/faults.cpp, one_run_in_n).
  bool order_free() const { return kind == OrderKind::Ozaki2; }
};

std::string_view to_string(OrderKind k);
std::string_view to_string(StepKind s);
std::string_view to_string(Combine c);
std::string_view to_string(FinalScale f);
std::optional<OrderKind> parse_order_kind(std::string_view s);

/// The spec string of an order (what fpcert.toml and `fpcert kernels` use), e.g. "sequential:step=fma",
/// "blocked:block=32,inner=sequential,outer=pairwise", "splitk:splits=4,combine=sequential",
/// "pairwise", "tensor_core:k=16,fused=16,rounding=rz,model=placeholder",
/// "tensor_core:k=16,insn=mma_f16_f32,pad=32,model=card", "split_products:scheme=3xtf32",
/// "pow2_scaled:scheme=rowcol,term=sequential", "blocked:block=32,inner=exact,outer=sequential",
/// "unknown"; with ",final_scale=tensor" for NVFP4's tensor scales, ",ulps=N" when the bitwise tier
/// allows N output ulps.
std::string order_spec(const SummationOrder& o);
/// Parse a spec string (the inverse of order_spec). Throws InputError naming the bad part and the
/// valid values.
SummationOrder parse_order_spec(std::string_view spec);
/// Why an order is malformed (a block of 0, a split-K of 1 chunk, an unknown split scheme, ...); empty: fine.
std::string check_order(const SummationOrder& o);

}  // namespace fpcert
