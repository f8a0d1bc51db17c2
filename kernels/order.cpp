// kernels/order.cpp — names, spec strings and checks of the structured summation order.
#include "kernels/order.hpp"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "base/error.hpp"
#include "kernels/emu/bf16_on_fp16.hpp"
#include "kernels/emu/split.hpp"
#include "kernels/gemm/cpu/ozaki2_arith.hpp"

namespace fpcert {

std::string_view to_string(OrderKind k) {
  switch (k) {
    case OrderKind::Unknown: return "unknown";
    case OrderKind::Sequential: return "sequential";
    case OrderKind::BlockedK: return "blocked";
    case OrderKind::SplitK: return "splitk";
    case OrderKind::Pairwise: return "pairwise";
    case OrderKind::TensorCoreBlock: return "tensor_core";
    case OrderKind::SplitProducts: return "split_products";
    case OrderKind::Pow2Scaled: return "pow2_scaled";
    case OrderKind::Ozaki2: return "ozaki2";
  }
  return "?";
}

std::string_view to_string(StepKind s) { return s == StepKind::Fma ? "fma" : "mul_add"; }
std::string_view to_string(Combine c) {
  switch (c) {
    case Combine::Sequential: return "sequential";
    case Combine::Pairwise: return "pairwise";
    case Combine::Exact: return "exact";
    case Combine::Atomic: return "atomic";
  }
  return "?";
}
std::string_view to_string(FinalScale f) { return f == FinalScale::Tensor ? "tensor" : "none"; }

std::optional<OrderKind> parse_order_kind(std::string_view s) {
  for (OrderKind k : {OrderKind::Unknown, OrderKind::Sequential, OrderKind::BlockedK, OrderKind::SplitK, OrderKind::Pairwise,
                      OrderKind::TensorCoreBlock, OrderKind::SplitProducts, OrderKind::Pow2Scaled, OrderKind::Ozaki2})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

std::string order_spec(const SummationOrder& o) {
  std::vector<std::string> kv;
  const std::string step = "step=" + std::string(to_string(o.step));
  switch (o.kind) {
    case OrderKind::Unknown:
      if (!o.block_model.instruction.empty()) kv.push_back("insn=" + o.block_model.instruction);
      break;
    case OrderKind::Sequential: kv.push_back(step); break;
    case OrderKind::BlockedK:
      kv.push_back(fmt::format("block={}", o.block));
      kv.push_back("inner=" + std::string(to_string(o.inner)));
      kv.push_back("outer=" + std::string(to_string(o.outer)));
      kv.push_back(step);
      break;
    case OrderKind::SplitK:
      kv.push_back(fmt::format("splits={}", o.splits));
      kv.push_back("combine=" + std::string(to_string(o.outer)));
      kv.push_back(step);
      break;
    case OrderKind::Pairwise: break;
    case OrderKind::Ozaki2: kv.push_back(fmt::format("moduli={}", o.moduli)); break;
    case OrderKind::TensorCoreBlock:
    case OrderKind::SplitProducts:
    case OrderKind::Pow2Scaled:
      if (o.kind != OrderKind::TensorCoreBlock) {
        kv.push_back("scheme=" + (o.kind == OrderKind::SplitProducts ? o.split_scheme : o.scale_scheme));
        kv.push_back("term=" + std::string(to_string(o.term_order)));
        if (o.term_order != OrderKind::TensorCoreBlock) break;
      }
      kv.push_back(fmt::format("k={}", o.block));
      if (!o.block_model.instruction.empty()) kv.push_back("insn=" + o.block_model.instruction);
      if (o.block_model.pad) kv.push_back(fmt::format("pad={}", o.block_model.pad));
      if (o.block_model.params) {  // the card's model: its own fused length and rounding
        kv.push_back("model=card");
        break;
      }
      if (o.block_model.fused_length) kv.push_back(fmt::format("fused={}", o.block_model.fused_length));
      kv.push_back("rounding=" + std::string(to_string(o.block_model.block_rounding)));
      kv.push_back(std::string("model=") + (o.block_model.measured ? "measured" : "placeholder"));
      break;
  }
  if (o.final_scale != FinalScale::None) kv.push_back("final_scale=" + std::string(to_string(o.final_scale)));
  if (o.bitwise_ulps) kv.push_back(fmt::format("ulps={}", o.bitwise_ulps));
  std::string s(to_string(o.kind));
  for (std::size_t i = 0; i < kv.size(); ++i) s += (i ? "," : ":") + kv[i];
  return s;
}

namespace {

[[noreturn]] void bad(std::string_view spec, const std::string& what) {
  throw InputError(fmt::format("order '{}': {}", spec, what));
}

int positive_int(std::string_view spec, std::string_view key, std::string_view v) {
  int x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || x < 0)
    bad(spec, fmt::format("{} must be a non-negative integer, got '{}'", key, v));
  return x;
}

Combine combine_of(std::string_view spec, std::string_view key, std::string_view v) {
  if (v == "sequential") return Combine::Sequential;
  if (v == "pairwise") return Combine::Pairwise;
  if (v == "exact" && key == "inner") return Combine::Exact;
  if (v == "atomic" && key == "combine") return Combine::Atomic;
  bad(spec, fmt::format("{} must be sequential{}, got '{}'", key,
                        key == "inner" ? ", pairwise or exact" : key == "combine" ? ", pairwise or atomic" : " or pairwise", v));
}

}  // namespace

SummationOrder parse_order_spec(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  const auto kind = parse_order_kind(head);
  if (!kind)
    bad(spec, fmt::format("unknown order kind '{}' (valid: unknown, sequential, blocked, splitk, pairwise, tensor_core, "
                          "split_products, pow2_scaled, ozaki2)", head));
  SummationOrder o;
  o.kind = *kind;
  bool card = false;  // model=card: the behaviour card of insn gives the block model (installed by certify)
  std::vector<std::string_view> allowed = {"ulps", "final_scale"};
  switch (o.kind) {
    case OrderKind::Unknown: allowed.push_back("insn"); break;
    case OrderKind::Pairwise: break;
    case OrderKind::Sequential: allowed.push_back("step"); break;
    case OrderKind::BlockedK: allowed.insert(allowed.end(), {"block", "inner", "outer", "step"}); break;
    case OrderKind::SplitK: allowed.insert(allowed.end(), {"splits", "combine", "step"}); break;
    case OrderKind::TensorCoreBlock: allowed.insert(allowed.end(), {"k", "fused", "rounding", "model", "insn", "pad"}); break;
    case OrderKind::SplitProducts:
    case OrderKind::Pow2Scaled: allowed.insert(allowed.end(), {"scheme", "term", "k", "fused", "rounding", "model", "insn", "pad"}); break;
    case OrderKind::Ozaki2: allowed.push_back("moduli"); break;
  }
  if (colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) bad(spec, fmt::format("expected key=value, got '{}'", item));
      const std::string_view key = item.substr(0, eq), v = item.substr(eq + 1);
      bool known = false;
      for (auto a : allowed) known = known || a == key;
      if (!known) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        bad(spec, fmt::format("unknown key '{}' for {} (valid: {})", key, to_string(o.kind), list));
      }
      if (key == "ulps") o.bitwise_ulps = positive_int(spec, key, v);
      else if (key == "step") {
        if (v == "fma") o.step = StepKind::Fma;
        else if (v == "mul_add") o.step = StepKind::MulAdd;
        else bad(spec, fmt::format("step must be fma or mul_add, got '{}'", v));
      } else if (key == "block" || key == "k") o.block = positive_int(spec, key, v);
      else if (key == "inner") o.inner = combine_of(spec, key, v);
      else if (key == "outer" || key == "combine") o.outer = combine_of(spec, key, v);
      else if (key == "splits") o.splits = positive_int(spec, key, v);
      else if (key == "scheme") (o.kind == OrderKind::SplitProducts ? o.split_scheme : o.scale_scheme) = std::string(v);
      else if (key == "final_scale") {
        if (v == "none") o.final_scale = FinalScale::None;
        else if (v == "tensor") o.final_scale = FinalScale::Tensor;
        else bad(spec, fmt::format("final_scale must be none or tensor, got '{}'", v));
      }
      else if (key == "term") {
        if (v == "sequential") o.term_order = OrderKind::Sequential;
        else if (v == "tensor_core") o.term_order = OrderKind::TensorCoreBlock;
        else bad(spec, fmt::format("term must be sequential or tensor_core, got '{}'", v));
      } else if (key == "fused") o.block_model.fused_length = positive_int(spec, key, v);
      else if (key == "rounding") {
        const auto r = parse_rounding(v);
        if (!r) bad(spec, fmt::format("rounding: unknown mode '{}' (valid: {})", v, rounding_names()));
        o.block_model.block_rounding = *r;
      } else if (key == "model") {
        if (v == "placeholder") o.block_model.measured = false;
        else if (v == "measured") o.block_model.measured = true;
        else if (v == "card") card = true;
        else bad(spec, fmt::format("model must be placeholder, measured or card, got '{}'", v));
      } else if (key == "insn") o.block_model.instruction = std::string(v);
      else if (key == "pad") o.block_model.pad = positive_int(spec, key, v);
      else if (key == "moduli") o.moduli = positive_int(spec, key, v);
    }
  }
  if (card && o.block_model.instruction.empty()) bad(spec, "model=card needs insn=ID (the instruction whose behaviour card applies)");
  if (card) o.block_model.source = "the behaviour card of " + o.block_model.instruction + " (not installed yet)";
  if (const std::string why = check_order(o); !why.empty()) bad(spec, why);
  return o;
}

