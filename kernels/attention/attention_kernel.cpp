// kernels/attention/attention_kernel.cpp — registry access, descriptions and the default can_implement of attention
// kernels (kernels/attention/attention_kernel.hpp).
#include "kernels/attention/attention_kernel.hpp"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>

namespace fpcert {

/// s hi + s lo (log2 e = hi + lo, a double-double with |log2 e - hi - lo| < 2^-106) as p + tail with p = RN_f64(s hi)
/// and tail = fma(s, hi, -p) + s lo; (float)p is RN_f32 of p, and p lies on the same side of every f32 midpoint as
/// s log2 e (a midpoint is a double, so it can only be p itself), where the tail's sign decides (s log2 e is irrational
/// for s != 0, never a midpoint). tests/kernels/attention/attention_cuda_emulation_test.cpp checks it.
float attention_scale_log2e(float s) {
  const double hi = 0x1.71547652b82fep+0, lo = 0x1.777d0ffda0d24p-56;
  const double p = static_cast<double>(s) * hi;
  const double tail = std::fma(static_cast<double>(s), hi, -p) + static_cast<double>(s) * lo;
  float r = static_cast<float>(p);
  const double d = p - static_cast<double>(r);  // exact: r is within half an f32 ulp of p
  if (d != 0 && tail != 0) {
    const float other = std::nextafter(r, d > 0 ? INFINITY : -INFINITY);
    const bool midpoint = std::fabs(static_cast<double>(other) - p) == std::fabs(d);
    if (midpoint && (tail > 0) == (d > 0)) r = other;  // the exact value is past the midpoint, on other's side
  }
  return r;
}


std::string_view to_string(CausalAlign c) {
  switch (c) {
    case CausalAlign::None: return "none";
    case CausalAlign::TopLeft: return "top_left";
    case CausalAlign::BottomRight: return "bottom_right";
  }
  return "?";
}

std::string_view to_string(AttentionExpForm f) {
  switch (f) {
    case AttentionExpForm::Natural: return "natural";
    case AttentionExpForm::Base2Folded: return "base2_folded";
    case AttentionExpForm::Base2Scaled: return "base2_scaled";
  }
  return "?";
}

std::string_view to_string(AttentionBug b) {
  switch (b) {
    case AttentionBug::None: return "none";
    case AttentionBug::NoRescale: return "no_rescale";
    case AttentionBug::ScaleAfterSoftmax: return "scale_after_softmax";
    case AttentionBug::CausalOffByOne: return "causal_off_by_one";
    case AttentionBug::LseNoMax: return "lse_no_max";
    case AttentionBug::PRoundedLower: return "p_rounded_lower";
    case AttentionBug::DropLastKeyBlock: return "drop_last_key_block";
    case AttentionBug::DescaleVDropped: return "descale_v_dropped";
    case AttentionBug::Zeros: return "zeros";
  }
  return "?";
}

Support attention_support(const AttentionShape& s, CausalAlign causal, bool additive_mask, std::uint8_t masks,
                          const std::vector<int>& head_dims, bool grouped_heads) {
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.len_q < 1 || s.len_k < 1 || s.head_dim < 1)
    return Support::no(fmt::format("empty shape (batch {}, heads {}/{}, len {} x {}, head_dim {})", s.batch, s.heads_q, s.heads_kv,
                                   s.len_q, s.len_k, s.head_dim));
  if (s.heads_q % s.heads_kv != 0)
    return Support::no(fmt::format("heads_q = {} is not a multiple of heads_kv = {}", s.heads_q, s.heads_kv));
  if (s.heads_kv != s.heads_q && !grouped_heads) return Support::no("grouped-query heads (heads_kv < heads_q) not taken");
  if (!head_dims.empty() && std::find(head_dims.begin(), head_dims.end(), static_cast<int>(s.head_dim)) == head_dims.end())
    return Support::no(fmt::format("head_dim {} not taken", s.head_dim));
  if (causal == CausalAlign::TopLeft && !(masks & kAttnMaskCausalTopLeft)) return Support::no("a top-left causal mask not taken");
  if (causal == CausalAlign::BottomRight && !(masks & kAttnMaskCausalBottomRight))
    return Support::no("a bottom-right causal mask not taken");
  if (additive_mask && !(masks & kAttnMaskAdditive)) return Support::no("an additive mask not taken");
  return Support::yes();
}

Support AttentionKernel::can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const {
  const AttentionTraits& t = attention_traits();
  return attention_support(s, causal, additive_mask, t.masks, t.head_dims, t.grouped_heads);
}

std::unique_ptr<AttentionKernel> make_attention_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Attention) return nullptr;
  return std::unique_ptr<AttentionKernel>(static_cast<AttentionKernel*>(k->make().release()));
}

namespace {
std::string fn_text(const ElemFnError& e) {
  std::string s = fmt::format("{:g}", e.ulps);
  if (e.ulps_per_x > 0) s += fmt::format(" + floor({:g}|x|)", e.ulps_per_x);
  return s + " ulp";
}
std::string gemm_text(const KernelTraits& g) {
  return fmt::format("{} x {} {}, {} acc{}", g.a_input->tag, g.b_input->tag, g.exact_products ? "exact products" : "rounded products",
                     g.acc->tag, g.order.empty() ? "" : " (" + g.order + ")");
}
}  // namespace

std::string describe_attention_traits(const AttentionTraits& t) {
  std::string s = fmt::format("attention in {}, QK^T {}, ", t.input->tag, gemm_text(t.qk));
  s += t.shift == SoftmaxShift::Online ? fmt::format("online softmax block {}{}", t.key_block, t.rescale_by_difference ? " (rescaled by exp2(RN(RN(m_old - m_new) c)))" : "")
                                       : std::string(to_string(t.shift)) + " softmax";
  s += fmt::format(", {} {} {}, P {}, PV {}, l {}, {}, out {}", t.exp_form == AttentionExpForm::Natural ? "exp" : "exp2 folded",
                   fn_text(t.exp), t.exp.source.empty() ? "" : "(declared)", t.pv.a_input->tag, gemm_text(t.pv), t.sum_acc->tag,
                   t.normalize == AttentionNormalize::Divide ? "divide" : t.normalize == AttentionNormalize::Reciprocal ? (t.recip_ulps > 0.5 ? "reciprocal (approximate)" : "reciprocal") : "probabilities", t.out->tag);
  s += fmt::format("; masked rows {}, LSE {}", to_string(t.masked_rows), t.masked_lse == MaskedLse::PosInf ? "+Inf" : "-Inf");
  if (!t.writes_lse) s += " (not written)";
  if (t.descales) s += fmt::format("; per-tensor descales dq, dk, dv folded in (+{} roundings of the scale)", t.descale_roundings);
  if (t.p_offset_log2 != 0) s += fmt::format("; P formed as 2^{} times the probability", t.p_offset_log2);
  return s;
}

}  // namespace fpcert
