// plugin/attention_plugin.cpp — attention forward and backward kernels of plugins (plugin/attention_plugin.hpp).
#include "plugin/attention_plugin.hpp"

#include <fmt/format.h>

#include <cstddef>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/gemm_abi.hpp"
#include "plugin/loader.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/rows_plugin.hpp"

// The minor 10 layout: appended right after the minor 9 fields, attention_bwd_run last of them (gemm_shape_multiple and its
// reserved twin follow); on LP64 the sizes are pinned, so that an edit of the header that moves a field fails here
// instead of breaking every built plugin silently.
static_assert(FPCERT_KERNEL_SIZE_MINOR9 == offsetof(fpcert_kernel, reserved_minor9) + sizeof(std::int32_t));
static_assert(offsetof(fpcert_kernel, attention_bwd_run) + sizeof(fpcert_attention_bwd_run_fn) == offsetof(fpcert_kernel, gemm_shape_multiple));
static_assert(sizeof(void*) != 8 || (sizeof(fpcert_attention_product) == 128 && sizeof(fpcert_attention_traits) == 440 &&
                                     sizeof(fpcert_attention_bwd_traits) == 784 && sizeof(fpcert_attention_args) == 168 &&
                                     sizeof(fpcert_attention_bwd_args) == 216 && FPCERT_KERNEL_SIZE_MINOR9 == 624 && FPCERT_KERNEL_SIZE_MINOR10 == 1888));
// Minor 13 appends attention_fp8 right after minor 11's last field (minor 12 added enum values only).
static_assert(FPCERT_KERNEL_SIZE_MINOR11 == offsetof(fpcert_kernel, eltwise_run) + sizeof(fpcert_eltwise_run_fn));
static_assert(offsetof(fpcert_attention_args, descale_q) == 152 || sizeof(void*) != 8);
// The mask bits are fpcert's own (kernels/attention/attention_kernel.hpp): passed through unchanged.
static_assert(FPCERT_ATTENTION_MASK_CAUSAL_TOP_LEFT == fpcert::kAttnMaskCausalTopLeft &&
              FPCERT_ATTENTION_MASK_CAUSAL_BOTTOM_RIGHT == fpcert::kAttnMaskCausalBottomRight &&
              FPCERT_ATTENTION_MASK_ADDITIVE == fpcert::kAttnMaskAdditive);

