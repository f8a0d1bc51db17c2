// cli/cmd/cmd_kernels.cpp — `fpcert kernels`: every registered kernel, GEMM and conversion, with its traits.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/plugins.hpp"
#include "kernels/attention/attention_backward_kernel.hpp"
#include "kernels/attention/attention_kernel.hpp"
#include "kernels/kernel.hpp"
#include "kernels/elementwise/eltwise_kernel.hpp"
#include "kernels/reduce/reduce_kernel.hpp"
#include "kernels/norm/norm_kernel.hpp"
#include "kernels/norm/norm_backward_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "kernels/softmax/softmax_backward_kernel.hpp"

namespace fpcert::cli {
namespace {

int run_kernels(bool mutants, bool json, const std::vector<std::string>& plugins) {
  load_plugins(plugins);
  nlohmann::json arr = nlohmann::json::array();
  if (!json) fmt::print("{:<34} {:<7} {}\n", "kernel", "backend", "traits / operation order");
  for (const auto& name : kernel_names(mutants)) {
    const auto k = make_gemm_kernel(name);
    const KernelTraits& t = k->traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"description", k->description()},
                     {"a_input", t.a_input->tag},
                     {"b_input", t.b_input->tag},
                     {"a_operand", t.a_operand->tag},
                     {"b_operand", t.b_operand->tag},
                     {"input_rounding", to_string(t.input_rounding)},
                     {"exact_products", t.exact_products},
                     {"accumulator", t.acc->tag},
                     {"acc_rounding", to_string(t.acc_rounding)},
                     {"promote_every", t.promote_every},
                     {"out", t.out->tag},
                     {"order", t.order},
                     {"determinism", to_string(t.determinism)},
                     {"determinism_note", t.determinism_note},
                     {"operation", "gemm"},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {}\n", name, to_string(k->backend()), k->description());
    fmt::print("{:<34} {:<7} {}\n", "", "", describe_traits(t));
    if (!t.order.empty()) fmt::print("{:<34} {:<7} order: {}\n", "", "", t.order);
    fmt::print("{:<34} {:<7} determinism: {}{}\n", "", "", to_string(t.determinism),
               t.determinism_note.empty() ? "" : " (" + t.determinism_note + ")");
  }
  // Conversion kernels, from the same registry: the device table's entries (CUDA builds), fpcert's
  // model of each table conversion, plugin conversion kernels (fpcert convert --kernel NAME --exhaustive,
  // fpcert certify --suite conversions --kernel NAME).
  const auto conv = kernel_names(mutants, Operation::Conversion);
  if (!json && !conv.empty()) fmt::print("\n{:<34} {:<7} {}\n", "conversion kernel", "backend", "conversion it claims");
  for (const auto& name : conv) {
    const auto c = make_conversion_kernel(name);
    const ConversionTraits& t = c->conversion();
    const char* mem = c->memory() == MemorySpace::Device ? "device" : "host";
    const std::string& origin = find_kernel_info(name)->origin;
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(c->backend())},
                     {"mutant", c->is_mutant()},
                     {"operation", "conversion"},
                     {"description", c->description()},
                     {"from", t.src->tag},
                     {"to", t.dst->tag},
                     {"rounding", to_string(t.rounder.rounding)},
                     {"saturation", to_string(t.rounder.saturation)},
                     {"nan_payload", to_string(t.rounder.nan)},
                     {"nan_convention", describe_nan_convention(*t.dst, t.rounder.nan)},
                     {"nan_counted_apart", t.nan_counted_apart},
                     {"memory", mem},
                     {"origin", origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {} -> {}, rounding {}, saturation {}, NaN {}, {} memory\n", name, to_string(c->backend()), t.src->tag,
               t.dst->tag, to_string(t.rounder.rounding), to_string(t.rounder.saturation), to_string(t.rounder.nan), mem);
    fmt::print("{:<34} {:<7} {}{}\n", "", "", c->description().empty() ? "(no description)" : c->description(),
               origin.empty() ? "" : " [" + origin + "]");
    fmt::print("{:<34} {:<7} NaN convention {}: {}{}\n", "", "", to_string(t.rounder.nan), describe_nan_convention(*t.dst, t.rounder.nan),
               t.nan_counted_apart ? " (ABI minor 0/1 preserve: other NaN payloads counted apart unless --strict-nan)" : "");
  }
  // Reduction kernels (docs/reductions.md): fpcert certify --kernel NAME grades them on the reduce suite.
  const auto red = kernel_names(mutants, Operation::Reduction);
  if (!json && !red.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "reduction kernel", "backend", "operation", "traits");
  for (const auto& name : red) {
    const auto k = make_reduce_kernel(name);
    const ReduceTraits& t = k->reduce_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "reduction"},
                     {"description", k->description()},
                     {"kind", to_string(t.kind)},
                     {"x_input", t.x_input->tag},
                     {"y_input", t.y_input->tag},
                     {"accumulator", t.arith.acc->tag},
                     {"acc_rounding", to_string(t.arith.rounder.rounding)},
                     {"out", t.out->tag},
                     {"order", describe(t.order)},
                     {"traits", describe_reduce_traits(t)},
                     {"determinism", to_string(t.determinism)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "reduction", describe_reduce_traits(t));
    if (!k->description().empty()) fmt::print("{:<34} {:<7} {:<9} {}\n", "", "", "", k->description());
  }
  // Elementwise kernels (docs/elementwise.md): fpcert certify --kernel NAME --suite elementwise grades them.
  const auto elt = kernel_names(mutants, Operation::Elementwise);
  if (!json && !elt.empty()) fmt::print("\n{:<34} {:<7} {:<11} {}\n", "elementwise kernel", "backend", "operation", "traits");
  for (const auto& name : elt) {
    const auto k = make_eltwise_kernel(name);
    const EltwiseTraits& t = k->eltwise_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "elementwise"},
                     {"description", k->description()},
                     {"function", math::to_string(t.fn)},
                     {"in", t.in->tag},
                     {"out", t.out->tag},
                     {"claim", describe_claim(t.claim)},
                     {"traits", describe_eltwise_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<11} {}\n", name, to_string(k->backend()), "elementwise", describe_eltwise_traits(t));
  }
  // Softmax kernels (docs/softmax.md): fpcert certify --kernel NAME grades them on the softmax suite.
  const auto smx = kernel_names(mutants, Operation::Softmax);
  if (!json && !smx.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "softmax kernel", "backend", "operation", "traits");
  for (const auto& name : smx) {
    const auto k = make_softmax_kernel(name);
    const SoftmaxTraits& t = k->softmax_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "softmax"},
                     {"description", k->description()},
                     {"function", to_string(t.arith.fn)},
                     {"shift", to_string(t.arith.shift)},
                     {"in", t.x_input->tag},
                     {"compute", t.arith.compute->tag},
                     {"out", t.arith.out->tag},
                     {"masked_rows", to_string(t.masked_rows)},
                     {"traits", describe_softmax_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "softmax", describe_softmax_traits(t));
  }
  // LayerNorm / RMSNorm kernels (docs/normalization.md): fpcert certify --kernel NAME grades them on the norm suite.
  const auto nrm = kernel_names(mutants, Operation::Norm);
  if (!json && !nrm.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "norm kernel", "backend", "operation", "traits");
  for (const auto& name : nrm) {
    const auto k = make_norm_kernel(name);
    const NormTraits& t = k->norm_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "norm"},
                     {"description", k->description()},
                     {"kind", to_string(t.arith.kind)},
                     {"variance", to_string(t.arith.variance)},
                     {"in", t.x_input->tag},
                     {"compute", t.arith.compute->tag},
                     {"out", t.arith.out->tag},
                     {"traits", describe_norm_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "norm", describe_norm_traits(t));
  }
  // Attention kernels (docs/attention.md): fpcert certify --kernel NAME grades them on the attention suite.
  const auto att = kernel_names(mutants, Operation::Attention);
  if (!json && !att.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "attention kernel", "backend", "operation", "traits");
  for (const auto& name : att) {
    const auto k = make_attention_kernel(name);
    const AttentionTraits& t = k->attention_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "attention"},
                     {"description", k->description()},
                     {"in", t.input->tag},
                     {"exp_form", to_string(t.exp_form)},
                     {"key_block", t.key_block},
                     {"p_format", t.pv.a_input->tag},
                     {"out", t.out->tag},
                     {"traits", describe_attention_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "attention", describe_attention_traits(t));
  }
  // Softmax / log-softmax backward kernels (docs/backward.md; issue 45): graded on the softmax_backward suite.
  const auto sbw = kernel_names(mutants, Operation::SoftmaxBackward);
  if (!json && !sbw.empty()) fmt::print("\n{:<34} {:<7} {:<16} {}\n", "softmax backward kernel", "backend", "operation", "traits");
  for (const auto& name : sbw) {
    const auto k = make_softmax_bwd_kernel(name);
    const SoftmaxBwdTraits& t = k->softmax_bwd_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "softmax_backward"},
                     {"description", k->description()},
                     {"function", to_string(t.fn)},
                     {"y", t.y_input->tag},
                     {"dy", t.dy_input->tag},
                     {"compute", t.compute->tag},
                     {"out", t.out->tag},
                     {"traits", describe_softmax_bwd_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<16} {}\n", name, to_string(k->backend()), "softmax_backward", describe_softmax_bwd_traits(t));
  }
  // LayerNorm / RMSNorm backward kernels (docs/backward.md): fpcert certify --kernel NAME grades them on norm_backward.
  const auto nbw = kernel_names(mutants, Operation::NormBackward);
  if (!json && !nbw.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "norm backward kernel", "backend", "operation", "traits");
  for (const auto& name : nbw) {
    const auto k = make_norm_bwd_kernel(name);
    const NormBwdTraits& t = k->norm_bwd_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "norm_backward"},
                     {"description", k->description()},
                     {"kind", to_string(t.kind)},
                     {"in", t.input->tag},
                     {"compute", t.compute->tag},
                     {"dx_out", t.dx_out->tag},
                     {"param_out", t.param_out->tag},
                     {"param_determinism", to_string(t.param_determinism)},
                     {"reads_saved", t.reads_saved},
                     {"traits", describe_norm_bwd_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "norm_bwd", describe_norm_bwd_traits(t));
  }
  // Attention backward kernels (docs/backward.md, issue 45): fpcert certify --kernel NAME grades them on attention_backward.
  const auto abwd = kernel_names(mutants, Operation::AttentionBackward);
  if (!json && !abwd.empty()) fmt::print("\n{:<34} {:<7} {:<9} {}\n", "attention backward kernel", "backend", "operation", "traits");
  for (const auto& name : abwd) {
    const auto k = make_attention_bwd_kernel(name);
    const AttentionBwdTraits& t = k->attention_bwd_traits();
    if (json) {
      arr.push_back({{"name", name},
                     {"backend", to_string(k->backend())},
                     {"mutant", k->is_mutant()},
                     {"operation", "attention_backward"},
                     {"description", k->description()},
                     {"in", t.input->tag},
                     {"exp_form", to_string(t.exp_form)},
                     {"reads_saved", t.reads_saved},
                     {"dq_determinism", to_string(t.dq_determinism)},
                     {"out", fmt::format("{}/{}/{}", t.dq_out->tag, t.dk_out->tag, t.dv_out->tag)},
                     {"traits", describe_attention_bwd_traits(t)},
                     {"memory", k->memory() == MemorySpace::Device ? "device" : "host"},
                     {"origin", find_kernel_info(name)->origin}});
      continue;
    }
    fmt::print("{:<34} {:<7} {:<9} {}\n", name, to_string(k->backend()), "attn_bwd", describe_attention_bwd_traits(t));
  }
  if (json) fmt::print("{}\n", arr.dump(2));
  return 0;
}

}  // namespace

void add_kernels(CLI::App& root, Registry& reg) {
  auto* app = root.add_subcommand("kernels", "Built-in and plugin kernels, GEMM and conversion, with their traits");
  auto mutants = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  app->add_flag("--mutants", *mutants, "Also list the self-test mutants");
  app->add_flag("--json", *json, "Print as JSON");
  auto plugins = std::make_shared<std::vector<std::string>>();
  add_plugin_option(app, *plugins);
  reg.push_back({app, [mutants, json, plugins] { return run_kernels(*mutants, *json, *plugins); }});
}

}  // namespace fpcert::cli
