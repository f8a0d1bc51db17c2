// kernels/attention/attention_kernel.cpp — registry access, names, descriptions and the default can_implement of
// attention kernels (kernels/attention/attention_kernel.hpp).
// NOTE for the merge (issue 41): branch att41 writes this file for the CPU side; this version exists so that the CUDA
// built-ins of branch fa41 link on their own. Where both exist, keep att41's (it implements the same declarations).
#include "kernels/attention/attention_kernel.hpp"

#include <cstdio>

namespace fpcert {

std::string_view to_string(CausalAlign c) {
  switch (c) {
    case CausalAlign::None: return "none";
    case CausalAlign::TopLeft: return "top_left";
    case CausalAlign::BottomRight: return "bottom_right";
  }
  return "?";
}

std::string_view to_string(AttentionExpForm f) { return f == AttentionExpForm::Natural ? "natural" : "base2_folded"; }

std::string_view to_string(AttentionBug b) {
  switch (b) {
    case AttentionBug::None: return "none";
    case AttentionBug::NoRescale: return "no_rescale";
    case AttentionBug::ScaleAfterSoftmax: return "scale_after_softmax";
    case AttentionBug::CausalOffByOne: return "causal_off_by_one";
    case AttentionBug::LseNoMax: return "lse_no_max";
    case AttentionBug::PRoundedLower: return "p_rounded_lower";
    case AttentionBug::DropLastKeyBlock: return "drop_last_key_block";
    case AttentionBug::Zeros: return "zeros";
  }
  return "?";
}

Support AttentionKernel::can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const {
  const AttentionTraits& t = attention_traits();
  if (s.heads_kv <= 0 || s.heads_q % s.heads_kv != 0)
    return Support::no("heads_q (" + std::to_string(s.heads_q) + ") is not a multiple of heads_kv (" + std::to_string(s.heads_kv) + ")");
  if (s.heads_kv != s.heads_q && !t.grouped_heads) return Support::no("the kernel takes no grouped-query heads");
  if (causal == CausalAlign::TopLeft && !(t.masks & kAttnMaskCausalTopLeft)) return Support::no("the kernel takes no top-left causal mask");
  if (causal == CausalAlign::BottomRight && !(t.masks & kAttnMaskCausalBottomRight))
    return Support::no("the kernel takes no bottom-right causal mask");
  if (additive_mask && !(t.masks & kAttnMaskAdditive)) return Support::no("the kernel takes no additive mask");
  if (!t.head_dims.empty()) {
    bool ok = false;
    for (int d : t.head_dims) ok = ok || d == s.head_dim;
    if (!ok) return Support::no("head_dim " + std::to_string(s.head_dim) + " not taken");
  }
  return Support::yes();
}

std::unique_ptr<AttentionKernel> make_attention_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Attention) return nullptr;
  return std::unique_ptr<AttentionKernel>(static_cast<AttentionKernel*>(k->make().release()));
}

namespace {
std::string ulps_text(const ElemFnError& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g ulp", e.ulps);
  return buf;
}
std::string gemm_text(const KernelTraits& g) {
  return std::string(g.a_operand->tag) + "x" + std::string(g.b_operand->tag) + " " + std::string(g.acc->tag) + " acc (" +
         order_spec(g.sum_order) + ")";
}
}  // namespace

std::string describe_attention_traits(const AttentionTraits& t) {
  std::string s = "attention in " + std::string(t.input->tag) + ", QK^T " + gemm_text(t.qk) + ", ";
  s += t.shift == SoftmaxShift::Online ? "online softmax block " + std::to_string(t.key_block) : std::string(to_string(t.shift)) + " softmax";
  s += ", exp" + std::string(t.exp_form == AttentionExpForm::Base2Folded ? "2 folded " : " ") + ulps_text(t.exp);
  s += ", sum " + std::string(t.sum_acc->tag) + ", P " + std::string(t.pv.a_input->tag) + ", PV " + gemm_text(t.pv);
  s += t.normalize == AttentionNormalize::Reciprocal ? ", reciprocal" : ", divide";
  s += ", out " + std::string(t.out->tag) + "; masked rows " + std::string(to_string(t.masked_rows)) + ", LSE " +
       (t.masked_lse == MaskedLse::PosInf ? "+Inf" : "-Inf");
  return s;
}

}  // namespace fpcert
