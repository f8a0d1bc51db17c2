// kernels/elementwise/eltwise_kernel.cpp — the elementwise kernels' registry access and descriptions.
#include "kernels/elementwise/eltwise_kernel.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fpcert {

std::unique_ptr<ElementwiseKernel> make_eltwise_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::Elementwise) return nullptr;
  return std::unique_ptr<ElementwiseKernel>(static_cast<ElementwiseKernel*>(k->make().release()));
}

namespace {
std::string number(double v) {
  const int e = std::ilogb(v);
  if (v > 0 && v < 1e-3 && std::ldexp(1.0, e) != v) return fmt::format("2^{:.2f}", std::log2(v));
  return fmt::format("{:g}", v);
}
}  // namespace

std::string describe_claim(const math::Claim& c) {
  std::string on;
  if (std::isfinite(c.lo) || std::isfinite(c.hi)) on = fmt::format(" on [{:g}, {:g}]", c.lo, c.hi);  // {:g}: 2^-149 as 1.4e-45
  switch (c.kind) {
    case math::ClaimKind::CorrectlyRounded: return "correctly rounded (0 ulp)" + on;
    case math::ClaimKind::Ulp:
      return (c.ulp_slope != 0 ? fmt::format("<= {:g} + floor({:g} |x|) ulp", c.ulps, c.ulp_slope) : fmt::format("<= {:g} ulp", c.ulps)) + on;
    case math::ClaimKind::Absolute:
    case math::ClaimKind::Relative:
      return (c.kind == math::ClaimKind::Absolute ? "abs error <= " : "rel error <= ") + number(c.bound) + on +
             (c.ulps > 0 ? fmt::format(", elsewhere <= {:g} ulp", c.ulps) : std::string());
  }
  return "?";
}

std::string describe_eltwise_traits(const EltwiseTraits& t) {
  const bool two = math::arity(t.fn) == 2;
  std::string s = fmt::format("{}, {}{}{} -> {}, claim {}", math::to_string(t.fn), t.in->tag, two ? " x " : "", two ? t.in->tag : "",
                              t.out->tag, describe_claim(t.claim));
  if (two && (t.x2_lo > 0 || t.x2_hi < std::numeric_limits<double>::infinity()))
    s += fmt::format(" for |x2| in [2^{}, 2^{}]", std::ilogb(t.x2_lo), std::ilogb(t.x2_hi));  // powers of two (CUDA's domains)
  if (two && t.fdividef_large_x2) s += ", 0 (NaN for infinite x1) for 2^126 < |x2| < 2^128";
  if (t.daz || t.ftz) s += t.daz && t.ftz ? ", daz+ftz" : t.daz ? ", daz" : ", ftz";
  if (!t.claim_source.empty()) s += " (" + t.claim_source + ")";
  return s;
}

const math::CodeFormat* code_format(const Format& f) {
  if (&f == &f32 || f.tag == "f32") return &math::kCodeF32;
  if (&f == &f16 || f.tag == "f16") return &math::kCodeF16;
  if (&f == &bf16 || f.tag == "bf16") return &math::kCodeBf16;
  return nullptr;
}

std::string eltwise_traits_problem(const EltwiseTraits& t) {
  if (!code_format(*t.in) || !code_format(*t.out))
    return fmt::format("formats {} -> {}: the elementwise check covers f32, f16 and bf16", t.in->tag, t.out->tag);
  if (math::arity(t.fn) == 2 && (t.in != &f32 || t.out != &f32))
    return fmt::format("{} is binary: the check covers f32 x f32 -> f32 (not {} -> {})", math::to_string(t.fn), t.in->tag, t.out->tag);
  return {};
}

}  // namespace fpcert