namespace fpcert {

using namespace plugin_detail;

namespace {

using Kerr = std::function<void(const std::string&)>;
constexpr int kMinor = 12;  // the minor whose valid values the messages list

std::string tag_of(std::int32_t v) {
  const Format* f = format_from_abi(v);
  return f ? std::string(f->tag) : fmt::format("value {}", v);
}

/// One matrix product: a GEMM's traits and order (plugin/gemm_abi.cpp), its operands in the formats the operation
/// passes, b_input the kernel's input format (a_input 0: the kernel's choice, e.g. the format P or dS is rounded into), its
/// result in fp32, no atomic order (the attention declarations have no run-to-run determinism of their products).
void validate_product(const std::string& field, const fpcert_attention_product& p, std::int32_t a_input, std::int32_t b_input,
                      const Kerr& kerr, const std::string& versions) {
  validate_gemm_traits_abi(field + ".traits.", p.traits, kerr, versions);
  validate_gemm_order_abi(field + ".order.", p.order, kerr, versions);
  if (p.order.kind == FPCERT_ORDER_SPLIT_K && p.order.outer == FPCERT_COMBINE_ATOMIC)
    kerr(field + ".order: an atomic split-K combine is a run-to-run order, which an attention product cannot declare (the "
                 "backward's dQ declares its atomics in dq_determinism)");
  // The bounds keep every product's result (the scores, O~, dP and the gradients' sums) in fp32 before what follows it.
  if (p.traits.out_format != FPCERT_FORMAT_F32 && format_from_abi(p.traits.out_format))
    kerr(fmt::format("{}.traits.out_format must be f32 (the product's result is kept in fp32 before the softmax, the normalisation "
                     "or the gradients' rounding: the bound models no other), got {}", field, tag_of(p.traits.out_format)));
  if (!format_from_abi(b_input)) return;  // the input format itself is refused: nothing to compare with
  if (a_input && p.traits.a_input != a_input)
    kerr(fmt::format("{}.traits.a_input must be the input format ({}), got {}", field, tag_of(a_input), tag_of(p.traits.a_input)));
  if (p.traits.b_input != b_input)
    kerr(fmt::format("{}.traits.b_input must be the input format ({}), got {}", field, tag_of(b_input), tag_of(p.traits.b_input)));
}

KernelTraits product_traits(const fpcert_attention_product& p) { return gemm_traits_from_abi(p.traits, gemm_order_from_abi(p.order)); }

/// The masks, grouped heads and head dims a kernel takes (both directions declare them alike).
void validate_takes(const std::string& prefix, std::uint32_t masks, std::int32_t grouped, std::int32_t count, const std::int32_t* dims,
                    const Kerr& kerr, const std::string& versions) {
  if (const std::uint32_t bad = masks & ~FPCERT_ATTENTION_MASKS_ALL)
    kerr(fmt::format("{}masks: unknown bits 0x{:X} (valid: 0x1 causal top-left, 0x2 causal bottom-right, 0x4 additive){}", prefix, bad,
                     versions));
  need_01(prefix + "grouped_heads", grouped, kerr);
  if (count < 0 || count > FPCERT_ATTENTION_MAX_HEAD_DIMS) {
    kerr(fmt::format("{}head_dim_count must be 0 (any head dim) .. {}, got {}", prefix, FPCERT_ATTENTION_MAX_HEAD_DIMS, count));
    return;
  }
  for (int i = 0; i < FPCERT_ATTENTION_MAX_HEAD_DIMS; ++i) {
    if (i < count && dims[i] < 1) kerr(fmt::format("{}head_dims[{}] must be >= 1 (one of the head_dim_count head dims), got {}", prefix, i, dims[i]));
    if (i >= count && dims[i] != 0) kerr(fmt::format("{}head_dims[{}] must be 0 past head_dim_count ({}), got {}", prefix, i, count, dims[i]));
  }
}

std::vector<int> head_dims_of(std::int32_t count, const std::int32_t* dims) { return std::vector<int>(dims, dims + count); }

void validate_masked_lse(const std::string& field, std::int32_t v, const Kerr& kerr, const std::string& versions) {
  if (v != FPCERT_ATTENTION_MASKED_LSE_NEG_INF && v != FPCERT_ATTENTION_MASKED_LSE_POS_INF)
    kerr(bad_enum(field, v, "1 neg_inf, 2 pos_inf", versions, kMinor));
}

void validate_exp_form(const std::string& field, std::int32_t v, bool forward, const Kerr& kerr, const std::string& versions) {
  if (forward && v == FPCERT_ATTENTION_EXP_BASE2_SCALED) return;
  if (v != FPCERT_ATTENTION_EXP_NATURAL && v != FPCERT_ATTENTION_EXP_BASE2_FOLDED)
    kerr(bad_enum(field, v, forward ? "1 natural, 2 base2_folded, 3 base2_scaled" : "1 natural, 2 base2_folded", versions, kMinor));
}

void validate_forward(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions) {
  const fpcert_attention_traits& a = k.attention;
  if (!k.attention_run) kerr("attention_run is NULL (required)");
  checked_format("attention.input", a.input, kerr, versions);
  validate_product("attention.qk", a.qk, a.input, a.input, kerr, versions);
  validate_product("attention.pv", a.pv, 0, a.input, kerr, versions);
  if (a.shift == FPCERT_SOFTMAX_ONLINE || a.shift == FPCERT_ATTENTION_SHIFT_ONLINE_BY_DIFFERENCE) {
    if (a.key_block < 1) kerr(fmt::format("attention.key_block must be >= 1 for an ONLINE softmax (keys per block), got {}", a.key_block));
  } else if (a.shift == FPCERT_SOFTMAX_SHIFTED) {
    if (a.key_block != 0) kerr(fmt::format("attention.key_block must be 0 for a SHIFTED softmax (no key blocks), got {}", a.key_block));
  } else if (a.shift == FPCERT_SOFTMAX_UNSHIFTED) {
    kerr("attention.shift UNSHIFTED: an attention kernel subtracts the row's max (SHIFTED, 1) or a running max (ONLINE, 3)");
  } else {
    kerr(bad_enum("attention.shift", a.shift, "1 shifted, 3 online, 4 online_by_difference", versions, kMinor));
  }
  validate_exp_form("attention.exp_form", a.exp_form, true, kerr, versions);
  need_01("attention.writes_lse", a.writes_lse, kerr);
  validate_elem_fn("attention.exp", a.exp, ElemFn::Exp, &f32, kerr, versions);
  if (a.writes_lse == 1) {
    validate_elem_fn("attention.log", a.log, ElemFn::Log, &f32, kerr, versions);
  } else if (a.writes_lse == 0) {
    const fpcert_elem_fn_error& l = a.log;
    if (l.implementation != 0 || l.reserved != 0 || l.ulps != 0 || l.ulps_per_x != 0 || l.abs_error != 0 || l.source)
      kerr("attention.log must be all zero when writes_lse is 0 (no LSE, no log)");
  }
  need_ieee("attention.sum_format", checked_format("attention.sum_format", a.sum_format, kerr, versions), kerr);
  if (a.normalize < FPCERT_ATTENTION_NORMALIZE_DIVIDE || a.normalize > FPCERT_ATTENTION_NORMALIZE_RECIPROCAL_APPROX)
    kerr(bad_enum("attention.normalize", a.normalize, "1 divide, 2 reciprocal, 3 softmax_first, 4 reciprocal_approx", versions, kMinor));
  const Format* out = checked_format("attention.out_format", a.out_format, kerr, versions);
  if (a.masked_rows != FPCERT_MASKED_ROWS_NAN && a.masked_rows != FPCERT_MASKED_ROWS_ZERO)
    kerr(bad_enum("attention.masked_rows", a.masked_rows, "1 nan, 2 zero", versions, kMinor));
  else if (out && a.masked_rows == FPCERT_MASKED_ROWS_NAN && !out->has_nan())
    kerr(fmt::format("attention.masked_rows NAN: the output format {} has no NaN", out->tag));
  validate_masked_lse("attention.masked_lse", a.masked_lse, kerr, versions);
  validate_takes("attention.", a.masks, a.grouped_heads, a.head_dim_count, a.head_dims, kerr, versions);
  if (!(a.score_rel >= 0 && a.score_rel < 1))  // NaN fails both
    kerr(fmt::format("attention.score_rel = {}: must be a relative error in [0, 1)", a.score_rel));
  else if (a.score_rel > 0 && (!a.note || !*a.note))
    kerr("attention.note is required when score_rel > 0 (the derivation of the extra relative error of the scores)");
  if (has_attention_fp8_fields(k)) {
    const fpcert_attention_fp8& f = k.attention_fp8;
    need_01("attention_fp8.descales", f.descales, kerr);
    if (f.descale_roundings < 0 || f.descale_roundings > 8 || (f.descales == 0 && f.descale_roundings != 0))
      kerr(fmt::format("attention_fp8.descale_roundings = {}: 0 .. 8 relative roundings the descales add to the scale, 0 when "
                       "descales is 0", f.descale_roundings));
    if (f.p_offset_log2 < 0 || f.p_offset_log2 > 16)
      kerr(fmt::format("attention_fp8.p_offset_log2 = {}: P formed as 2^k times the probability, k in 0 .. 16", f.p_offset_log2));
    else if (f.p_offset_log2 > 0 && a.exp_form != FPCERT_ATTENTION_EXP_BASE2_FOLDED)
      kerr("attention_fp8.p_offset_log2 > 0 needs exp_form BASE2_FOLDED (the offset is subtracted from the shift RN(m c))");
    if (f.reserved != 0) kerr(fmt::format("attention_fp8.reserved must be 0, got {}", f.reserved));
  }
}

void validate_backward(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions) {
  const fpcert_attention_bwd_traits& b = k.attention_bwd;
  if (!k.attention_bwd_run) kerr("attention_bwd_run is NULL (required)");
  checked_format("attention_bwd.input", b.input, kerr, versions);
  validate_product("attention_bwd.qk", b.qk, b.input, b.input, kerr, versions);
  validate_product("attention_bwd.dov", b.dov, b.input, b.input, kerr, versions);
  validate_product("attention_bwd.pdo", b.pdo, 0, b.input, kerr, versions);
  validate_product("attention_bwd.dsk", b.dsk, 0, b.input, kerr, versions);
  validate_product("attention_bwd.dsq", b.dsq, 0, b.input, kerr, versions);
  validate_exp_form("attention_bwd.exp_form", b.exp_form, false, kerr, versions);
  need_01("attention_bwd.reads_saved", b.reads_saved, kerr);
  validate_elem_fn("attention_bwd.exp", b.exp, ElemFn::Exp, &f32, kerr, versions);
  checked_format("attention_bwd.d_acc", b.d_acc, kerr, versions);
  need_ieee("attention_bwd.compute_format", checked_format("attention_bwd.compute_format", b.compute_format, kerr, versions), kerr);
  if (b.dq_determinism != FPCERT_DETERMINISTIC && b.dq_determinism != FPCERT_RUN_TO_RUN)
    kerr(bad_enum("attention_bwd.dq_determinism", b.dq_determinism, "1 deterministic, 2 run_to_run", versions, kMinor));
  checked_format("attention_bwd.dq_acc", b.dq_acc, kerr, versions);
  checked_format("attention_bwd.dq_out", b.dq_out, kerr, versions);
  checked_format("attention_bwd.dk_out", b.dk_out, kerr, versions);
  checked_format("attention_bwd.dv_out", b.dv_out, kerr, versions);
  validate_masked_lse("attention_bwd.masked_lse", b.masked_lse, kerr, versions);
  validate_takes("attention_bwd.", b.masks, b.grouped_heads, b.head_dim_count, b.head_dims, kerr, versions);
  if (b.reserved != 0) kerr(fmt::format("attention_bwd.reserved must be 0, got {}", b.reserved));
}

}  // namespace

bool has_attention_fp8_fields(const fpcert_kernel& k) {
  return k.struct_size >= offsetof(fpcert_kernel, attention_fp8) + sizeof(fpcert_attention_fp8);
}

bool has_attention_abi_fields(const fpcert_kernel& k) {
  return k.struct_size >= offsetof(fpcert_kernel, attention_bwd_run) + sizeof(k.attention_bwd_run);
}

void validate_attention_abi(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions, std::uint32_t abi_major,
                            std::uint32_t abi_minor) {
  const bool fwd = k.operation == FPCERT_OPERATION_ATTENTION;
  if (!has_attention_abi_fields(k)) {
    const char* what = fwd ? "attention" : "attention_bwd";
    if (abi_minor < 10)
      kerr(fmt::format("operation: {} ({}) needs plugin ABI minor 10; the plugin was built against {}.{} (its kernels end before the "
                       "attention fields)", k.operation, what, abi_major, abi_minor));
    else
      kerr(fmt::format("operation: {} ({}) but struct_size {} ends before the attention fields (they end at byte {})", k.operation, what,
                       k.struct_size, offsetof(fpcert_kernel, attention_bwd_run) + sizeof(k.attention_bwd_run)));
    return;
  }
  if (fwd) validate_forward(k, kerr, versions);
  else validate_backward(k, kerr, versions);
}

AttentionTraits attention_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_attention_traits& a = k.attention;
  AttentionTraits t;
  t.input = format_from_abi(a.input);
  t.qk = product_traits(a.qk);
  t.pv = product_traits(a.pv);
  t.shift = a.shift == FPCERT_SOFTMAX_ONLINE || a.shift == FPCERT_ATTENTION_SHIFT_ONLINE_BY_DIFFERENCE ? SoftmaxShift::Online : SoftmaxShift::Shifted;
  t.rescale_by_difference = a.shift == FPCERT_ATTENTION_SHIFT_ONLINE_BY_DIFFERENCE;
  t.key_block = t.shift == SoftmaxShift::Online ? a.key_block : 0;
  t.exp_form = a.exp_form == FPCERT_ATTENTION_EXP_BASE2_FOLDED  ? AttentionExpForm::Base2Folded
               : a.exp_form == FPCERT_ATTENTION_EXP_BASE2_SCALED ? AttentionExpForm::Base2Scaled
                                                                 : AttentionExpForm::Natural;
  t.exp = elem_fn_from_abi(a.exp, ElemFn::Exp);
  t.sum_acc = format_from_abi(a.sum_format);
  t.recip_ulps = a.normalize == FPCERT_ATTENTION_NORMALIZE_RECIPROCAL_APPROX ? 2 : 0.5;
  t.normalize = a.normalize == FPCERT_ATTENTION_NORMALIZE_RECIPROCAL || a.normalize == FPCERT_ATTENTION_NORMALIZE_RECIPROCAL_APPROX
                    ? AttentionNormalize::Reciprocal
                : a.normalize == FPCERT_ATTENTION_NORMALIZE_SOFTMAX_FIRST ? AttentionNormalize::Probabilities
                                                                          : AttentionNormalize::Divide;
  t.out = format_from_abi(a.out_format);
  t.writes_lse = a.writes_lse == 1;
  if (t.writes_lse) t.log = elem_fn_from_abi(a.log, ElemFn::Log);
  t.masked_rows = a.masked_rows == FPCERT_MASKED_ROWS_NAN ? MaskedRowPolicy::Nan : MaskedRowPolicy::Zero;
  t.masked_lse = a.masked_lse == FPCERT_ATTENTION_MASKED_LSE_POS_INF ? MaskedLse::PosInf : MaskedLse::NegInf;
  t.masks = static_cast<std::uint8_t>(a.masks);
  t.head_dims = head_dims_of(a.head_dim_count, a.head_dims);
  t.grouped_heads = a.grouped_heads == 1;
  t.score_rel = a.score_rel;
  if (has_attention_fp8_fields(k)) {
    t.descales = k.attention_fp8.descales == 1;
    t.descale_roundings = t.descales ? k.attention_fp8.descale_roundings : 0;
    t.p_offset_log2 = k.attention_fp8.p_offset_log2;
  }
  t.note = a.note && *a.note ? std::string(a.note) + " (declared by the plugin)" : "declared by the plugin";
  return t;
}

