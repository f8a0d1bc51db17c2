// plugin/gemm_abi.cpp — a GEMM's declaration in the plugin ABI: validation and translation (plugin/gemm_abi.hpp).
#include "plugin/gemm_abi.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert {

using Kerr = std::function<void(const std::string&)>;

const Format* need_format_abi(const std::string& field, std::int32_t v, bool allow_scale, const Kerr& kerr, const std::string& versions) {
  const Format* f = format_from_abi(v);
  if (v == FPCERT_FORMAT_NONE) kerr(fmt::format("{}: required, got FPCERT_FORMAT_NONE", field));
  else if (!f) kerr(fmt::format("{}: unknown format value {} (valid: {}){}", field, v, abi_format_list(), versions));
  else if (!allow_scale && *f == ue8m0)
    kerr(fmt::format("{}: ue8m0 is a scale format (no sign, no zero); it is valid only for conversions", field));
  else return f;
  return nullptr;
}

void need_rounding_abi(const std::string& field, std::int32_t v, bool allow_stochastic, const Kerr& kerr, const std::string& versions) {
  const auto r = rounding_from_abi(v);
  if (!r) kerr(fmt::format("{}: unknown rounding value {} (valid: 1 nearest-even, 2 nearest-away, 3 toward-zero, 4 up, 5 down, 6 stochastic){}",
                           field, v, versions));
  else if (*r == Rounding::Stochastic && !allow_stochastic)
    kerr(fmt::format("{}: stochastic rounding is not valid here (fpcert would have to supply the random bits)", field));
}

void validate_gemm_traits_abi(const std::string& prefix, const fpcert_gemm_traits& g, const Kerr& kerr, const std::string& versions) {
  auto need_format = [&](const std::string& field, std::int32_t v, bool allow_scale) {
    return need_format_abi(prefix + field, v, allow_scale, kerr, versions);
  };
  auto need_rounding = [&](const std::string& field, std::int32_t v, bool allow_stochastic) {
    need_rounding_abi(prefix + field, v, allow_stochastic, kerr, versions);
  };
  need_format("a_input", g.a_input, false);
  need_format("b_input", g.b_input, false);
  const Format* a_op = need_format("a_operand", g.a_operand, false);
  const Format* b_op = need_format("b_operand", g.b_operand, false);
  need_format("acc_format", g.acc_format, false);
  need_format("out_format", g.out_format, false);
  need_rounding("input_rounding", g.input_rounding, false);
  need_rounding("acc_rounding", g.acc_rounding, true);
  if (g.exact_products == 1) {
    if (g.product_format != FPCERT_FORMAT_NONE)
      kerr(prefix + "product_format must be FPCERT_FORMAT_NONE when exact_products is 1 (exact products are not rounded)");
  } else if (g.exact_products == 0) {
    need_format("product_format (required when exact_products is 0)", g.product_format, false);
  } else {
    kerr(prefix + fmt::format("exact_products must be 0 or 1, got {}", g.exact_products));
  }
  if (g.promote_every < 0) kerr(prefix + fmt::format("promote_every must be >= 0, got {}", g.promote_every));
  else if (g.promote_every > 0) need_format("promote_format (required when promote_every > 0)", g.promote_format, false);
  else if (g.promote_format != FPCERT_FORMAT_NONE)
    kerr(prefix + "promote_format must be FPCERT_FORMAT_NONE when promote_every is 0 (no promotion)");
  if (!(g.operand_u >= 0 && g.operand_u < 1)) kerr(prefix + fmt::format("operand_u must be in [0, 1), got {}", g.operand_u));
  else if (g.operand_u > 0 && (!g.operand_note || !*g.operand_note))
    kerr(prefix + "operand_note is required when operand_u > 0 (state the derivation of the effective unit roundoff)");
  else if (a_op && b_op && g.operand_u > std::max(a_op->unit_roundoff(), b_op->unit_roundoff()))
    // A split emulation is more precise than its operand formats, never less: a larger operand_u
    // would only widen the kernel's own bound (docs/plugin.md).
    kerr(prefix + fmt::format("operand_u = {} exceeds the unit roundoff the declared operand formats imply ({} and {}: {})", g.operand_u,
                     a_op->tag, b_op->tag, std::max(a_op->unit_roundoff(), b_op->unit_roundoff())));
  if (!g.order || !*g.order) kerr(prefix + "order is empty: state the operation order (what the bound model and a reader rely on)");
}

