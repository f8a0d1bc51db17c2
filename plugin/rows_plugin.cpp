// plugin/rows_plugin.cpp — softmax and normalisation kernels of plugins (plugin/rows_plugin.hpp).
#include "plugin/rows_plugin.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/reduce_plugin.hpp"

// The minor 6 layout: appended right after the minor 5 fields, norm_run last; on LP64 (x86-64, aarch64 Linux, what
// fpcert and its plugins are built for) the sizes are pinned, so that an edit of the header that moves a field fails
// here instead of breaking every built plugin silently.
static_assert(FPCERT_KERNEL_SIZE_MINOR5 == offsetof(fpcert_kernel, reserved_minor5) + sizeof(std::int32_t));
static_assert(offsetof(fpcert_kernel, norm_run) + sizeof(fpcert_norm_run_fn) == FPCERT_KERNEL_SIZE_MINOR6);
static_assert(sizeof(void*) != 8 || (sizeof(fpcert_elem_fn_error) == 40 && sizeof(fpcert_softmax_traits) == 136 &&
                                     sizeof(fpcert_norm_traits) == 72 && sizeof(fpcert_softmax_args) == 80 &&
                                     sizeof(fpcert_norm_args) == 80 && FPCERT_KERNEL_SIZE_MINOR6 == 568));