AttentionBwdTraits attention_bwd_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_attention_bwd_traits& b = k.attention_bwd;
  AttentionBwdTraits t;
  t.input = format_from_abi(b.input);
  t.qk = product_traits(b.qk);
  t.dov = product_traits(b.dov);
  t.pdo = product_traits(b.pdo);
  t.dsk = product_traits(b.dsk);
  t.dsq = product_traits(b.dsq);
  t.exp_form = b.exp_form == FPCERT_ATTENTION_EXP_BASE2_FOLDED ? AttentionExpForm::Base2Folded : AttentionExpForm::Natural;
  t.exp = elem_fn_from_abi(b.exp, ElemFn::Exp);
  t.d_acc = format_from_abi(b.d_acc);
  t.compute = format_from_abi(b.compute_format);
  t.dq_determinism = b.dq_determinism == FPCERT_RUN_TO_RUN ? Determinism::RunToRun : Determinism::Deterministic;
  t.dq_acc = format_from_abi(b.dq_acc);
  t.dq_out = format_from_abi(b.dq_out);
  t.dk_out = format_from_abi(b.dk_out);
  t.dv_out = format_from_abi(b.dv_out);
  t.masks = static_cast<std::uint8_t>(b.masks);
  t.head_dims = head_dims_of(b.head_dim_count, b.head_dims);
  t.grouped_heads = b.grouped_heads == 1;
  t.masked_lse = b.masked_lse == FPCERT_ATTENTION_MASKED_LSE_POS_INF ? MaskedLse::PosInf : MaskedLse::NegInf;
  t.reads_saved = b.reads_saved == 1;
  t.note = b.note && *b.note ? std::string(b.note) + " (declared by the plugin)" : "declared by the plugin";
  return t;
}

