// kernels/kernel.cpp — kernel registry and trait descriptions.
#include "kernels/kernel.hpp"

#include <algorithm>
#include <cstdio>

#include "kernels/register.hpp"

namespace fpcert {

std::string_view to_string(Operation o) {
  switch (o) {
    case Operation::Gemm: return "gemm";
    case Operation::Conversion: return "conversion";
    case Operation::Reduction: return "reduction";
    case Operation::Elementwise: return "elementwise";
    case Operation::Softmax: return "softmax";
    case Operation::Norm: return "norm";
    case Operation::Attention: return "attention";
    case Operation::SoftmaxBackward: return "softmax_backward";
    case Operation::NormBackward: return "norm_backward";
    case Operation::AttentionBackward: return "attention_backward";
  }
  return "?";
}

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Cublas: return "cublas";
    case Backend::Plugin: return "plugin";
  }
  return "?";
}

namespace {
std::vector<KernelInfo>& raw_registry() {
  static std::vector<KernelInfo> r;
  return r;
}
}  // namespace

std::vector<KernelInfo>& kernel_registry() {
  static const bool once = [] {
    register_builtin_kernels();
    return true;
  }();
  (void)once;
  return raw_registry();
}

void register_kernel(KernelInfo info) {
  for (auto& k : raw_registry())
    if (k.name == info.name) {
      k = std::move(info);
      return;
    }
  raw_registry().push_back(std::move(info));
}

void register_kernel(std::string name, Backend backend, bool mutant, KernelFactory make, Operation op) {
  register_kernel(KernelInfo{std::move(name), backend, mutant, std::move(make), {}, op});
}

const KernelInfo* find_kernel_info(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return &k;
  return nullptr;
}

std::unique_ptr<Kernel> make_kernel(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return k.make();
  return nullptr;
}

std::unique_ptr<GemmKernel> make_gemm_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Gemm) return nullptr;
  return std::unique_ptr<GemmKernel>(static_cast<GemmKernel*>(k->make().release()));
}

std::unique_ptr<ConversionKernel> make_conversion_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Conversion) return nullptr;
  return std::unique_ptr<ConversionKernel>(static_cast<ConversionKernel*>(k->make().release()));
}

std::vector<std::string> kernel_names(bool include_mutants, Operation op) {
  std::vector<std::string> r;
  for (const auto& k : kernel_registry())
    if ((include_mutants || !k.mutant) && k.operation == op) r.push_back(k.name);
  std::sort(r.begin(), r.end());
  return r;
}

GemmOperands batch_slice(const GemmOperands& ops, std::int64_t b, const KernelTraits& t) {
  if (b < 0 || b >= ops.batch) throw std::logic_error("batch_slice: batch index out of range");
  const auto at = [b](const void* p, std::int64_t stride, const Format& f) -> std::uint8_t* {
    return p ? const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(p)) + b * stride * container_bytes(f) : nullptr;
  };
  GemmOperands o = ops;
  o.batch = 1;
  o.a = at(ops.a, ops.stride_a, *t.a_input);
  o.b = at(ops.b, ops.stride_b, *t.b_input);
  o.c = at(ops.c, ops.stride_c, *t.out);
  o.c_in = at(ops.c_in, ops.stride_c, *t.out);
  return o;
}

std::string describe_traits(const KernelTraits& t) {
  std::string s = "in " + std::string(t.a_input->tag) + "/" + std::string(t.b_input->tag);
  if (t.block.active())
    s += ", quantized to " + std::string(t.block.format->tag) + " (" + std::string(to_string(t.block.rule)) + " scales, blocks of " +
         std::to_string(t.block.block > 0 ? t.block.block : t.block.format->block) + " along K)";
  if (t.a_operand != t.a_input || t.b_operand != t.b_input)
    s += ", operands " + std::string(t.a_operand->tag) + "/" + std::string(t.b_operand->tag) + " (" +
         std::string(to_string(t.input_rounding)) + ")";
  if (t.operand_u > 0) s += ", split operands (u_eff " + t.operand_note + ")";
  s += t.exact_products ? ", exact products" : ", products rounded to " + std::string(t.product_format->tag);
  s += ", acc " + std::string(t.acc->tag) + " (" + std::string(to_string(t.acc_rounding)) + ")";
  if (t.promote_every > 0)
    s += ", promoted to " + std::string(t.promote_format->tag) + " every " + std::to_string(t.promote_every);
  s += ", out " + std::string(t.out->tag);
  s += "; order " + order_spec(t.sum_order);
  const InputDomain& d = t.domain;
  if (d.span_scope != SpanScope::None) {
    const char* group = d.span_scope == SpanScope::Tensor ? "each operand" : d.span_scope == SpanScope::Line ? "each row of A and column of B" : nullptr;
    s += "; inputs: " + (group ? std::string(group) : "each K-block of " + std::to_string(d.kblock) + " of a row of A or column of B") +
         " spanning <= " + std::to_string(d.max_span) + " binades" + (d.span_scheme_graded ? " (wider: its scheme's own bound)" : "");
  }
  if (d.operand_range) s += std::string(d.span_scope != SpanScope::None ? ", " : "; inputs: ") + "within " + std::string(t.a_operand->tag) + "'s range";
  if (d.finite_only) s += std::string(d.span_scope != SpanScope::None || d.operand_range ? ", " : "; inputs: ") + "finite only";
  if (t.determinism == Determinism::RunToRun) s += "; nondeterministic run to run";
  if (t.batch_invariant) s += "; batch-invariant";
  if (t.layouts != kLayoutsRowMajor) s += "; layouts " + describe_layouts(t.layouts);
  if (t.shape_multiple > 1) s += "; M, N, K multiples of " + std::to_string(t.shape_multiple);
  if (t.alpha_beta) s += "; D = alpha AB + beta C";
  if (t.batched) s += "; strided batches";
  if (t.epilogue.active()) s += "; epilogue " + describe_epilogue(t.epilogue);
  return s;
}

