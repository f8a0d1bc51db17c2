// kernels/norm/norm_backward_kernel.cpp — registry access and descriptions of LayerNorm / RMSNorm backward kernels
// (kernels/norm/norm_backward_kernel.hpp).
#include "kernels/norm/norm_backward_kernel.hpp"

#include <fmt/format.h>

namespace fpcert {

std::string_view to_string(NormBwdBug b) {
  switch (b) {
    case NormBwdBug::None: return "none";
    case NormBwdBug::NoMeanTerm: return "no_mean_term";
    case NormBwdBug::NoProjTerm: return "no_proj_term";
    case NormBwdBug::GammaIgnored: return "gamma_ignored";
    case NormBwdBug::RstdSquared: return "rstd_squared";
    case NormBwdBug::DGammaF16: return "dgamma_f16";
    case NormBwdBug::DGammaNoXhat: return "dgamma_no_xhat";
    case NormBwdBug::Zeros: return "zeros";
  }
  return "?";
}

std::unique_ptr<NormBwdKernel> make_norm_bwd_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::NormBackward) return nullptr;
  return std::unique_ptr<NormBwdKernel>(static_cast<NormBwdKernel*>(k->make().release()));
}

std::string describe_norm_bwd_traits(const NormBwdTraits& t) {
  std::string s = fmt::format("{} backward, in {}, compute {}, row sums {} (any order), dx {}", to_string(t.kind), t.input->tag,
                              t.compute->tag, t.acc->tag, t.dx_out->tag);
  if (t.writes_param_grads) {
    const char* what = t.kind == NormKind::LayerNorm ? "dgamma/dbeta" : "dgamma";
    const std::string order = t.param_order.kind == ReduceOrderKind::Unknown ? "any order" : describe(t.param_order);
    if (t.param_determinism == Determinism::RunToRun)
      s += fmt::format("; {} {} atomics ({}), out {}", what, t.param_acc->tag, to_string(t.param_determinism), t.param_out->tag);
    else
      s += fmt::format("; {} {} ({}), out {}", what, t.param_acc->tag, order, t.param_out->tag);
  }
  if (!t.reads_saved) s += "; recomputes mean and rstd (reads_saved = false)";
  return s;
}

}  // namespace fpcert