namespace fpcert {

using namespace plugin_detail;

using Kerr = std::function<void(const std::string&)>;

namespace {

const char* fn_name(ElemFn f) { return f == ElemFn::Exp ? "exp" : f == ElemFn::Log ? "log" : "rsqrt"; }

/// The preset's declaration for function f (nullopt: the preset is not one of f's implementations).
std::optional<ElemFnError> preset(std::int32_t impl, ElemFn f) {
  switch (impl) {
    case FPCERT_ELEM_FN_LIBM_F32:
      if (f == ElemFn::Exp) return exp_error_libm_f32();
      if (f == ElemFn::Log) return log_error_libm_f32();
      return ElemFnError{1, 0, 0, "fl32(1 / sqrt(t)) of glibc's double sqrt and division: 0.5 ulp + 2^-28 ulp"};
    case FPCERT_ELEM_FN_CUDA_EXPF:
      if (f == ElemFn::Exp) return exp_error_cuda_expf();
      break;
    case FPCERT_ELEM_FN_CUDA_FAST_EXPF:
      if (f == ElemFn::Exp) return exp_error_cuda_fast();
      break;
    case FPCERT_ELEM_FN_CUDA_LOGF:
      if (f == ElemFn::Log) return log_error_cuda_logf();
      break;
    case FPCERT_ELEM_FN_CUDA_RSQRTF:
      if (f == ElemFn::Rsqrt) return ElemFnError{2, 0, 0, "CUDA rsqrtf: 2 ulp (CUDA C Programming Guide, Mathematical Functions)"};
      break;
    case FPCERT_ELEM_FN_EXPF_OPS:
      if (f == ElemFn::Exp) return exp_error_expf_ops();
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

std::string bad_enum(const std::string& field, std::int32_t v, const char* valid, const std::string& versions, int minor) {
  return fmt::format("{}: {} value {} (valid in ABI minor {}: {}){}", field, v == 0 ? "required, got" : "unknown", v, minor, valid, versions);
}

void validate_elem_fn(const std::string& field, const fpcert_elem_fn_error& e, ElemFn f, const Format* compute, const Kerr& kerr,
                      const std::string& versions) {
  if (e.reserved != 0) kerr(fmt::format("{}.reserved must be 0, got {}", field, e.reserved));
  if (e.implementation == FPCERT_ELEM_FN_STATED) {
    auto number = [&](const char* what, double v, double least) {
      if (!(std::isfinite(v) && v >= least)) kerr(fmt::format("{}.{} must be finite and >= {}, got {}", field, what, least, v));
    };
    number("ulps", e.ulps, 0.5);  // half an ulp: a correctly rounded implementation; nothing does better
    number("ulps_per_x", e.ulps_per_x, 0);
    number("abs_error", e.abs_error, 0);
    if (f == ElemFn::Rsqrt && (e.ulps_per_x != 0 || e.abs_error != 0))
      kerr(fmt::format("{}: an rsqrt is declared by ulps alone (ulps_per_x and abs_error must be 0)", field));
    if (!e.source || !*e.source) kerr(fmt::format("{}.source is required for STATED: name the documentation the numbers come from", field));
    return;
  }
  if (e.implementation < FPCERT_ELEM_FN_LIBM_F32 || e.implementation > FPCERT_ELEM_FN_EXPF_OPS) {
    kerr(bad_enum(std::string(field) + ".implementation", e.implementation,
                  "1 stated, 2 libm_f32, 3 cuda_expf, 4 cuda_fast_expf, 5 cuda_logf, 6 cuda_rsqrtf, 7 expf_ops", versions));
    return;
  }
  if (!preset(e.implementation, f)) kerr(fmt::format("{}.implementation {} is not an implementation of {}", field, e.implementation, fn_name(f)));
  if (e.ulps != 0 || e.ulps_per_x != 0 || e.abs_error != 0 || e.source)
    kerr(fmt::format("{}: a preset implementation states no numbers (ulps, ulps_per_x, abs_error 0, source NULL): fpcert holds "
                     "them; use FPCERT_ELEM_FN_STATED to give your own", field));
  if (compute && *compute != f32)
    kerr(fmt::format("{}: the presets are fp32 implementations and the compute format is {}: state the numbers (STATED)", field, compute->tag));
}

ElemFnError elem_fn_from_abi(const fpcert_elem_fn_error& e, ElemFn f) {
  if (e.implementation != FPCERT_ELEM_FN_STATED) return *preset(e.implementation, f);
  return ElemFnError{e.ulps, e.ulps_per_x, e.abs_error, std::string(e.source) + " (declared by the plugin)"};
}

const Format* checked_format(const std::string& field, std::int32_t v, const Kerr& kerr, const std::string& versions) {
  validate_format_abi(field.c_str(), v, true, kerr, versions);
  const Format* f = format_from_abi(v);
  return f && *f != ue8m0 ? f : nullptr;
}

void need_ieee(const std::string& field, const Format* f, const Kerr& kerr) {
  if (f && !f->has_inf()) kerr(fmt::format("{}: {} has no Inf ({}); a row's -Inf entries and NaN need an IEEE format", field, f->tag, to_string(f->specials)));
}

void need_01(const std::string& field, std::int32_t v, const Kerr& kerr) {
  if (v != 0 && v != 1) kerr(fmt::format("{} must be 0 or 1, got {}", field, v));
}

namespace {

void validate_softmax(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions) {
  const fpcert_softmax_traits& s = k.softmax;
  if (!k.softmax_run) kerr("softmax_run is NULL (required)");
  const bool fn_ok = s.fn == FPCERT_SOFTMAX_FN_SOFTMAX || s.fn == FPCERT_SOFTMAX_FN_LOG_SOFTMAX;
  if (!fn_ok) kerr(bad_enum("softmax.fn", s.fn, "1 softmax, 2 log_softmax", versions));
  if (s.shift < FPCERT_SOFTMAX_SHIFTED || s.shift > FPCERT_SOFTMAX_ONLINE)
    kerr(bad_enum("softmax.shift", s.shift, "1 shifted, 2 unshifted, 3 online", versions));
  checked_format("softmax.x_input", s.x_input, kerr, versions);
  const Format* compute = checked_format("softmax.compute_format", s.compute_format, kerr, versions);
  need_ieee("softmax.compute_format", compute, kerr);
  need_ieee("softmax.sum_format", checked_format("softmax.sum_format", s.sum_format, kerr, versions), kerr);
  const Format* out = checked_format("softmax.out_format", s.out_format, kerr, versions);
  validate_reduce_order_abi("softmax.sum_", s.sum_order, s.sum_block, s.sum_lanes, kerr, versions);
  if (s.shift == FPCERT_SOFTMAX_ONLINE && s.sum_order != FPCERT_REDUCE_ORDER_BLOCKED)
    kerr(fmt::format("softmax.sum_order must be BLOCKED (4) for an ONLINE softmax, sum_block its block (the running max changes at most "
                     "once a block), got {}", s.sum_order));
  need_01("softmax.sum_chain_from_first", s.sum_chain_from_first, kerr);
  need_01("softmax.reciprocal", s.reciprocal, kerr);
  if (s.fn == FPCERT_SOFTMAX_FN_LOG_SOFTMAX && s.reciprocal == 1) kerr("softmax.reciprocal must be 0 for LOG_SOFTMAX (it divides nothing)");
  need_01("softmax.accepts_mask", s.accepts_mask, kerr);
  if (s.masked_rows != FPCERT_MASKED_ROWS_NAN && s.masked_rows != FPCERT_MASKED_ROWS_ZERO)
    kerr(bad_enum("softmax.masked_rows", s.masked_rows, "1 nan, 2 zero", versions));
  else if (out && s.masked_rows == FPCERT_MASKED_ROWS_NAN && !out->has_nan())
    kerr(fmt::format("softmax.masked_rows NAN: the output format {} has no NaN", out->tag));
  else if (out && s.masked_rows == FPCERT_MASKED_ROWS_ZERO && s.fn == FPCERT_SOFTMAX_FN_LOG_SOFTMAX && !out->has_inf())
    kerr(fmt::format("softmax.masked_rows ZERO of a log-softmax is -Inf: the output format {} has no Inf", out->tag));
  if (s.reserved != 0) kerr(fmt::format("softmax.reserved must be 0, got {}", s.reserved));
  validate_elem_fn("softmax.exp", s.exp, ElemFn::Exp, compute, kerr, versions);
  if (s.fn == FPCERT_SOFTMAX_FN_LOG_SOFTMAX) {
    validate_elem_fn("softmax.log", s.log, ElemFn::Log, compute, kerr, versions);
  } else if (fn_ok) {
    const fpcert_elem_fn_error& l = s.log;
    if (l.implementation != 0 || l.reserved != 0 || l.ulps != 0 || l.ulps_per_x != 0 || l.abs_error != 0 || l.source)
      kerr("softmax.log must be all zero for SOFTMAX (a softmax takes no log)");
  }
}

void validate_norm(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions) {
  const fpcert_norm_traits& n = k.norm;
  if (!k.norm_run) kerr("norm_run is NULL (required)");
  if (n.kind != FPCERT_NORM_LAYERNORM && n.kind != FPCERT_NORM_RMSNORM)
    kerr(bad_enum("norm.kind", n.kind, "1 layernorm, 2 rmsnorm", versions));
  if (n.kind == FPCERT_NORM_RMSNORM && n.variance != 0)
    kerr(fmt::format("norm.variance must be 0 for RMSNORM (the mean of squares is one sum), got {}", n.variance));
  else if (n.kind == FPCERT_NORM_LAYERNORM &&
           (n.variance < FPCERT_NORM_VARIANCE_TWO_PASS || n.variance > FPCERT_NORM_VARIANCE_WELFORD_COMBINED))
    kerr(bad_enum("norm.variance", n.variance, "1 two_pass, 2 welford, 3 one_pass, 4 welford_combined", versions));
  if (n.variance == FPCERT_NORM_VARIANCE_WELFORD_COMBINED && (n.welford_parts < 1 || n.welford_parts > (1 << 20)))
    kerr(fmt::format("norm.welford_parts must be 1 .. 2^20 for WELFORD_COMBINED (the parts whose (n, mean, M2) are combined), got {}",
                     n.welford_parts));
  else if (n.variance != FPCERT_NORM_VARIANCE_WELFORD_COMBINED && n.welford_parts != 0)
    kerr(fmt::format("norm.welford_parts must be 0 unless the variance is WELFORD_COMBINED, got {}", n.welford_parts));
  checked_format("norm.x_input", n.x_input, kerr, versions);
  const Format* compute = checked_format("norm.compute_format", n.compute_format, kerr, versions);
  need_ieee("norm.compute_format", compute, kerr);
  need_ieee("norm.acc_format", checked_format("norm.acc_format", n.acc_format, kerr, versions), kerr);
  checked_format("norm.out_format", n.out_format, kerr, versions);
  if (n.eps_placement == FPCERT_NORM_EPS_OUTSIDE_SQRT)
    kerr("norm.eps_placement OUTSIDE_SQRT: 1 / (sqrt(var) + eps) is another function than LayerNorm / RMSNorm, whose definition (and "
         "fpcert's reference) is 1 / sqrt(var + eps); fpcert certifies the definition only");
  else if (n.eps_placement != FPCERT_NORM_EPS_INSIDE_SQRT)
    kerr(bad_enum("norm.eps_placement", n.eps_placement, "1 inside_sqrt", versions));
  validate_elem_fn("norm.rsqrt", n.rsqrt, ElemFn::Rsqrt, compute, kerr, versions);
}

}  // namespace

bool has_rows_abi_fields(const fpcert_kernel& k) { return k.struct_size >= offsetof(fpcert_kernel, norm_run) + sizeof(k.norm_run); }

void validate_rows_abi(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions, std::uint32_t abi_major, std::uint32_t abi_minor) {
  const bool softmax = k.operation == FPCERT_OPERATION_SOFTMAX;
  if (!has_rows_abi_fields(k)) {
    const char* what = softmax ? "softmax" : "norm";
    if (abi_minor < 6)
      kerr(fmt::format("operation: {} ({}) needs plugin ABI minor 6; the plugin was built against {}.{} (its kernels end before the "
                       "softmax and normalisation fields)", k.operation, what, abi_major, abi_minor));
    else
      kerr(fmt::format("operation: {} ({}) but struct_size {} ends before the softmax and normalisation fields (they end at byte {})",
                       k.operation, what, k.struct_size, offsetof(fpcert_kernel, norm_run) + sizeof(k.norm_run)));
    return;
  }
  if (softmax) validate_softmax(k, kerr, versions);
  else validate_norm(k, kerr, versions);
}

SoftmaxTraits softmax_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_softmax_traits& s = k.softmax;
  SoftmaxTraits t;
  SoftmaxArith& a = t.arith;
  a.fn = s.fn == FPCERT_SOFTMAX_FN_LOG_SOFTMAX ? SoftmaxFn::LogSoftmax : SoftmaxFn::Softmax;
  a.shift = s.shift == FPCERT_SOFTMAX_UNSHIFTED ? SoftmaxShift::Unshifted
            : s.shift == FPCERT_SOFTMAX_ONLINE  ? SoftmaxShift::Online
                                                : SoftmaxShift::Shifted;
  a.block = a.shift == SoftmaxShift::Online ? s.sum_block : 0;
  a.compute = format_from_abi(s.compute_format);
  a.exp = elem_fn_from_abi(s.exp, ElemFn::Exp);
  // expf_ops is declared exactly: the bitwise tier evaluates it (oracle/softmax/softmax_emulate.hpp) where it can.
  a.exp_exact = s.exp.implementation == FPCERT_ELEM_FN_EXPF_OPS ? SoftmaxExpExact::ExpfOps : SoftmaxExpExact::None;
  if (a.fn == SoftmaxFn::LogSoftmax) a.log = elem_fn_from_abi(s.log, ElemFn::Log);
  a.sum_acc = format_from_abi(s.sum_format);
  a.sum_order = reduce_order_from_abi(s.sum_order, s.sum_block, s.sum_lanes, s.sum_chain_from_first);
  a.reciprocal = s.reciprocal == 1;
  a.out = format_from_abi(s.out_format);
  t.x_input = format_from_abi(s.x_input);
  t.masked_rows = s.masked_rows == FPCERT_MASKED_ROWS_NAN ? MaskedRowPolicy::Nan : MaskedRowPolicy::Zero;
  t.accepts_mask = s.accepts_mask == 1;
  t.note = "declared by the plugin";
  return t;
}

NormTraits norm_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_norm_traits& n = k.norm;
  NormTraits t;
  NormArith& a = t.arith;
  a.kind = n.kind == FPCERT_NORM_RMSNORM ? NormKind::RmsNorm : NormKind::LayerNorm;
  // RMSNorm: one sum of squares, the variance field 0; TwoPass is how the built-in RMSNorm kernels read (the bound's
  // "mean of squares").
  a.variance = n.variance == FPCERT_NORM_VARIANCE_WELFORD            ? NormVariance::Welford
               : n.variance == FPCERT_NORM_VARIANCE_ONE_PASS         ? NormVariance::OnePass
               : n.variance == FPCERT_NORM_VARIANCE_WELFORD_COMBINED ? NormVariance::WelfordCombined
                                                                     : NormVariance::TwoPass;
  if (a.variance == NormVariance::WelfordCombined) a.welford = {WelfordShape{n.welford_parts, 1}};
  a.compute = format_from_abi(n.compute_format);
  a.acc = format_from_abi(n.acc_format);
  const ElemFnError r = elem_fn_from_abi(n.rsqrt, ElemFn::Rsqrt);
  a.rsqrt_ulps = r.ulps;
  a.rsqrt_source = r.source;
  a.out = format_from_abi(n.out_format);
  t.x_input = format_from_abi(n.x_input);
  t.note = "declared by the plugin";
  return t;
}

namespace {

/// What the two plugin kernels share: the descriptor, names, memory space, and the status of a call as fpcert's verdict.
struct PluginRows {
  const fpcert_kernel* d;
  std::string origin, name;
  std::shared_ptr<void> keepalive;