namespace {

fpcert_attention_causal abi_causal(CausalAlign c) {
  return c == CausalAlign::TopLeft       ? FPCERT_ATTENTION_CAUSAL_TOP_LEFT
         : c == CausalAlign::BottomRight ? FPCERT_ATTENTION_CAUSAL_BOTTOM_RIGHT
                                         : FPCERT_ATTENTION_CAUSAL_NONE;
}

fpcert_attention_shape abi_shape(const AttentionShape& s) {
  return fpcert_attention_shape{s.batch, s.heads_q, s.heads_kv, s.len_q, s.len_k, s.head_dim};
}

/// What the two plugin kernels share: the descriptor, names, memory space, the plugin's can_implement, and a run's
/// status as fpcert's verdict. A can_implement that fails (a status other than OK and NOT_SUPPORTED) answers "yes" and
/// its error is the next run's failure, inside the runner's guarded call (as a GEMM plugin's, plugin/loader.cpp): the
/// case fails with the plugin's message, nothing escapes.
struct PluginAttention {
  const fpcert_kernel* d;
  std::string origin, name;
  std::shared_ptr<void> keepalive;
  mutable std::string pending_error;

  std::string description(const char* what) const {
    return (d->description && *d->description ? std::string(d->description) : std::string(what)) + " (" + origin + ")";
  }
  MemorySpace memory() const { return d->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host; }
  void* stream(void* s) const { return memory() == MemorySpace::Device ? s : nullptr; }
  template <class Fn>
  Support can_implement(const char* fn_name, Fn fn, const Support& declared, const AttentionShape& s, CausalAlign causal, bool masked) const {
    pending_error.clear();
    if (!declared.ok || !fn) return declared;
    const fpcert_attention_shape shape = abi_shape(s);
    Message msg;
    const std::int32_t st = call_plugin(name, fn_name, fn, d->user_data, static_cast<const fpcert_attention_shape*>(&shape),
                                        static_cast<std::int32_t>(masked), abi_causal(causal), msg.buf.data(), msg.buf.size());
    if (st == FPCERT_STATUS_OK || st == FPCERT_STATUS_NOT_SUPPORTED) return support_from_status(name, fn_name, st, msg);
    pending_error = describe_failure(name, fn_name, st, msg);
    return Support::yes();
  }
  /// Calls `fn` with the arguments both directions share filled from o (struct_size, memory, the shape, Q, K, V, the
  /// masks, the scale), `own` setting the direction's own; its status becomes fpcert's verdict.
  template <class Args, class Fn, class Ops, class Own>
  void run(const char* fn_name, Fn fn, const Ops& o, Own own) const {
    if (!pending_error.empty()) throw DeviceError(pending_error);
    Args a{};
    a.struct_size = sizeof(a);
    a.memory = d->memory;
    a.shape = abi_shape(o.shape);
    a.q = o.q, a.ldq = o.ldq;
    a.k = o.k, a.ldk = o.ldk;
    a.v = o.v, a.ldv = o.ldv;
    a.mask = o.mask, a.ldm = o.mask ? o.ldm : 0;
    a.causal = abi_causal(o.causal);
    a.scale = o.scale;
    own(a);
    Message msg;
    const std::int32_t st = call_plugin(name, fn_name, fn, d->user_data, static_cast<const Args*>(&a), stream(o.stream), msg.buf.data(),
                                        msg.buf.size());
    check_run_status(name, fn_name, st, msg);
  }
};

/// The parts of both wrappers that only restate the descriptor: name, description, backend, memory space, traits.
template <class Base, class Traits>
class PluginAttentionBase : public Base {
 public:
  PluginAttentionBase(PluginAttention p, Traits (*from_abi)(const fpcert_kernel&), const char* what)
      : p_(std::move(p)), traits_(from_abi(*p_.d)), what_(what) {}
  const std::string& name() const override { return p_.name; }
  std::string description() const override { return p_.description(what_); }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return p_.memory(); }

