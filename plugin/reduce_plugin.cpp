// plugin/reduce_plugin.cpp — reduction kernels of plugins (plugin/reduce_plugin.hpp).
#include "plugin/reduce_plugin.hpp"

#include <fmt/format.h>

#include <bit>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "plugin/plugin_call.hpp"

namespace fpcert {

using namespace plugin_detail;

namespace {

std::optional<ReduceKind> kind_from_abi(std::int32_t v) {
  switch (v) {
    case FPCERT_REDUCE_SUM: return ReduceKind::Sum;
    case FPCERT_REDUCE_DOT: return ReduceKind::Dot;
    case FPCERT_REDUCE_NRM2: return ReduceKind::Nrm2;
    default: return std::nullopt;
  }
}

}  // namespace

void validate_format_abi(const char* field, std::int32_t v, bool required, const std::function<void(const std::string&)>& kerr,
                         const std::string& versions) {
  if (!required) {
    if (v != FPCERT_FORMAT_NONE) kerr(fmt::format("{} must be FPCERT_FORMAT_NONE for this kind (got {})", field, v));
    return;
  }
  const Format* f = format_from_abi(v);
  if (v == FPCERT_FORMAT_NONE) kerr(fmt::format("{}: required, got FPCERT_FORMAT_NONE", field));
  else if (!f) kerr(fmt::format("{}: unknown format value {} (valid: {}){}", field, v, abi_format_list(), versions));
  else if (*f == ue8m0) kerr(fmt::format("{}: ue8m0 is a scale format (no sign, no zero); it is valid only for conversions", field));
}

void validate_reduce_order_abi(const std::string& prefix, std::int32_t order, std::int32_t block, std::int32_t lanes,
                               const std::function<void(const std::string&)>& kerr, const std::string& versions) {
  switch (order) {
    case FPCERT_REDUCE_ORDER_UNKNOWN:
    case FPCERT_REDUCE_ORDER_SEQUENTIAL:
    case FPCERT_REDUCE_ORDER_PAIRWISE:
      if (block != 0 || lanes != 0)
        kerr(fmt::format("{0}block and {0}lanes must be 0 for this order (BLOCKED takes block, WARP_TREE lanes)", prefix));
      break;
    case FPCERT_REDUCE_ORDER_BLOCKED:
      if (block < 1) kerr(fmt::format("{}block must be >= 1 for BLOCKED, got {}", prefix, block));
      if (lanes != 0) kerr(fmt::format("{}lanes must be 0 for BLOCKED", prefix));
      break;
    case FPCERT_REDUCE_ORDER_WARP_TREE:
      if (lanes < 1 || lanes > 1024 || !std::has_single_bit(static_cast<unsigned>(lanes)))
        kerr(fmt::format("{}lanes must be a power of two in 1 .. 1024 for WARP_TREE, got {}", prefix, lanes));
      if (block != 0) kerr(fmt::format("{}block must be 0 for WARP_TREE", prefix));
      break;
    default:
      kerr(fmt::format("{}order: unknown value {} (valid: 1 unknown, 2 sequential, 3 pairwise, 4 blocked, 5 warp tree){}", prefix, order,
                       versions));
  }
}

ReduceOrder reduce_order_from_abi(std::int32_t order, std::int32_t block, std::int32_t lanes, std::int32_t chain_from_first) {
  const ChainStart start = chain_from_first ? ChainStart::First : ChainStart::Zero;
  switch (order) {
    case FPCERT_REDUCE_ORDER_SEQUENTIAL: return ReduceOrder::sequential(start);
    case FPCERT_REDUCE_ORDER_PAIRWISE: return ReduceOrder::pairwise();
    case FPCERT_REDUCE_ORDER_BLOCKED: return ReduceOrder::blocked(block, start);
    case FPCERT_REDUCE_ORDER_WARP_TREE: return ReduceOrder::warp_tree(lanes, start);
    default: return ReduceOrder::unknown();
  }
}

void validate_reduce_abi(const fpcert_kernel& k, const std::function<void(const std::string&)>& kerr_out, const std::string& versions) {
  const fpcert_reduce_traits& r = k.reduce;
  bool bad = false;
  const auto kerr = [&](const std::string& s) {
    bad = true;
    kerr_out(s);
  };
  if (!k.reduce_run) kerr("reduce_run is NULL (required)");
  const auto kind = kind_from_abi(r.kind);
  if (!kind) kerr(fmt::format("reduce.kind: unknown value {} (valid: 1 sum, 2 dot, 3 nrm2){}", r.kind, versions));
  auto format = [&](const char* field, std::int32_t v, bool required) { validate_format_abi(field, v, required, kerr, versions); };
  auto rounding = [&](const char* field, std::int32_t v) {
    const auto m = rounding_from_abi(v);
    if (!m) kerr(fmt::format("{}: unknown rounding value {} (valid: 1 nearest-even .. 5 down){}", field, v, versions));
    else if (*m == Rounding::Stochastic) kerr(fmt::format("{}: stochastic rounding is not valid here (fpcert would have to supply the random bits)", field));
  };
  format("reduce.x_input", r.x_input, true);
  format("reduce.y_input", r.y_input, kind == ReduceKind::Dot);
  format("reduce.acc_format", r.acc_format, true);
  format("reduce.out_format", r.out_format, true);
  rounding("reduce.input_rounding", r.input_rounding);
  rounding("reduce.acc_rounding", r.acc_rounding);
  if (r.exact_products != 0 && r.exact_products != 1) kerr(fmt::format("reduce.exact_products must be 0 or 1, got {}", r.exact_products));
  else if (kind == ReduceKind::Sum && r.exact_products != 1) kerr("reduce.exact_products must be 1 for a sum (it has no products)");
  if (r.chain_from_first != 0 && r.chain_from_first != 1) kerr(fmt::format("reduce.chain_from_first must be 0 or 1, got {}", r.chain_from_first));
  validate_reduce_order_abi("reduce.", r.order, r.block, r.lanes, kerr, versions);
  if (kind == ReduceKind::Nrm2) {
    if (r.nrm2_scaling != FPCERT_NRM2_UNSCALED && r.nrm2_scaling != FPCERT_NRM2_LAPACK)
      kerr(fmt::format("reduce.nrm2_scaling: unknown value {} (valid: 1 unscaled, 2 lapack){}", r.nrm2_scaling, versions));
    if (r.nrm2_specials != FPCERT_NRM2_INF_WINS && r.nrm2_specials != FPCERT_NRM2_NAN_WINS)
      kerr(fmt::format("reduce.nrm2_specials: unknown value {} (valid: 1 inf wins, 2 nan wins){}", r.nrm2_specials, versions));
  } else if (kind && (r.nrm2_scaling != 0 || r.nrm2_specials != 0)) {
    kerr("reduce.nrm2_scaling and reduce.nrm2_specials must be 0 unless kind is NRM2");
  }
  if (r.determinism != FPCERT_DETERMINISTIC && r.determinism != FPCERT_RUN_TO_RUN)
    kerr(fmt::format("reduce.determinism: required, 1 deterministic or 2 run_to_run, got {}{}", r.determinism, versions));
  if (r.reserved != 0) kerr(fmt::format("reduce.reserved must be 0, got {}", r.reserved));
  // Each field valid: do they hold together (a run-to-run kernel with a fixed order, an order whose emulation the
  // accumulator cannot carry ...)? The same rule as for built-in kernels (kernels/reduce/reduce_kernel.hpp).
  if (!bad)
    if (const std::string why = reduce_traits_problem(reduce_traits_from_abi(k)); !why.empty()) kerr("reduce: the declarations contradict each other: " + why);
}

ReduceTraits reduce_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_reduce_traits& r = k.reduce;
  ReduceTraits t;
  t.kind = *kind_from_abi(r.kind);
  t.x_input = format_from_abi(r.x_input);
  t.y_input = t.kind == ReduceKind::Dot ? format_from_abi(r.y_input) : t.x_input;
  t.input_rounding = *rounding_from_abi(r.input_rounding);
  t.arith.acc = format_from_abi(r.acc_format);
  t.arith.rounder = Rounder{*rounding_from_abi(r.acc_rounding), default_saturation(*t.arith.acc), NanPayload::Preserve};
  t.arith.products = r.exact_products == 1 ? ProductRounding::Exact : ProductRounding::Rounded;
  t.order = reduce_order_from_abi(r.order, r.block, r.lanes, r.chain_from_first);
  t.out = format_from_abi(r.out_format);
  t.scaling = r.nrm2_scaling == FPCERT_NRM2_LAPACK ? Nrm2Scaling::Lapack : Nrm2Scaling::None;
  t.nrm2_specials = r.nrm2_specials == FPCERT_NRM2_NAN_WINS ? Nrm2Specials::NaNWins : Nrm2Specials::InfWins;
  t.determinism = r.determinism == FPCERT_RUN_TO_RUN ? Determinism::RunToRun : Determinism::Deterministic;
  t.determinism_note = "declared by the plugin (fpcert_reduce_traits.determinism)";
  t.note = "declared by the plugin";
  return t;
}

