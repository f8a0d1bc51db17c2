// suites/ops/softmax_bwd/softmax_bwd_faults.cpp — the softmax backward fault injectors
// (suites/ops/softmax_bwd/softmax_bwd_faults.hpp).
#include "suites/ops/softmax_bwd/softmax_bwd_faults.hpp"

#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "suites/mutation/injector_api.hpp"

namespace fpcert {

namespace {

SoftmaxBwdBug bug_of(Fault f) {
  switch (f) {
    case Fault::SbwdNoDotSubtract: return SoftmaxBwdBug::NoDotSubtract;
    case Fault::SbwdDotF16: return SoftmaxBwdBug::DotF16;
    case Fault::SbwdScaleMissing: return SoftmaxBwdBug::ScaleMissing;
    case Fault::SbwdScaleTwice: return SoftmaxBwdBug::ScaleTwice;
    case Fault::SbwdLogNoExp: return SoftmaxBwdBug::LogNoExp;
    case Fault::SbwdZeros: return SoftmaxBwdBug::Zeros;
    default: return SoftmaxBwdBug::None;
  }
}

/// Faults that can be made around a kernel that cannot carry them.
bool black_box(SoftmaxBwdBug b) {
  return b == SoftmaxBwdBug::Zeros || b == SoftmaxBwdBug::ScaleMissing || b == SoftmaxBwdBug::ScaleTwice;
}

/// A mutant under its registry name: the kernel's own faulty arithmetic (inner carries the bug), or the fault made around
/// the kernel (blackbox): the scale's faults by the scale it is called with, the zeros written after the call.
class SoftmaxBwdMutant final : public SoftmaxBwdKernel {
 public:
  SoftmaxBwdMutant(std::unique_ptr<SoftmaxBwdKernel> inner, SoftmaxBwdBug bug, bool blackbox, std::string name)
      : in_(std::move(inner)), bug_(bug), bb_(blackbox), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return in_->description() + " with fault " + std::string(to_string(bug_)); }
  Backend backend() const override { return in_->backend(); }
  MemorySpace memory() const override { return in_->memory(); }
  bool is_mutant() const override { return true; }
  const SoftmaxBwdTraits& softmax_bwd_traits() const override { return in_->softmax_bwd_traits(); }
  Support can_implement(std::int64_t r, std::int64_t c) const override { return in_->can_implement(r, c); }
  void run(const SoftmaxBwdOperands& o) override {
    if (!bb_) return in_->run(o);
    SoftmaxBwdOperands x = o;
    if (bug_ == SoftmaxBwdBug::ScaleMissing) x.scale = 1.0f;
    if (bug_ == SoftmaxBwdBug::ScaleTwice) x.scale = o.scale * o.scale;
    x.stream = api().stream();
    in_->run(x);
    api().synchronize(60'000);
    if (bug_ != SoftmaxBwdBug::Zeros) return;
    const Format& out = *in_->softmax_bwd_traits().out;
    const int ob = container_bytes(out);
    std::vector<std::uint8_t> v(static_cast<std::size_t>(o.rows * o.lddx * ob));
    if (v.empty()) return;
    api().to_host(v.data(), o.dx, v.size());
    for (std::int64_t i = 0; i < o.rows; ++i)
      for (std::int64_t j = 0; j < o.cols; ++j) store_code(v.data(), i * o.lddx + j, ob, 0);
    api().to_device(o.dx, v.data(), v.size());
  }

 private:
  DeviceApi& api() { return injector_api(api_, memory(), in_->name()); }

  std::unique_ptr<SoftmaxBwdKernel> in_;
  SoftmaxBwdBug bug_;
  bool bb_;
  std::string name_;
  std::unique_ptr<DeviceApi> api_;
};

}  // namespace

std::string softmax_bwd_fault_not_applicable(Fault f, const SoftmaxBwdKernel& k) {
  if (fault_info(f).operation != Operation::SoftmaxBackward) return "not a fault of softmax backward kernels";
  const SoftmaxBwdTraits& t = k.softmax_bwd_traits();
  if (f == Fault::SbwdLogNoExp && t.fn != SoftmaxFn::LogSoftmax) return "only a log-softmax backward computes e^{y_j}";
  if (f == Fault::SbwdDotF16 && t.dot_acc->precision() <= f16.precision()) return "the kernel sums D in a format no wider than fp16";
  const SoftmaxBwdBug b = bug_of(f);
  if (!black_box(b) && !k.with_bug(b)) return "the kernel cannot carry this fault in its own arithmetic (a closed kernel)";
  if ((b == SoftmaxBwdBug::ScaleMissing || b == SoftmaxBwdBug::ScaleTwice) && !t.takes_scale && !k.with_bug(b))
    return "the kernel takes no scale (cases with s != 1 are not supported): the scale's faults are made through it";
  return {};
}

std::string register_softmax_bwd_mutant(const std::string& kernel, Fault f) {
  return register_own_or_wrapped_mutant<SoftmaxBwdMutant>(kernel, f, Operation::SoftmaxBackward, "softmax backward", bug_of(f),
                                                          [](const std::string& n) { return make_softmax_bwd_kernel(n); });
}

}  // namespace fpcert