 protected:
  PluginAttention p_;
  Traits traits_;
  const char* what_;
};

class PluginAttentionKernel final : public PluginAttentionBase<AttentionKernel, AttentionTraits> {
 public:
  explicit PluginAttentionKernel(PluginAttention p)
      : PluginAttentionBase(std::move(p), attention_traits_from_abi, "plugin attention") {}
  const AttentionTraits& attention_traits() const override { return traits_; }
  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    return p_.can_implement("attention_can_implement", p_.d->attention_can_implement, AttentionKernel::can_implement(s, causal, additive_mask),
                            s, causal, additive_mask);
  }
  void run(const AttentionOperands& o) override {
    p_.run<fpcert_attention_args>("attention_run", p_.d->attention_run, o, [&](fpcert_attention_args& a) {
      a.o = o.o, a.ldo = o.ldo;
      a.lse = traits_.writes_lse ? o.lse : nullptr;  // a kernel that declares no LSE is never given the buffer
      // A kernel without descales is always called with 1 (minor 13's fields; older kernels never read them).
      a.descale_q = traits_.descales ? o.descale_q : 1.0f;
      a.descale_k = traits_.descales ? o.descale_k : 1.0f;
      a.descale_v = traits_.descales ? o.descale_v : 1.0f;
    });
  }
};

