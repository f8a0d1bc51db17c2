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
//                     sequentially from +0; the partials combined by `outer`
//   pairwise          the K products (each rounded into acc) summed by recursive halving
//   tensor-core block the instruction's k per step (`block`), its products fused by `block_model`
//   split products    operands cut into slices (kernels/emu/split.hpp, `split_scheme`); each kept slice
//                     product summed over K sequentially; the terms merged in fp32, smallest first
// `step`: fma (one rounding: acc = RN(a*b + acc)) or mul_add (the product rounded into the product
// format, or into acc when products are declared exact, then added with one more rounding).
// Combining by `sequential` starts from the first partial (no +0); `pairwise` splits n partials
// into the first ceil(n/2) and the rest, recursively.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oracle/round.hpp"

namespace fpcert {

enum class OrderKind : std::uint8_t { Unknown, Sequential, BlockedK, SplitK, Pairwise, TensorCoreBlock, SplitProducts };
enum class StepKind : std::uint8_t { Fma, MulAdd };
enum class Combine : std::uint8_t { Sequential, Pairwise };

/// The block-accumulation model of a tensor-core instruction. The behaviour card (docs/tensor_cores.md,
/// oracle/fused_dot.hpp once it is on main) parameterises it from measurements; until then a kernel
/// declares the placeholder "rz fp32 per block": the block's exact products and the accumulator input
/// summed exactly and rounded once into the accumulator with `block_rounding`. No hardware is known to
/// do that bit for bit (it aligns and truncates first), so `measured` stays false and the bitwise tier
/// declines: such kernels are judged by the envelope, which says so.
struct BlockModel {
  int fused_length = 0;                              ///< products per rounding (0: the instruction's k)
  Rounding block_rounding = Rounding::TowardZero;    ///< rounding of the block's sum into the accumulator
  bool measured = false;                             ///< parameters measured on this device (bitwise possible)
  std::string source = "placeholder: rz fp32 per block";  ///< where the parameters come from
  bool operator==(const BlockModel&) const = default;
};

struct SummationOrder {
  OrderKind kind = OrderKind::Unknown;
  StepKind step = StepKind::Fma;
  int block = 0;                      ///< blocked: products per block; tensor-core block: the instruction's k
  Combine inner = Combine::Sequential;  ///< blocked: how a block's products are summed
  Combine outer = Combine::Sequential;  ///< blocked: how block partials join; split-K: how partials combine
  int splits = 0;                     ///< split-K: number of contiguous chunks of K
  std::string split_scheme;           ///< split products: the scheme's name (kernels/emu/split.hpp)
  OrderKind term_order = OrderKind::Sequential;  ///< split products: the order of each slice-product GEMM
  BlockModel block_model;             ///< tensor-core block (and split products on tensor cores)
  int bitwise_ulps = 0;               ///< the bitwise tier allows this many output ulps (0: bit for bit)
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
  static SummationOrder split_products(std::string scheme, OrderKind term = OrderKind::Sequential, int k = 0) {
    SummationOrder o;
    o.kind = OrderKind::SplitProducts;
    o.split_scheme = std::move(scheme);
    o.term_order = term;
    o.block = k;
    return o;
  }
};

std::string_view to_string(OrderKind k);
std::string_view to_string(StepKind s);
std::string_view to_string(Combine c);
std::optional<OrderKind> parse_order_kind(std::string_view s);

/// The spec string of an order (what fpcert.toml and `fpcert kernels` use), e.g. "sequential:step=fma",
/// "blocked:block=32,inner=sequential,outer=pairwise", "splitk:splits=4,combine=sequential",
/// "pairwise", "tensor_core:k=16,fused=16,rounding=rz,model=placeholder", "split_products:scheme=3xtf32",
/// "unknown"; with ",ulps=N" when the bitwise tier allows N output ulps.
std::string order_spec(const SummationOrder& o);
/// Parse a spec string (the inverse of order_spec). Throws InputError naming the bad part and the
/// valid values.
SummationOrder parse_order_spec(std::string_view spec);
/// Why an order is malformed (a block of 0, a split-K of 1 chunk, an unknown split scheme, ...); empty: fine.
std::string check_order(const SummationOrder& o);

}  // namespace fpcert
