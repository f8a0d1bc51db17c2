// kernels/softmax/softmax_backward_kernel.cpp — registry access and descriptions of softmax backward kernels
// (kernels/softmax/softmax_backward_kernel.hpp).
#include "kernels/softmax/softmax_backward_kernel.hpp"

#include <cmath>

namespace fpcert {

std::string_view to_string(SoftmaxBwdBug b) {
  switch (b) {
    case SoftmaxBwdBug::None: return "none";
    case SoftmaxBwdBug::NoDotSubtract: return "no_dot_subtract";
    case SoftmaxBwdBug::DotF16: return "dot_f16";
    case SoftmaxBwdBug::ScaleMissing: return "scale_missing";
    case SoftmaxBwdBug::ScaleTwice: return "scale_twice";
    case SoftmaxBwdBug::LogNoExp: return "log_no_exp";
    case SoftmaxBwdBug::Zeros: return "zeros";
  }
  return "?";
}

std::unique_ptr<SoftmaxBwdKernel> make_softmax_bwd_kernel(const std::string& name) {
  const KernelInfo* k = find_kernel_info(name);
  if (!k || k->operation != Operation::SoftmaxBackward) return nullptr;
  return std::unique_ptr<SoftmaxBwdKernel>(static_cast<SoftmaxBwdKernel*>(k->make().release()));
}

namespace {
std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

std::string describe_softmax_bwd_traits(const SoftmaxBwdTraits& t) {
  const bool soft = t.fn == SoftmaxFn::Softmax;
  std::string s = std::string(to_string(t.fn)) + " backward, y " + std::string(t.y_input->tag) + ", dy " + std::string(t.dy_input->tag) +
                  ", compute " + std::string(t.compute->tag) + ", " + (soft ? "D " : "G ") + std::string(t.dot_acc->tag) + " (" +
                  describe(t.dot_order) + ")";
  if (soft && t.fma) s += ", products fused";
  if (soft && t.expanded) s += t.prod ? ", dy_j y_j rounded to " + std::string(t.prod->tag) + " - y_j D" : std::string(", dy_j y_j - y_j D");
  if (!soft) {
    s += ", exp " + num(t.exp.ulps);
    if (t.exp.ulps_per_x > 0) s += " + floor(" + num(t.exp.ulps_per_x) + "|x|)";
    s += " ulp";
  }
  return s + ", out " + std::string(t.out->tag);
}

SoftmaxBwdArith softmax_bwd_arith(const SoftmaxBwdTraits& t) {
  return {t.fn, t.compute, t.dot_acc, t.dot_order, t.fma, t.exp, t.out, t.expanded, t.expanded ? t.prod : nullptr};
}

}  // namespace fpcert
