// kernels/attention/attention_backward_kernel.cpp — registry access, descriptions and the default can_implement of
// attention backward kernels (kernels/attention/attention_backward_kernel.hpp).
#include "kernels/attention/attention_backward_kernel.hpp"

#include <fmt/format.h>

namespace fpcert {

std::string_view to_string(AttentionBwdBug b) {
  switch (b) {
    case AttentionBwdBug::None: return "none";
    case AttentionBwdBug::DFromWrongO: return "d_from_wrong_o";
    case AttentionBwdBug::NoDSubtract: return "no_d_subtract";
    case AttentionBwdBug::DqScaleMissing: return "dq_scale_missing";
    case AttentionBwdBug::DqScaleTwice: return "dq_scale_twice";
    case AttentionBwdBug::LseWrongBase: return "lse_wrong_base";
    case AttentionBwdBug::GqaNotSummed: return "gqa_not_summed";
    case AttentionBwdBug::DqAtomicsBf16: return "dq_atomics_bf16";
    case AttentionBwdBug::CausalOffByOne: return "causal_off_by_one";
    case AttentionBwdBug::Zeros: return "zeros";
  }
  return "?";
}

Support AttentionBwdKernel::can_implement(const AttentionShape& s, CausalAlign causal, bool additive_mask) const {
  const AttentionBwdTraits& t = attention_bwd_traits();
  return attention_support(s, causal, additive_mask, t.masks, t.head_dims, t.grouped_heads);
}

std::unique_ptr<AttentionBwdKernel> make_attention_bwd_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::AttentionBackward) return nullptr;
  return std::unique_ptr<AttentionBwdKernel>(static_cast<AttentionBwdKernel*>(k->make().release()));
}

namespace {
std::string gemm_acc(const KernelTraits& g) {
  return fmt::format("{}{}", g.acc->tag, g.order.empty() ? "" : " (" + g.order + ")");
}
}  // namespace

std::string describe_attention_bwd_traits(const AttentionBwdTraits& t) {
  std::string e = fmt::format("{:g}", t.exp.ulps);
  if (t.exp.ulps_per_x > 0) e += fmt::format(" + floor({:g}|x|)", t.exp.ulps_per_x);
  std::string s = fmt::format("attention backward in {}, P recomputed {} {} ulp{}, QK^T {} acc {}, P {} / dS {} before their GEMMs", t.input->tag,
                              t.exp_form == AttentionExpForm::Natural ? "exp" : "exp2 folded", e,
                              t.reads_saved ? " from the saved LSE" : " (the forward recomputed: saved O and LSE ignored)",
                              t.qk.exact_products ? "exact products," : "rounded products,", gemm_acc(t.qk), t.pdo.a_input->tag,
                              t.dsk.a_input->tag);
  s += fmt::format(", dP {} acc, dV {} acc, dQ {} acc, dK {} acc, D {}, compute {}, dQ {} {}", t.dov.acc->tag, t.pdo.acc->tag,
                   t.dsk.acc->tag, t.dsq.acc->tag, t.d_acc->tag, t.compute->tag, t.dq_acc->tag,
                   t.dq_determinism == Determinism::RunToRun ? "atomics (run_to_run)" : "(deterministic)");
  s += fmt::format(", out {}/{}/{}; LSE of masked rows {}", t.dq_out->tag, t.dk_out->tag, t.dv_out->tag,
                   t.masked_lse == MaskedLse::PosInf ? "+Inf" : "-Inf");
  return s;
}

}  // namespace fpcert
