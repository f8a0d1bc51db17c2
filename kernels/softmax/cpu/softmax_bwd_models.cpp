// kernels/softmax/cpu/softmax_bwd_models.cpp — CPU models of softmax and log-softmax backward kernels (docs/backward.md,
// "Softmax and log-softmax backward"): fp32 arithmetic through the FPU's float operations (x86-64 SSE: round to nearest
// even, no flush; the runner pins the environment), as PyTorch's CPU and CUDA kernels compute them:
//   softmax:      D = sum_k fl(dy_k y_k) left to right from +0, then dx_j = fl(s fl(y_j fl(dy_j - D)))
//                 (model_softmax_bwd_f16_expanded: fl(s fl(fl(dy_j y_j) - fl(y_j D))), PyTorch's CUDA form)
//   log-softmax:  G = sum_k dy_k left to right from +0 (masked entries left out), then
//                 dx_j = fl(s fl(dy_j - fl(e^{y_j} G))), e^{y_j} the fp32 rounding of glibc's double exp
// (s = 1: no product), then one rounding into the output format. A masked log-softmax entry (y_j = -Inf) gives +0.
// Each model carries the faults of SoftmaxBwdBug in its own arithmetic (with_bug).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/codes.hpp"
#include "kernels/register.hpp"
#include "kernels/softmax/softmax_backward_kernel.hpp"
#include "kernels/softmax/softmax_kernel.hpp"
#include "oracle/round.hpp"

namespace fpcert {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct BwdSpec {
  std::string name;
  SoftmaxFn fn = SoftmaxFn::Softmax;
  const Format* io = &f32;  ///< y, dy and dx
  std::string note;
  bool expanded = false;  ///< softmax: fl(fl(dy_j y_j) - fl(y_j D)), PyTorch's CUDA form
};

float f16_round(float v) { return static_cast<float>(to_double(f16, round_double(f16, static_cast<double>(v), Rounder::nearest(f16)).code)); }

class SoftmaxBwdModel final : public SoftmaxBwdKernel {
 public:
  SoftmaxBwdModel(BwdSpec s, SoftmaxBwdBug bug) : s_(std::move(s)), bug_(bug) {
    t_.fn = s_.fn;
    t_.y_input = s_.io;
    t_.dy_input = s_.io;
    t_.compute = &f32;
    t_.dot_acc = &f32;
    t_.dot_order = ReduceOrder::sequential();
    t_.fma = false;
    t_.exp = exp_error_libm_f32();
    t_.out = s_.io;
    t_.note = s_.note;
    t_.expanded = s_.expanded;
    name_ = bug_ == SoftmaxBwdBug::None ? s_.name : s_.name + "~" + std::string(to_string(bug_));
  }
  const std::string& name() const override { return name_; }
  std::string description() const override { return s_.note + " (" + describe_softmax_bwd_traits(t_) + ")"; }
  Backend backend() const override { return Backend::Cpu; }
  bool is_mutant() const override { return bug_ != SoftmaxBwdBug::None; }
  const SoftmaxBwdTraits& softmax_bwd_traits() const override { return t_; }
  std::unique_ptr<SoftmaxBwdKernel> with_bug(SoftmaxBwdBug bug) const override {
    if (bug == SoftmaxBwdBug::LogNoExp && s_.fn != SoftmaxFn::LogSoftmax) return nullptr;
    return std::make_unique<SoftmaxBwdModel>(s_, bug);
  }

  void run(const SoftmaxBwdOperands& o) override {
    const Format& f = *s_.io;
    const int b = container_bytes(f);
    const auto n = static_cast<std::size_t>(o.cols);
    std::vector<float> y(n), dy(n);
    const bool soft = s_.fn == SoftmaxFn::Softmax;
    const float s = bug_ == SoftmaxBwdBug::ScaleMissing ? 1.0f : bug_ == SoftmaxBwdBug::ScaleTwice ? o.scale * o.scale : o.scale;
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::size_t j = 0; j < n; ++j) {
        const auto jj = static_cast<std::int64_t>(j);
        y[j] = static_cast<float>(to_double(f, load_code(o.y, r * o.ldy + jj, b)));
        dy[j] = static_cast<float>(to_double(f, load_code(o.dy, r * o.lddy + jj, b)));
      }
      float d = 0;  // D or G
      for (std::size_t k = 0; k < n; ++k) {
        if (!soft && y[k] == kNegInf) continue;
        d = add(d, soft ? dy[k] * y[k] : dy[k]);
      }
      if (bug_ == SoftmaxBwdBug::NoDotSubtract) d = 0;
      for (std::size_t j = 0; j < n; ++j) {
        float v;
        if (soft) {
          v = s_.expanded ? dy[j] * y[j] - y[j] * d : y[j] * (dy[j] - d);
        } else if (y[j] == kNegInf) {
          v = 0;  // masked: the logit's gradient is zero
        } else {
          const float e = bug_ == SoftmaxBwdBug::LogNoExp ? y[j] : static_cast<float>(std::exp(static_cast<double>(y[j])));
          v = dy[j] - e * d;
        }
        if (s != 1.0f) v = s * v;
        if (bug_ == SoftmaxBwdBug::Zeros) v = 0;
        store_code(o.dx, r * o.lddx + static_cast<std::int64_t>(j), b,
                   to_container(f, round_double(f, static_cast<double>(v), Rounder::nearest(f)).code));
      }
    }
  }

 private:
  float add(float acc, float t) const { return bug_ == SoftmaxBwdBug::DotF16 ? f16_round(acc + t) : acc + t; }

  BwdSpec s_;
  SoftmaxBwdBug bug_;
  SoftmaxBwdTraits t_;
  std::string name_;
};

}  // namespace

void register_softmax_bwd_models() {
  const std::vector<BwdSpec> specs = {
      {"model_softmax_bwd_f32", SoftmaxFn::Softmax, &f32,
       "softmax backward in fp32: D left to right, y_j (dy_j - D) (PyTorch's _softmax_backward_data on float tensors)"},
      {"model_softmax_bwd_f16", SoftmaxFn::Softmax, &f16, "f16 y, dy and dx, fp32 arithmetic (PyTorch on half tensors)"},
      {"model_softmax_bwd_bf16", SoftmaxFn::Softmax, &bf16, "bf16 y, dy and dx, fp32 arithmetic"},
      {"model_softmax_bwd_f16_expanded", SoftmaxFn::Softmax, &f16,
       "f16, dx_j = dy_j y_j - y_j D in fp32 (the form of PyTorch's CUDA softmax_warp_backward)", true},
      {"model_log_softmax_bwd_f32", SoftmaxFn::LogSoftmax, &f32,
       "log-softmax backward in fp32: G left to right, dy_j - e^{y_j} G (PyTorch's _log_softmax_backward_data)"},
      {"model_log_softmax_bwd_f16", SoftmaxFn::LogSoftmax, &f16, "f16 y, dy and dx, fp32 arithmetic"},
      {"model_log_softmax_bwd_bf16", SoftmaxFn::LogSoftmax, &bf16, "bf16 y, dy and dx, fp32 arithmetic"},
  };
  for (const BwdSpec& s : specs)
    register_kernel(s.name, Backend::Cpu, false, [s] { return std::make_unique<SoftmaxBwdModel>(s, SoftmaxBwdBug::None); },
                    Operation::SoftmaxBackward);
}

}  // namespace fpcert