  std::string description(const char* what) const {
    return (d->description && *d->description ? std::string(d->description) : std::string(what)) + " (" + origin + ")";
  }
  MemorySpace memory() const { return d->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host; }
  void* stream(void* s) const { return memory() == MemorySpace::Device ? s : nullptr; }
  Support support(const char* fn, std::int32_t st, Message& msg) const { return support_from_status(name, fn, st, msg); }
  /// Calls `fn` with the arguments both operations share filled from o (struct_size, memory, the shape, x, out), `own`
  /// setting the operation's own; its status becomes fpcert's verdict: OK returns, NOT_SUPPORTED "not supported",
  /// anything else a failure with the plugin's message.
  template <class Args, class Fn, class Ops, class Own>
  void run(const char* what, Fn fn, const Ops& o, Own own) const {
    Args a{};
    a.struct_size = sizeof(a);
    a.memory = d->memory;
    a.rows = o.rows;
    a.cols = o.cols;
    a.x = o.x;
    a.ldx = o.ldx;
    a.out = o.out;
    a.ldo = o.ldo;
    own(a);
    Message msg;
    const std::int32_t st =
        call_plugin(name, what, fn, d->user_data, static_cast<const Args*>(&a), stream(o.stream), msg.buf.data(), msg.buf.size());
    check_run_status(name, what, st, msg);
  }
};

class PluginSoftmaxKernel final : public SoftmaxKernel {
 public:
  explicit PluginSoftmaxKernel(PluginRows p) : p_(std::move(p)), traits_(softmax_traits_from_abi(*p_.d)) {}
  const std::string& name() const override { return p_.name; }
  std::string description() const override { return p_.description("plugin softmax"); }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return p_.memory(); }
  const SoftmaxTraits& softmax_traits() const override { return traits_; }
  Support can_implement(std::int64_t rows, std::int64_t cols, bool masked) const override {
    if (const Support s = SoftmaxKernel::can_implement(rows, cols, masked); !s.ok) return s;
    if (!p_.d->softmax_can_implement) return Support::yes();
    Message msg;
    const std::int32_t st = call_plugin(p_.name, "softmax_can_implement", p_.d->softmax_can_implement, p_.d->user_data, rows, cols,
                                        static_cast<std::int32_t>(masked), msg.buf.data(), msg.buf.size());
    return p_.support("softmax_can_implement", st, msg);
  }
  void run(const SoftmaxOperands& o) override {
    p_.run<fpcert_softmax_args>("softmax_run", p_.d->softmax_run, o, [&](fpcert_softmax_args& a) {
      a.mask = o.mask;
      a.ldm = o.mask ? o.ldm : 0;
      a.scale = o.scale;
    });
  }

