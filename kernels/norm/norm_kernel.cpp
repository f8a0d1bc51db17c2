// kernels/norm/norm_kernel.cpp — registry access and descriptions of normalisation kernels (kernels/norm/norm_kernel.hpp).
#include "kernels/norm/norm_kernel.hpp"

#include <fmt/format.h>

namespace fpcert {

std::string_view to_string(NormBug b) {
  switch (b) {
    case NormBug::None: return "none";
    case NormBug::EpsOutsideSqrt: return "eps_outside_sqrt";
    case NormBug::Bessel: return "bessel";
    case NormBug::NoMeanSubtract: return "no_mean_subtract";
    case NormBug::OnePassVariance: return "one_pass_variance";
    case NormBug::F16RowSum: return "f16_row_sum";
    case NormBug::AffineSwapped: return "affine_swapped";
    case NormBug::AffineIgnored: return "affine_ignored";
    case NormBug::Zeros: return "zeros";
    case NormBug::Bf16RowSum: return "bf16_row_sum";
  }
  return "?";
}

std::unique_ptr<NormKernel> make_norm_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Norm) return nullptr;
  return std::unique_ptr<NormKernel>(static_cast<NormKernel*>(k->make().release()));
}

std::string describe_norm_traits(const NormTraits& t) {
  const NormArith& a = t.arith;
  std::string variance = a.kind == NormKind::RmsNorm ? "mean of squares" : std::string(to_string(a.variance));
  if (a.kind == NormKind::LayerNorm && a.variance == NormVariance::WelfordCombined) variance += " over parts " + to_string(a.welford);
  return fmt::format("{} {}, in {}, compute {}, sums {} (any order), rsqrt {} ulp, out {}", to_string(a.kind), variance, t.x_input->tag,
                     a.compute->tag, a.acc->tag, a.rsqrt_ulps, a.out->tag);
}

}  // namespace fpcert