std::string_view to_string(BiasKind b) {
  switch (b) {
    case BiasKind::None: return "none";
    case BiasKind::PerRow: return "row";
    case BiasKind::PerColumn: return "column";
  }
  return "?";
}

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::GeluErf: return "gelu_erf";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::Silu: return "silu";
  }
  return "?";
}

std::optional<BiasKind> parse_bias_kind(std::string_view s) {
  for (BiasKind b : {BiasKind::None, BiasKind::PerRow, BiasKind::PerColumn})
    if (s == to_string(b)) return b;
  return std::nullopt;
}

std::optional<Activation> parse_activation(std::string_view s) {
  for (Activation a : {Activation::None, Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu})
    if (s == to_string(a)) return a;
  return std::nullopt;
}

std::string describe_epilogue(const EpilogueTraits& e) {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (e.bias) {
    std::string kinds;
    for (BiasKind b : {BiasKind::PerRow, BiasKind::PerColumn})
      if (e.bias & bit(b)) kinds += (kinds.empty() ? "" : " or ") + std::string(to_string(b));
    add("bias per " + kinds + (e.bias_format ? " (" + std::string(e.bias_format->tag) + ")" : ""));
  }
  for (Activation a : {Activation::Relu, Activation::GeluErf, Activation::GeluTanh, Activation::Silu})
    if (e.activations & bit(a)) add(std::string(to_string(a)));
  if (e.activations & (bit(Activation::GeluErf) | bit(Activation::GeluTanh) | bit(Activation::Silu))) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", e.func_rel_err);
    add(std::string("elementary functions within ") + buf + " relative");
  }
  if (e.round_before_act) add("Z rounded to the output before the activation");
  if (e.round_before_bias) add("alpha AB + beta C rounded to the output before the bias");
  if (e.fp8_scaling) add(e.fp8_scale_d ? "FP8 scale factors" : "FP8 scale factors (scale_a, scale_b; no scale_d)");
  if (e.amax) add("amax");
  return s.empty() ? "none" : s;
}

std::string to_string(const GemmLayout& l) {
  std::string s;
  s += l.a == Layout::RowMajor ? 'n' : 't';
  s += l.b == Layout::RowMajor ? 'n' : 't';
  return s + (l.c == Layout::RowMajor ? "/c_row" : "/c_col");
}

std::string describe_layouts(std::uint8_t mask) {
  if (mask == kLayoutsAll) return "every layout (nn, nt, tn, tt; C row- or column-major)";
  std::string s;
  for (int bit = 0; bit < 8; ++bit)
    if (mask & (1u << bit)) {
      const auto lay = [&](int b) { return (bit >> b) & 1 ? Layout::ColMajor : Layout::RowMajor; };
      s += (s.empty() ? "" : ", ") + to_string(GemmLayout{lay(0), lay(1), lay(2)});
    }
  return s.empty() ? "none" : s;
}

Support GemmKernel::can_implement_shape(std::int64_t m, std::int64_t n, std::int64_t k) const {
  const std::int64_t q = traits().shape_multiple;
  if (q > 1 && (m % q != 0 || n % q != 0 || k % q != 0))
    return Support::no("the kernel takes M, N and K multiples of " + std::to_string(q) + " (KernelTraits::shape_multiple), not " +
                       std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
  return can_implement(m, n, k);
}

Support GemmKernel::can_implement_layout(const GemmLayout& l) const {
  if (traits().layouts & l.bit()) return Support::yes();
  return Support::no("the kernel takes " + describe_layouts(traits().layouts) + ", not " + to_string(l));
}

std::string_view to_string(Determinism d) { return d == Determinism::RunToRun ? "run_to_run" : "deterministic"; }

std::optional<Determinism> parse_determinism(std::string_view s) {
  if (s == "deterministic") return Determinism::Deterministic;
  if (s == "run_to_run") return Determinism::RunToRun;
  return std::nullopt;
}

std::string determinism_problem(const KernelTraits& t) {
  const SummationOrder& o = t.sum_order;
  const bool atomic = o.kind == OrderKind::SplitK && o.outer == Combine::Atomic;
  if (t.determinism == Determinism::RunToRun && o.known() && !atomic)
    return "a kernel declaring run-to-run nondeterminism has no fixed order, but declares " + order_spec(o) +
           " (declare order unknown, or splitk with combine=atomic)";
  if (t.determinism == Determinism::Deterministic && atomic)
    return "an atomic combine (" + order_spec(o) + ") adds partials in an arrival order that changes run to run: declare "
           "determinism run_to_run";
  // The envelope bounds the combine's S roundings in the accumulator's unit; partials added into an output of
  // fewer bits round in the output's unit, which that model does not cover: refused rather than misjudged.
  if (atomic && t.out->precision() < t.acc->precision())
    return "an atomic combine into an output (" + std::string(t.out->tag) + ") narrower than the accumulator (" +
           std::string(t.acc->tag) + ") is not modelled: the partials would round in the output's unit";
  return {};
}

}  // namespace fpcert