namespace {

class PluginReduceKernel final : public ReduceKernel {
 public:
  PluginReduceKernel(const fpcert_kernel* d, std::string origin, std::shared_ptr<void> keepalive)
      : d_(d), origin_(std::move(origin)), name_(d->name), traits_(reduce_traits_from_abi(*d)), keepalive_(std::move(keepalive)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return (d_->description ? std::string(d_->description) : std::string("plugin reduction")) + " (" + origin_ + ")";
  }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return d_->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host; }
  const ReduceTraits& reduce_traits() const override { return traits_; }
  Support can_implement(std::int64_t count, std::int64_t length, ReduceAxis axis) const override {
    if (!d_->reduce_can_implement) return Support::yes();
    Message msg;
    const std::int32_t st = call_plugin(name_, "reduce_can_implement", d_->reduce_can_implement, d_->user_data, count, length, abi_axis(axis),
                                        msg.buf.data(), msg.buf.size());
    return support_from_status(name_, "reduce_can_implement", st, msg);
  }
  void run(const ReduceOperands& o) override {
    fpcert_reduce_args a{};
    a.struct_size = sizeof(a);
    a.memory = d_->memory;
    a.count = o.count;
    a.length = o.length;
    a.axis = abi_axis(o.axis);
    a.x = o.x;
    a.ldx = o.ldx;
    a.y = traits_.kind == ReduceKind::Dot ? o.y : nullptr;
    a.ldy = traits_.kind == ReduceKind::Dot ? o.ldy : 0;
    a.out = o.out;
    Message msg;
    void* stream = memory() == MemorySpace::Device ? o.stream : nullptr;
    const std::int32_t st = call_plugin(name_, "reduce_run", d_->reduce_run, d_->user_data, static_cast<const fpcert_reduce_args*>(&a), stream,
                                        msg.buf.data(), msg.buf.size());
    check_run_status(name_, "reduce_run", st, msg);
  }

 private:
  static fpcert_reduce_axis abi_axis(ReduceAxis a) { return a == ReduceAxis::Rows ? FPCERT_REDUCE_ROWS : FPCERT_REDUCE_COLS; }
  const fpcert_kernel* d_;
  std::string origin_, name_;
  ReduceTraits traits_;
  std::shared_ptr<void> keepalive_;
};

}  // namespace

std::unique_ptr<ReduceKernel> make_plugin_reduce_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive) {
  return std::make_unique<PluginReduceKernel>(desc, std::move(origin), std::move(keepalive));
}

}  // namespace fpcert