void validate_gemm_order_abi(const std::string& prefix, const fpcert_gemm_order& g, const Kerr& kerr, const std::string& versions) {
  if (g.kind < FPCERT_ORDER_UNKNOWN || g.kind > FPCERT_ORDER_SPLIT_PRODUCTS) {
    kerr(fmt::format("{}kind: {} value {} (valid: 1 unknown, 2 sequential, 3 blocked_k, 4 split_k, 5 pairwise, "
                     "6 tensor_core_block, 7 split_products; state FPCERT_ORDER_UNKNOWN when the order is not fixed){}",
                     prefix, g.kind == 0 ? "required, got" : "unknown", g.kind, versions));
    return;
  }
  const bool stepped = g.kind == FPCERT_ORDER_SEQUENTIAL || g.kind == FPCERT_ORDER_BLOCKED_K || g.kind == FPCERT_ORDER_SPLIT_K;
  if (stepped && g.step != FPCERT_STEP_FMA && g.step != FPCERT_STEP_MUL_ADD)
    kerr(fmt::format("{}step: required for this kind, got {} (valid: 1 fma, 2 mul_add){}", prefix, g.step, versions));
  auto need_combine = [&](const char* field, std::int32_t v) {
    if (v != FPCERT_COMBINE_SEQUENTIAL && v != FPCERT_COMBINE_PAIRWISE)
      kerr(fmt::format("{}{}: required for this kind, got {} (valid: 1 sequential, 2 pairwise){}", prefix, field, v, versions));
  };
  if (g.kind == FPCERT_ORDER_BLOCKED_K) need_combine("inner", g.inner);
  if (g.kind == FPCERT_ORDER_BLOCKED_K) need_combine("outer", g.outer);
  if (g.kind == FPCERT_ORDER_SPLIT_K && g.outer != FPCERT_COMBINE_ATOMIC) need_combine("outer", g.outer);
  const bool tc = g.kind == FPCERT_ORDER_TENSOR_CORE_BLOCK ||
                  (g.kind == FPCERT_ORDER_SPLIT_PRODUCTS && g.term_order == FPCERT_ORDER_TENSOR_CORE_BLOCK);
  if (tc && !rounding_from_abi(g.block_rounding))
    kerr(fmt::format("{}block_rounding: required for a tensor-core block, got {}{}", prefix, g.block_rounding, versions));
  if (g.kind == FPCERT_ORDER_SPLIT_PRODUCTS && g.term_order != FPCERT_ORDER_SEQUENTIAL && g.term_order != FPCERT_ORDER_TENSOR_CORE_BLOCK)
    kerr(fmt::format("{}term_order: SEQUENTIAL (2) or TENSOR_CORE_BLOCK (6) for split products, got {}{}", prefix, g.term_order, versions));
  if (g.block_model_measured != 0 && g.block_model_measured != 1)
    kerr(fmt::format("{}block_model_measured must be 0 or 1, got {}", prefix, g.block_model_measured));
  if (g.bitwise_ulps < 0) kerr(fmt::format("{}bitwise_ulps must be >= 0, got {}", prefix, g.bitwise_ulps));
  if (const std::string why = check_order(gemm_order_from_abi(g)); !why.empty()) kerr(prefix.substr(0, prefix.size() - 1) + ": " + why);
}

SummationOrder gemm_order_from_abi(const fpcert_gemm_order& g) {
  SummationOrder o;
  auto kind = [](std::int32_t v) {
    return v >= FPCERT_ORDER_UNKNOWN && v <= FPCERT_ORDER_SPLIT_PRODUCTS ? static_cast<OrderKind>(v - 1) : OrderKind::Unknown;
  };
  auto combine = [](std::int32_t v) {
    return v == FPCERT_COMBINE_PAIRWISE ? Combine::Pairwise : v == FPCERT_COMBINE_ATOMIC ? Combine::Atomic : Combine::Sequential;
  };
  o.kind = kind(g.kind);
  o.step = g.step == FPCERT_STEP_MUL_ADD ? StepKind::MulAdd : StepKind::Fma;
  o.block = g.block;
  o.inner = combine(g.inner);
  o.outer = combine(g.outer);
  o.splits = g.splits;
  o.split_scheme = g.split_scheme ? g.split_scheme : "";
  o.term_order = g.term_order == FPCERT_ORDER_TENSOR_CORE_BLOCK ? OrderKind::TensorCoreBlock : OrderKind::Sequential;
  o.block_model.fused_length = g.fused_length;
  if (const auto r = rounding_from_abi(g.block_rounding)) o.block_model.block_rounding = *r;
  o.block_model.measured = g.block_model_measured == 1;
  o.block_model.source = o.block_model.measured ? "measured (declared by the plugin)" : "placeholder (declared by the plugin)";
  o.bitwise_ulps = g.bitwise_ulps;
  return o;
}

KernelTraits gemm_traits_from_abi(const fpcert_gemm_traits& g, const SummationOrder& order) {
  KernelTraits t;
  t.a_input = format_from_abi(g.a_input);
  t.b_input = format_from_abi(g.b_input);
  t.input_rounding = *rounding_from_abi(g.input_rounding);
  t.a_operand = format_from_abi(g.a_operand);
  t.b_operand = format_from_abi(g.b_operand);
  t.operand_u = g.operand_u;
  t.operand_note = g.operand_note ? g.operand_note : "";
  t.exact_products = g.exact_products != 0;
  t.product_format = t.exact_products ? nullptr : format_from_abi(g.product_format);
  t.acc = format_from_abi(g.acc_format);
  t.acc_rounding = *rounding_from_abi(g.acc_rounding);
  t.promote_every = g.promote_every;
  t.promote_format = g.promote_every > 0 ? format_from_abi(g.promote_format) : nullptr;
  t.out = format_from_abi(g.out_format);
  t.order = g.order;
  t.sum_order = order;
  return t;
}

}  // namespace fpcert