std::string check_order(const SummationOrder& o) {
  if (o.bitwise_ulps < 0) return "ulps must be >= 0";
  if (o.inner == Combine::Exact && o.kind != OrderKind::BlockedK) return "an exact inner sum belongs to a blocked order";
  if (o.outer == Combine::Exact) return "partials are joined sequentially or pairwise, never exactly";
  if ((o.inner == Combine::Atomic || o.outer == Combine::Atomic) && !(o.kind == OrderKind::SplitK && o.outer == Combine::Atomic))
    return "an atomic combine belongs to split-K's partials (splitk:combine=atomic)";
  switch (o.kind) {
    case OrderKind::Unknown:
    case OrderKind::Sequential:
    case OrderKind::Pairwise: return {};
    case OrderKind::BlockedK:
      if (o.block < 1) return "blocked needs block >= 1";
      if (o.inner == Combine::Exact && o.step != StepKind::Fma) return "an exact inner sum has no step (leave step=fma)";
      return {};
    case OrderKind::SplitK: return o.splits >= 2 ? "" : "splitk needs splits >= 2 (one chunk is sequential)";
    case OrderKind::TensorCoreBlock:
      if (o.block < 1) return "tensor_core needs the instruction's k >= 1";
      if (o.block_model.fused_length < 0 || (o.block_model.fused_length && o.block % o.block_model.fused_length))
        return fmt::format("tensor_core: fused length {} must divide k = {}", o.block_model.fused_length, o.block);
      if (o.block_model.pad % o.block) return fmt::format("tensor_core: pad {} must be a multiple of k = {}", o.block_model.pad, o.block);
      if (o.block_model.params) {
        if (const std::string why = check(*o.block_model.params); !why.empty()) return "tensor_core: the card's model: " + why;
        if (o.block % o.block_model.params->fused_length && o.block_model.params->fused_length % o.block)
          return fmt::format("tensor_core: the card's fused length {} and k = {} do not nest", o.block_model.params->fused_length, o.block);
      }
      return {};
    case OrderKind::SplitProducts:
      if (!find_split_scheme(o.split_scheme)) {
        std::string list;
        for (const auto& s : split_schemes()) list += (list.empty() ? "" : ", ") + s.name;
        return fmt::format("unknown split scheme '{}' (valid: {})", o.split_scheme, list);
      }
      if (o.term_order == OrderKind::TensorCoreBlock && o.block < 1) return "split_products on tensor cores needs k >= 1";
      return {};
    case OrderKind::Pow2Scaled:
      if (!find_bf16_on_f16_policy(o.scale_scheme)) {
        std::string list;
        for (const auto& p : bf16_on_f16_policies()) list += (list.empty() ? "" : ", ") + p.tag;
        return fmt::format("unknown scaling scheme '{}' (valid: {})", o.scale_scheme, list);
      }
      if (o.term_order == OrderKind::TensorCoreBlock && o.block < 1) return "pow2_scaled on tensor cores needs k >= 1";
      if (o.final_scale != FinalScale::None) return "pow2_scaled has no final tensor scale";
      return {};
    case OrderKind::Ozaki2:
      if (o.moduli < ozaki2::kMinModuli || o.moduli > ozaki2::kMaxModuli)
        return fmt::format("ozaki2 needs moduli = {}..{}, got {}", ozaki2::kMinModuli, ozaki2::kMaxModuli, o.moduli);
      if (o.final_scale != FinalScale::None) return "ozaki2 has no final tensor scale";
      return {};
  }
  return {};
}

}  // namespace fpcert