class PluginAttentionBwdKernel final : public PluginAttentionBase<AttentionBwdKernel, AttentionBwdTraits> {
 public:
  explicit PluginAttentionBwdKernel(PluginAttention p)
      : PluginAttentionBase(std::move(p), attention_bwd_traits_from_abi, "plugin attention backward") {}
  const AttentionBwdTraits& attention_bwd_traits() const override { return traits_; }
  Support can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const override {
    return p_.can_implement("attention_bwd_can_implement", p_.d->attention_bwd_can_implement,
                            AttentionBwdKernel::can_implement(s, causal, additive_mask), s, causal, additive_mask);
  }
  void run(const AttentionBwdOperands& o) override {
    p_.run<fpcert_attention_bwd_args>("attention_bwd_run", p_.d->attention_bwd_run, o, [&](fpcert_attention_bwd_args& a) {
      a.o = o.o, a.ldo = o.ldo;
      a.d_o = o.d_o, a.lddo = o.lddo;
      a.lse = o.lse;
      a.dq = o.dq, a.lddq = o.lddq;
      a.dk = o.dk, a.lddk = o.lddk;
      a.dv = o.dv, a.lddv = o.lddv;
    });
  }
};

}  // namespace

std::unique_ptr<Kernel> make_plugin_attention_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive) {
  PluginAttention p{desc, std::move(origin), desc->name, std::move(keepalive), {}};
  if (desc->operation == FPCERT_OPERATION_ATTENTION) return std::make_unique<PluginAttentionKernel>(std::move(p));
  return std::make_unique<PluginAttentionBwdKernel>(std::move(p));
}

}  // namespace fpcert