 private:
  PluginRows p_;
  SoftmaxTraits traits_;
};

class PluginNormKernel final : public NormKernel {
 public:
  explicit PluginNormKernel(PluginRows p) : p_(std::move(p)), traits_(norm_traits_from_abi(*p_.d)) {}
  const std::string& name() const override { return p_.name; }
  std::string description() const override { return p_.description("plugin normalisation"); }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return p_.memory(); }
  const NormTraits& norm_traits() const override { return traits_; }
  Support can_implement(std::int64_t rows, std::int64_t cols) const override {
    if (!p_.d->norm_can_implement) return Support::yes();
    Message msg;
    const std::int32_t st =
        call_plugin(p_.name, "norm_can_implement", p_.d->norm_can_implement, p_.d->user_data, rows, cols, msg.buf.data(), msg.buf.size());
    return p_.support("norm_can_implement", st, msg);
  }
  void run(const NormOperands& o) override {
    p_.run<fpcert_norm_args>("norm_run", p_.d->norm_run, o, [&](fpcert_norm_args& a) {
      a.gamma = o.gamma;
      a.beta = o.beta;
      a.eps = o.eps;
    });
  }

 private:
  PluginRows p_;
  NormTraits traits_;
};

}  // namespace

std::unique_ptr<Kernel> make_plugin_rows_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive) {
  PluginRows p{desc, std::move(origin), desc->name, std::move(keepalive)};
  if (desc->operation == FPCERT_OPERATION_SOFTMAX) return std::make_unique<PluginSoftmaxKernel>(std::move(p));
  return std::make_unique<PluginNormKernel>(std::move(p));
}

}  // namespace fpcert
